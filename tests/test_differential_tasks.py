"""Differential tests of issue 34's statistics on generated inputs that hunt for edges: ties everywhere, None human
scores, constant rows, two systems, one-system tasks.

Each property is compared with a restatement of the definition (MT Metrics Eval 68a481ae; no MTME code):

* SPA (``pce.py``'s docstring, Thompson et al. 2024): 1000 sign vectors from ``numpy.random.default_rng(4)``'s
  float32 uniforms rounded to 0/1 and mapped to -1/+1; for systems i < j, p = share of sign vectors whose signed
  float32 sum difference reaches the observed float32 total difference; SPA = 1 - mean |p_human - p_metric| over the
  pairs; segments with a None human score leave every system.
* PDP (``AverageCorrelation._enumerate_pairwise_diffs``): every column minus every column within each row, both
  orders and the diagonal, None human scores' differences dropped, one ``scipy.stats.pearsonr`` over all of them.
* Pooled accuracy (``data.CompareMetricsWithGlobalAccuracy``'s ``_Accuracy`` with ``stats.Agreement``): per language
  pair, pairs of systems with both human scores, ``sign`` of the human and metric differences equal; summed.
* Task-set averages (``TaskSetResults``): weighted sums of ranks and of values mapped to [0, 1] over the metrics in
  every task; ``AssignWeights``'s recursive even split.
"""
from __future__ import annotations

import itertools
from fractions import Fraction
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from evalpipe.errors import InputError
from evalpipe.meta.correlation import pairwise_difference_pearson
from evalpipe.meta.pooled import Part, pooled_accuracy
from evalpipe.meta.spa import soft_pairwise_accuracy
from evalpipe.meta.tasks import assign_weights, average_corrs, average_ranks, make_task

VALUES = st.sampled_from([0.0, 0.5, 1.0, 2.0, -1.0, 0.1, 0.2, 0.3])  # few values: ties, and float32 sums that meet


def _spa_restated(gold, metric, num_sys):
    """SPA as its definition says, in exact arithmetic (fractions) on the float32 scores: a trial counts when its
    permuted difference of sums reaches the observed one."""
    segs = len(gold) // num_sys
    keep = [k for k in range(segs) if gold[k] is not None]
    g = [[Fraction(float(np.float32(gold[s * segs + k]))) for k in keep] for s in range(num_sys)]
    m = [[Fraction(float(np.float32(metric[s * segs + k]))) for k in keep] for s in range(num_sys)]
    signs = np.rint(np.random.default_rng(4).random(size=(1000, len(keep)), dtype=np.float32)) * 2 - 1

    def p(x):
        return {(i, j): np.mean([sum(c * (a - b) for c, a, b in zip(row, x[i], x[j])) >= sum(x[i]) - sum(x[j])
                                 for row in signs.astype(int).tolist()])
                for i, j in itertools.combinations(range(num_sys), 2)}

    ph, pm = p(g), p(m)
    return 1 - np.mean([abs(ph[k] - pm[k]) for k in ph])


@st.composite
def spa_cases(draw):
    num_sys = draw(st.integers(2, 5))
    segs = draw(st.integers(1, 9))
    rated = draw(st.lists(st.booleans(), min_size=segs, max_size=segs).filter(any))
    gold = [draw(VALUES) if rated[k] else None for s in range(num_sys) for k in range(segs)]
    metric = draw(st.one_of(st.just([1.0] * (num_sys * segs)),  # a constant metric
                            st.lists(VALUES, min_size=num_sys * segs, max_size=num_sys * segs)))
    return gold, metric, num_sys


@given(spa_cases())
def test_spa_equals_its_definition(case):
    gold, metric, num_sys = case
    assert soft_pairwise_accuracy(gold, metric, num_sys) == pytest.approx(_spa_restated(gold, metric, num_sys),
                                                                          abs=1e-12)


def test_spa_refuses_one_system_and_misaligned_none():
    with pytest.raises(InputError, match="SPA needs 2 or more"):
        soft_pairwise_accuracy([1.0, 2.0], [1.0, 2.0], 1)
    with pytest.raises(InputError, match="same segments"):
        soft_pairwise_accuracy([1.0, None, 1.0, 2.0], [1.0, 2.0, 3.0, 4.0], 2)


@st.composite
def pdp_cases(draw):
    num_sys = draw(st.integers(2, 4))
    items = draw(st.integers(1, 5))
    gold = draw(st.lists(st.one_of(st.none(), VALUES), min_size=num_sys * items, max_size=num_sys * items))
    metric = draw(st.lists(VALUES, min_size=num_sys * items, max_size=num_sys * items))
    return gold, metric, num_sys, draw(st.sampled_from(["none", "item", "sys"]))


