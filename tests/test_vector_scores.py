"""Vectorized BLEU / chrF scores equal the one-vector path on real resampled stats and edge rows."""
from __future__ import annotations


import numpy as np
import pytest

from evalpipe import load_metric
from evalpipe.sufficient_stats import resample


@pytest.mark.parametrize("options", [{}, {"smooth_method": "floor"}, {"smooth_method": "add-k"},
                                     {"smooth_method": "none"}, {"effective_order": True},
                                     {"smooth_method": "floor", "smooth_value": 0.3, "effective_order": True}])
def test_bleu_rows(news, options):
    metric = load_metric("bleu", **options)
    hyps = next(iter(news["en-de.systems"].values()))[:300]
    refs = news["en-de.refs"][0][:300]
    stats = np.asarray([metric.stats(h, [r]) for h, r in zip(hyps, refs)], dtype=np.float64)
    sums = np.vstack([resample.bootstrap_counts(len(stats), 200, 1) @ stats, stats[:50]])  # resamples and single segments
    edge = np.array([[0, 5, 0, 0, 0, 0, 0, 0, 0, 0], [3, 3, 3, 2, 1, 0, 3, 2, 1, 0], [2, 4, 1, 0, 0, 0, 2, 1, 0, 0],
                     [1, 1, 1, 0, 0, 0, 1, 0, 0, 0], [4, 9, 2, 1, 0, 0, 4, 3, 2, 1]], dtype=float)
    sums = np.vstack([sums, edge])
    expected = np.array([metric.score(row) for row in sums.tolist()])
    np.testing.assert_allclose(metric.score_many(sums), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("options", [{}, {"word_order": 2}, {"eps_smoothing": True}, {"beta": 1, "char_order": 4}])
def test_chrf_rows(news, options):
    metric = load_metric("chrf", **options)
    hyps = next(iter(news["en-de.systems"].values()))[:200]
    refs = news["en-de.refs"][0][:200]
    rows = [metric.stats(h, [r]) for h, r in zip(hyps, refs)] + [metric.stats("", ["x"]), metric.stats("a", [""])]
    stats = np.asarray(rows, dtype=np.float64)
    sums = np.vstack([resample.bootstrap_counts(len(stats), 100, 2) @ stats, stats])
    expected = np.array([metric.score(row) for row in sums.tolist()])
    np.testing.assert_allclose(metric.score_many(sums), expected, rtol=1e-12, atol=1e-12)
