"""Bootstrap confidence intervals and paired significance tests over stats matrices.

All tests only sum rows of a segments x stats matrix and re-score, so they are written as matrix
products (resample counts or swap masks times the stats matrix) and cost little more than scoring.
Definitions follow sacrebleu 2.x (``sacrebleu/significance.py``), which follows Koehn (2004) and
Riezler & Maxwell (2005):

* draws: ``numpy.random.default_rng(seed).choice(n, size=(trials, n))`` (bootstrap) and
  ``rng.integers(2, size=(trials, n), dtype=bool)`` (AR) -- the same draws as sacrebleu's for the
  same seed (12345 by default);
* 95 % interval: sort the resampled scores, take the ``trials // 40``-th from each end; sacrebleu
  reports the mean and half the width ("mean +- ci");
* paired bootstrap: ``p = (c + 1) / (trials + 1)``, c = number of resamples where
  |sys - base| minus its mean over resamples exceeds the observed |sys - base|;
* paired approximate randomization: each trial swaps the two systems' rows where the mask is set;
  c = number of trials whose |score(a) - score(b)| exceeds the observed difference.

Difference from sacrebleu: sacrebleu sums resampled stats in float32 and scores float32 values;
here sums are exact (float64 of integer counts) and scores are computed in float64, so intervals
and p-values can differ from sacrebleu's in the last printed digits.
"""
from __future__ import annotations

from typing import Callable, List, Optional, Sequence, Tuple

import numpy as np

from evalpipe.errors import UsageError

Scorer = Callable[[Sequence[float]], float]
RowScorer = Callable[[np.ndarray], np.ndarray]


def row_scorer(metric) -> RowScorer:
    """The metric's scores of many summed vectors: its vectorized ``score_many`` when it has one,
    else ``score`` row by row."""
    many = getattr(metric, "score_many", None)
    if many is not None:
        return lambda sums: np.asarray(many(sums), dtype=np.float64)
    return lambda sums: score_rows(metric.score, sums)


def bootstrap_counts(n: int, trials: int, seed: Optional[int]) -> np.ndarray:
    """A ``trials x n`` matrix: how often each segment is drawn in each resample (sacrebleu's draws)."""
    rng = np.random.default_rng(seed)
    idxs = rng.choice(n, size=(trials, n), replace=True)
    counts = np.empty((trials, n), dtype=np.float64)
    for row, drawn in zip(counts, idxs):  # row by row: small bincounts stay in cache
        row[:] = np.bincount(drawn, minlength=n)
    return counts


def score_rows(score: Scorer, sums: np.ndarray) -> np.ndarray:
    """``score`` of every row of a matrix of summed stats."""
    return np.array([score(row) for row in sums.tolist()], dtype=np.float64)


def confidence_interval(scores: np.ndarray) -> Tuple[float, float, float]:
    """``(mean, low, high)`` of resampled scores: the 2.5 % and 97.5 % order statistics (sacrebleu's)."""
    ordered = np.sort(scores)
    k = len(ordered) // 40
    return float(ordered.mean()), float(ordered[k]), float(ordered[len(ordered) - k - 1])


def p_value(sampled: np.ndarray, observed: float) -> float:
    """``(c + 1) / (trials + 1)`` with c the number of sampled statistics above ``observed``."""
    return (int(np.sum(sampled > observed)) + 1) / (len(sampled) + 1)


def paired_bootstrap(base_score: float, system_score: float, base_boot: np.ndarray, system_boot: np.ndarray) -> float:
    """p-value of the paired bootstrap test from both systems' scores on the same resamples.  Systems whose scores
    are equal on every resample (identical outputs) cannot be told apart: p = 1.  (sacrebleu's test centres the
    differences, all 0, and counts none as extreme: p = 1 / (trials + 1), "significant"; evalpipe's sacrebleu
    drop-in keeps sacrebleu's output.)"""
    if np.array_equal(system_boot, base_boot):
        return 1.0
    diffs = np.abs(system_boot - base_boot)
    return p_value(diffs - diffs.mean(), abs(system_score - base_score))