def _pdp_restated(gold, metric, num_sys, average_by):
    items = len(gold) // num_sys
    g = [gold[s * items:(s + 1) * items] for s in range(num_sys)]
    m = [metric[s * items:(s + 1) * items] for s in range(num_sys)]
    rows = {"none": [([v for r in g for v in r], [v for r in m for v in r])],
            "sys": list(zip(g, m)),
            "item": [([g[s][k] for s in range(num_sys)], [m[s][k] for s in range(num_sys)]) for k in range(items)]}
    hd, md = [], []
    for gr, mr in rows[average_by]:
        for i in range(len(gr)):
            for j in range(len(gr)):
                if gr[i] is not None and gr[j] is not None:
                    hd.append(gr[j] - gr[i])
                    md.append(mr[j] - mr[i])
    if len(hd) < 2 or len(set(hd)) < 2 or len(set(md)) < 2:
        return None  # undefined (constant differences): evalpipe reports NaN or no rows, scipy warns
    return stats.pearsonr(hd, md)[0]


@given(pdp_cases())
def test_pdp_equals_its_definition(case):
    gold, metric, num_sys, average_by = case
    if average_by == "sys" and len(gold) // num_sys < 2:
        return  # one item per system: a row of one score, refused (tested below)
    expected = _pdp_restated(gold, metric, num_sys, average_by)
    value, rows = pairwise_difference_pearson(gold, metric, num_sys, average_by)
    if expected is None:
        assert rows == 0 or math.isnan(value)
    else:
        assert value == pytest.approx(expected, abs=1e-12)


@st.composite
def pooled_cases(draw):
    parts, metric = [], []
    for n in draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)):
        parts.append(draw(st.lists(st.one_of(st.none(), VALUES), min_size=n, max_size=n)))
        metric += draw(st.lists(VALUES, min_size=n, max_size=n))
    return parts, metric


@given(pooled_cases())
def test_pooled_accuracy_equals_pair_counting(case):
    golds, metric = case
    agree = pairs = start = 0
    for g in golds:
        m = metric[start:start + len(g)]
        for a, b in itertools.combinations(range(len(g)), 2):
            if g[a] is not None and g[b] is not None:
                agree += np.sign(g[a] - g[b]) == np.sign(m[a] - m[b])
                pairs += 1
        start += len(g)
    parts = [Part(f"lp{i}", g) for i, g in enumerate(golds)]
    if not pairs:  # one-system parts only (or nothing rated): refused in one line
        with pytest.raises(InputError, match="no pair of systems"):
            pooled_accuracy(parts, metric)
    else:
        assert pooled_accuracy(parts, metric) == (agree / pairs, pairs)


@st.composite
def task_results(draw):
    names = ["A", "B", "C", "D"]
    results, tasks = [], []
    for _ in range(draw(st.integers(1, 4))):
        present = draw(st.lists(st.sampled_from(names), min_size=1, max_size=4, unique=True))
        corr_fcn = draw(st.sampled_from(["pearson", "accuracy", "pce", "KendallWithTiesOpt", "kendall"]))
        lang = "en-de,zh-en" if corr_fcn == "accuracy" else draw(st.sampled_from(["en-de", "zh-en"]))
        tasks.append(make_task({"lang": lang, "corr_fcn": corr_fcn, "k": 0}))
        values = draw(st.lists(st.floats(-1, 1), min_size=len(present), max_size=len(present)))
        ranks = sorted(draw(st.lists(st.integers(1, 4), min_size=len(present), max_size=len(present))))
        results.append({"metrics": present, "correlations": values, "ranks": ranks})
    return tasks, results


@given(task_results())
def test_task_set_averages_equal_their_definition(case):
    tasks, results = case
    weights = assign_weights(tasks, ["lang"])
    assert sum(weights) == pytest.approx(1.0)
    shares = {lang: sum(w for w, t in zip(weights, tasks) if t.lang == lang) for lang in {t.lang for t in tasks}}
    assert all(v == pytest.approx(1 / len(shares)) for v in shares.values())
    every = set.intersection(*(set(r["metrics"]) for r in results))
    ranks, corrs = average_ranks(results, weights), average_corrs(results, tasks, weights)
    assert set(ranks) == set(corrs) == every
    for m in every:
        want_rank = sum(w * r["ranks"][r["metrics"].index(m)] for w, r in zip(weights, results))
        b = [t.range for t in tasks]
        want_corr = sum(w * (r["correlations"][r["metrics"].index(m)] - lo) / (hi - lo)
                        for w, r, (lo, hi) in zip(weights, results, b))
        assert ranks[m] == pytest.approx(want_rank) and corrs[m] == pytest.approx(want_corr)
    assert list(ranks.values()) == sorted(ranks.values())
    assert list(corrs.values()) == sorted(corrs.values(), reverse=True)
