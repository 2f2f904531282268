"""Soft pairwise accuracy (issue 34, part 1: the value and its p-values) against MTME's ``PairwiseConfidenceError``
and ``pce.compute_pairwise_p_values``: recorded by tests/data/make_mtme_spa_expected.py (MTME's own code, commit in
the file) on the real WMT21 en-de segment-level cases of tests/meta_cases.py and on edge cases."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from evalpipe.errors import InputError
from evalpipe.meta.spa import coins, pairwise_p_values, soft_pairwise_accuracy, split_rows

EXPECTED = json.loads((Path(__file__).parent / "data" / "mtme_spa_expected.json").read_text())
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def cases(news):
    from meta_cases import build_cases

    return {c["id"]: c for c in build_cases()["correlations"]}


def _float32_undecided(rows: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """For every pair i < j, how many trials MTME's float32 matrix product could decide either way: those whose exact
    flipped difference (see pairwise_p_values) lies within float32's rounding bound of the product and the totals,
    so that another BLAS kernel (another CPU) may answer otherwise.  MTME's recorded p-values can differ from the
    exact ones by at most that many trials."""
    x = np.asarray(rows).astype(np.float32).astype(np.float64)
    flipped = (signs < 0).astype(np.float64)
    sums, size = flipped @ x.T, np.abs(x).sum(axis=1)
    bound = (x.shape[1] + 4) * float(np.finfo(np.float32).eps)
    n = x.shape[0]
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            out[i, j] = np.count_nonzero(np.abs(sums[:, i] - sums[:, j]) <= bound * (size[i] + size[j]))
    return out


def _check(expected, gold, metric):
    """evalpipe's exact p-values equal MTME's recorded float32 ones but for the trials float32 rounding decides
    (none at all on most pairs), and SPA moves by no more than those trials can move it."""
    g, m = split_rows(gold, metric, expected["num_sys"])
    signs = coins(g.shape[1])
    upper = np.triu_indices(expected["num_sys"], 1)
    slack = {}
    for rows, key in ((g, "human_p"), (m, "metric_p")):
        want = np.array([[np.nan if v is None else v for v in row] for row in expected[key]])
        got = pairwise_p_values(rows, signs)
        slack[key] = _float32_undecided(rows, signs) / signs.shape[0]
        assert np.all(np.abs(got - want)[upper] <= slack[key][upper] + 1e-12), (key, got - want)
        assert np.isnan(got[np.tril_indices(expected["num_sys"])]).all()
    spa = soft_pairwise_accuracy(gold, metric, expected["num_sys"])
    assert abs(spa - expected["value"]) <= np.mean((slack["human_p"] + slack["metric_p"])[upper]) + 1e-12


def test_p_values_are_exact_whatever_the_summation_order():
    """Each trial is decided on the exact sum of its flipped differences (math.fsum), however the rows are ordered:
    here sums that cancel exactly beside a large score, where float32 and float64 sums in some orders do not."""
    signs = coins(4, 200)
    a = np.array([[0.1, 0.2, 3e7, 0.7], [0.3, 0.0, 3e7, 0.7]], dtype=np.float32)
    for rows in (a, a[::-1], np.ascontiguousarray(a[:, ::-1]), np.ascontiguousarray(a[::-1, ::-1])):
        x = rows.astype(np.float64)
        want = np.mean([math.fsum(np.concatenate([x[0][s < 0], -x[1][s < 0]])) <= 0 for s in signs])
        assert pairwise_p_values(rows, signs)[0, 1] == want


def test_spa_equals_mtme_on_real_data(cases):
    real = [e for e in EXPECTED["cases"] if not e["id"].startswith("edge/")]
    assert len(real) == 2
    for expected in real:
        case = cases[expected["id"]]
        _check(expected, case["gold"], case["metric"])


@pytest.mark.parametrize("expected", [e for e in EXPECTED["cases"] if e["id"].startswith("edge/")],
                         ids=lambda e: e["id"])
def test_spa_equals_mtme_on_edge_cases(expected):
    _check(expected, expected["gold"], expected["metric"])


def test_nones_at_different_segments_are_refused():
    with pytest.raises(InputError, match=r"the systems have \[1, 2\] scored segments"):
        soft_pairwise_accuracy([None, 1.0, 2.0, 3.0], [0.1, 0.2, 0.3, 0.4], 2)


def test_correlate_spa_through_the_command_line(tmp_path):
    import shutil

    from meta_cases import build_cases

    shutil.copytree(ROOT / "tests" / "data" / "wmt21.news", tmp_path / "wmt21.news")
    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)
    evalpipe = str(Path(sys.executable).parent / "evalpipe")
    base = ["--root", str(tmp_path), "--test-set", "wmt21.news", "-l", "en-de"]
    added = subprocess.run([evalpipe, "meta-eval", "add-metric", "chrf", *base], capture_output=True, text=True,
                           timeout=120, env=env)
    assert added.returncode == 0, added.stderr
    scores = tmp_path / "wmt21.news" / "metric-scores" / "en-de" / "chrf-refA.seg.score"
    done = subprocess.run([evalpipe, "meta-eval", "correlate", *base, "--spa", "--scores", str(scores), "-f", "json"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    expected = next(e for e in EXPECTED["cases"] if e["id"] == "seg/chrf/none/pearson/b/0.0")
    case = {c["id"]: c for c in build_cases()["correlations"]}["seg/chrf/none/pearson/b/0.0"]
    assert doc["statistic"] == "spa" and doc["correlation"] == soft_pairwise_accuracy(case["gold"], case["metric"], 8)
    assert abs(doc["correlation"] - expected["value"]) < 1e-3
    g, _ = split_rows(case["gold"], case["metric"], 8)
    assert doc["p_values"]["human"] == [[None if np.isnan(v) else v for v in row]
                                        for row in pairwise_p_values(g, coins(g.shape[1]))]
    refused = subprocess.run([evalpipe, "meta-eval", "correlate", *base, "--spa", "--average", "item", "--scores",
                              str(scores)], capture_output=True, text=True, timeout=120, env=env)
    assert refused.returncode == 2 and "--spa and --average cannot go together" in refused.stderr


MATRIX = json.loads((Path(__file__).parent / "data" / "mtme_spa_matrix_expected.json").read_text())


@pytest.mark.parametrize("run", MATRIX["untied_runs"], ids=lambda r: f"k{r['k']}")
def test_the_significance_matrix_in_mtme_mode_is_mtmes(run):
    """MTME's ``CompareMetricsWithPairwiseConfidenceError`` (recorded by tests/data/make_mtme_spa_matrix_expected.py on
    the subset's segment-level chrF, BLEU, chrF++ and negated TER) with human scores whose ties are broken, so that no
    trial's answer depends on float32 rounding in practice: the same order, SPA values, p-values and ranks, to the bit, on any CPU."""
    from evalpipe.meta.spa import significance_matrix

    got = significance_matrix(MATRIX["untied_gold"], MATRIX["metrics"], MATRIX["num_sys"], k=run["k"],
                              seed=MATRIX["seed"], mode="mtme", block_size=run["block_size"])
    assert got["metrics"] == run["order"]
    assert got["correlations"] == run["values"]
    assert got["matrix"] == run["matrix"]
    assert got["ranks"] == run["ranks"]