def ar_masks(n: int, trials: int, seed: Optional[int]) -> np.ndarray:
    """A ``trials x n`` boolean swap mask (sacrebleu's draws)."""
    return np.random.default_rng(seed).integers(2, size=(trials, n), dtype=bool)


def paired_approximate_randomization(score: Scorer, rows: RowScorer, base: np.ndarray, system: np.ndarray,
                                     masks: np.ndarray) -> float:
    """p-value of the paired approximate randomization test."""
    observed = abs(score(base.sum(0).tolist()) - score(system.sum(0).tolist()))
    pos = masks.astype(np.float64)
    neg = 1.0 - pos
    a = rows(pos @ base + neg @ system)
    b = rows(neg @ base + pos @ system)
    return p_value(np.abs(a - b), observed)


def stratified_approximate_randomization(score: Scorer, rows: RowScorer, bases: List[np.ndarray],
                                         systems: List[np.ndarray], trials: int, seed: Optional[int]) -> float:
    """MultEval-style AR over several optimizer runs (Clark et al., 2011).

    Run ``r`` of the system is paired with run ``r`` of the baseline; each trial swaps segments
    between the paired runs with an independent mask per run (stratified by run), and the statistic
    is |mean over runs of score(system) - mean over runs of score(baseline)|.
    """
    if len(bases) != len(systems):
        raise UsageError(f"stratified AR pairs runs by position: the baseline has {len(bases)} run(s), "
                         f"the system {len(systems)}")
    observed = abs(np.mean([score(s.sum(0).tolist()) for s in systems])
                   - np.mean([score(b.sum(0).tolist()) for b in bases]))
    rng = np.random.default_rng(seed)
    total_a = np.zeros(trials)
    total_b = np.zeros(trials)
    for base, system in zip(bases, systems):
        pos = rng.integers(2, size=(trials, base.shape[0]), dtype=bool).astype(np.float64)
        neg = 1.0 - pos
        total_a += rows(pos @ base + neg @ system)
        total_b += rows(neg @ base + pos @ system)
    return p_value(np.abs(total_a - total_b) / len(bases), observed)


def all_pairs_bootstrap(scores: Sequence[float], boots: Sequence[np.ndarray]) -> np.ndarray:
    """The paired bootstrap p-value (:func:`paired_bootstrap`) of every pair of systems, as a symmetric
    matrix (diagonal 1): ``boots[i]`` holds system i's scores on the resamples every system shares."""
    n = len(scores)
    out = np.ones((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            out[i, j] = out[j, i] = paired_bootstrap(scores[i], scores[j], boots[i], boots[j])
    return out


def holm(p_values: np.ndarray) -> np.ndarray:
    """Holm's step-down adjustment (Holm, 1979) of the p-values above the diagonal of a symmetric
    matrix, as a symmetric matrix: with the m p-values sorted, ``adjusted_(k) = max over l <= k of
    min(1, (m - l + 1) p_(l))``.  Rejecting where ``adjusted <= alpha`` keeps the family-wise error
    rate of all the comparisons at alpha."""
    upper = np.triu_indices(len(p_values), 1)
    adjusted = holm_adjust(p_values[upper])
    out = np.ones_like(p_values)
    out[upper] = adjusted
    out.T[upper] = adjusted
    return out


def assign_ranks(sig: np.ndarray, threshold: float) -> List[int]:
    """Significance clusters (MTME's AssignRanks): items sorted best first; item i starts a new rank
    when some item of the current rank beats it with ``sig[earlier, i] <= threshold``."""
    ranks, current, start = [], 1, 0
    for i in range(sig.shape[0]):
        if any(sig[start:i, i] <= threshold):
            current += 1
            start = i
        ranks.append(current)
    return ranks


def holm_adjust(raw: np.ndarray) -> np.ndarray:
    """Holm's adjustment (:func:`holm`) of a family of p-values given as a vector, in its order."""
    raw = np.asarray(raw, dtype=np.float64)
    order = np.argsort(raw, kind="stable")
    steps = np.minimum(1.0, (len(raw) - np.arange(len(raw))) * raw[order])
    adjusted = np.empty_like(raw)
    adjusted[order] = np.maximum.accumulate(steps) if len(raw) else steps
    return adjusted

