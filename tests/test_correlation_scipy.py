"""The vectorized correlations equal scipy's on real data (WMT21 en-de MQM against metric scores)."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from conftest import NEWS
from evalpipe import load_metric
from evalpipe.meta.correlation import Pair, kendall, pair_counts, pearson, spearman
from evalpipe.meta.evalset import EvalSet


@pytest.fixture(scope="module")
def vectors():
    evs = EvalSet(str(NEWS.parent), NEWS.name, "en-de")
    gold_seg, gold_sys = evs.Scores("seg", "mqm"), evs.Scores("sys", "mqm")
    chrf = load_metric("chrf")
    ref = evs.refs["refA"]
    seg_h, seg_m = [], []
    for system in sorted(s for s in gold_seg if s in evs.sys_outputs):
        for hyp, r, g in zip(evs.sys_outputs[system], ref, gold_seg[system]):
            if g is not None:
                seg_h.append(g)
                seg_m.append(chrf.score(chrf.stats(hyp, [r])))
    bleu = evs.Scores("sys", "BLEU-refA")
    systems = sorted(s for s in gold_sys if s in bleu)
    return {"seg": (np.array(seg_h), np.array(seg_m)),
            "sys": (np.array([gold_sys[s][0] for s in systems]), np.array([bleu[s][0] for s in systems]))}


@pytest.mark.parametrize("level", ["seg", "sys"])
def test_pearson_spearman_kendall_equal_scipy(vectors, level):
    gold, metric = vectors[level]
    assert len(gold) > 7
    assert pearson(gold, metric) == pytest.approx(stats.pearsonr(metric, gold).statistic, rel=1e-12, abs=1e-15)
    assert spearman(gold, metric) == pytest.approx(stats.spearmanr(metric, gold).statistic, rel=1e-12, abs=1e-15)
    for variant in ("b", "c"):
        expected = stats.kendalltau(metric, gold, variant=variant).statistic
        assert kendall(gold, metric, variant) == pytest.approx(expected, rel=1e-12, abs=1e-15), variant


def test_pair_outcomes_are_one_representation(vectors):
    gold, metric = vectors["seg"]
    counts = dict(zip(Pair, pair_counts(gold[:300], metric[:300])))
    n = 300
    assert sum(counts.values()) == n * (n - 1) // 2
    i, j = np.triu_indices(n, 1)
    dg, dm = gold[:300][i] - gold[:300][j], metric[:300][i] - metric[:300][j]
    assert counts[Pair.HUMAN_TIE] == int(np.sum((dg == 0) & (dm != 0)))
    assert counts[Pair.METRIC_TIE] == int(np.sum((dm == 0) & (dg != 0)))
    assert counts[Pair.BOTH_TIED] == int(np.sum((dm == 0) & (dg == 0)))
    assert counts[Pair.CONCORDANT] == int(np.sum(dg * dm > 0))