@pytest.mark.parametrize("run", MATRIX["runs"], ids=lambda r: f"k{r['k']}")
def test_the_significance_matrix_on_tied_scores_is_mtmes_within_float32_rounding(run):
    """On the real MQM scores (many ties) MTME's float32 product decides some trials one way on the recording CPU and
    the other on another: each SPA value is within what those trials can move, and the clusters are MTME's."""
    from evalpipe.meta.spa import significance_matrix

    got = significance_matrix(MATRIX["gold"], MATRIX["metrics"], MATRIX["num_sys"], k=run["k"], seed=MATRIX["seed"],
                              mode="mtme", block_size=run["block_size"])
    values = dict(zip(got["metrics"], got["correlations"]))
    upper = np.triu_indices(MATRIX["num_sys"], 1)
    for name, want in zip(run["order"], run["values"]):
        gold, rows = split_rows(MATRIX["gold"], MATRIX["metrics"][name], MATRIX["num_sys"])
        signs = coins(gold.shape[1])
        human = _float32_undecided(gold, signs)[upper] / signs.shape[0]
        metric = _float32_undecided(rows, signs)[upper] / signs.shape[0]
        assert abs(values[name] - want) <= np.mean(human + metric) + 1e-12, name
    assert got["ranks"] == run["ranks"]


def test_the_fast_mode_agrees_in_distribution():
    """The fast mode draws other coins (blocks of trials at once, one coin matrix shared by the pairs of a block): its
    p-values over 3,000 trials are within 0.06 of MTME's test over 2,000 trials, both without early stopping --
    MTME's test run by the mtme mode, which equals MTME's code draw for draw (tests above).  The standard error of
    the difference is at most sqrt(0.25/3000 + 0.25/2000) = 0.0144 (p near 0.5): 0.06 is four of them.  (MTME's
    recorded k = 1000 matrix is no reference for this: early stopping ends a pair whose p-value passes 0.5 after
    100 trials, so its 0.56 is 56 of 100.)  Same clusters as MTME's."""
    from evalpipe.meta.spa import significance_matrix

    run = next(r for r in MATRIX["runs"] if r["k"] == 1000)
    args = (MATRIX["gold"], MATRIX["metrics"], MATRIX["num_sys"])
    reference = significance_matrix(*args, k=2000, seed=1, mode="mtme", block_size=2000)
    got = significance_matrix(*args, k=3000, seed=2, mode="fast", block_size=3000)
    assert got["metrics"] == reference["metrics"]  # MTME's order but for chrF and BLEU, within float32's rounding
    assert got["ranks"] == reference["ranks"] == run["ranks"]
    assert np.abs(np.array(got["matrix"]) - np.array(reference["matrix"])).max() < 0.06


def test_meta_eval_matrix_spa_through_the_command(tmp_path):
    import shutil
    import subprocess

    from conftest import child_env, script

    shutil.copytree(Path(__file__).parent / "data" / "wmt21.news", tmp_path / "wmt21.news")
    base = [script("evalpipe"), "meta-eval"]
    common = ["--root", str(tmp_path), "--test-set", "wmt21.news", "-l", "en-de"]
    for metric in ("chrf", "bleu"):
        done = subprocess.run([*base, "add-metric", metric, *common, "-r", "refA"], capture_output=True, text=True,
                              env=child_env(), timeout=300)
        assert done.returncode == 0, done.stderr
    done = subprocess.run([*base, "matrix", *common, "--spa", "-m", "chrf-refA", "bleu-refA", "-k", "100", "-f",
                           "json"], capture_output=True, text=True, env=child_env(), timeout=300)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["statistic"] == "spa" and doc["level"] == "seg" and sorted(doc["metrics"]) == ["bleu-refA", "chrf-refA"]
    for extra, needle in ((["--statistic", "kendall"], "--spa"), (["--level", "sys"], "--level sys")):
        bad = subprocess.run([*base, "matrix", *common, "--spa", "-m", "chrf-refA", "bleu-refA", *extra],
                             capture_output=True, text=True, env=child_env(), timeout=300)
        assert bad.returncode == 2 and needle in bad.stderr and "Traceback" not in bad.stderr, bad.stderr
