"""Soft pairwise accuracy (SPA; Thompson et al., 2024), MTME's ``stats.PairwiseConfidenceError`` (``pce.py``, commit
68a481ae), called ``pce`` in MTME's tasks.

For every pair of systems i < j, a paired permutation test over segments gives the p-value of "i is better
than j": each of ``permutations`` trials flips a fair coin per segment and swaps the two systems' scores where it
comes up tails; p is the share of trials whose difference of summed scores reaches the observed one.  SPA is
1 - mean over pairs of |p(humans) - p(metric)|: 1 when the metric is as sure of every ranking as the humans are.

Exact mode, the only one here: the coins are MTME's -- numpy's ``default_rng(4)``, ``random`` in float32 rounded
to 0/1 and mapped to -1/+1, one row of coins per trial shared by every pair -- and the sums are float32 as MTME
computes them (one matrix product of the coins and the scores), so the p-values are MTME's.  The humans'
p-values are the same for every metric and are computed once per set of human scores by callers that compare
several metrics.

Human scores that are None are removed from every system's row before the test (MTME filters the packed vectors
and reshapes them); the Nones must therefore sit at the same segments in every system, as in the WMT MQM files --
otherwise the rows would have different lengths, which is an error naming the systems.
"""
from __future__ import annotations

from typing import Optional, Sequence, Tuple

import numpy as np

from evalpipe.errors import InputError

SEED = 4
PERMUTATIONS = 1000


def coins(segments: int, permutations: int = PERMUTATIONS, seed: int = SEED) -> np.ndarray:
    """The trials' signs, shape (permutations, segments), float32 -1 / +1, drawn as MTME draws them."""
    signs = np.random.default_rng(seed).random(size=(permutations, segments), dtype=np.float32)
    np.rint(signs, out=signs, casting="same_kind")
    signs *= 2.0
    signs -= 1.0
    return signs


def pairwise_p_values(scores: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """p-values of "system i beats system j" for i < j (NaN elsewhere) from a (systems, segments) score matrix."""
    scores = np.asarray(scores).astype(np.float32)
    totals = np.sum(scores, axis=1)
    partial = np.matmul(signs, scores.T)
    n = scores.shape[0]
    out = np.full((n, n), np.nan)
    for i in range(n):
        for j in range(i + 1, n):
            out[i, j] = np.sum(partial[:, i] - partial[:, j] >= totals[i] - totals[j]) / signs.shape[0]
    return out


def split_rows(gold: Sequence[Optional[float]], metric: Sequence[float], num_sys: int
               ) -> Tuple[np.ndarray, np.ndarray]:
    """(human, metric) score matrices (systems x segments) with the None human scores' segments removed."""
    if len(gold) != len(metric):
        raise InputError(f"{len(gold)} human scores but {len(metric)} metric scores")
    if num_sys < 2 or len(gold) % num_sys:
        raise InputError(f"{len(gold)} scores do not split into {num_sys} systems (SPA needs 2 or more)")
    keep = [g is not None for g in gold]
    per_system = len(gold) // num_sys
    counts = [sum(keep[s * per_system:(s + 1) * per_system]) for s in range(num_sys)]
    if len(set(counts)) > 1:
        raise InputError(f"SPA needs the human scores of every system at the same segments; the systems have "
                         f"{counts} scored segments")
    g = np.array([v for v, k in zip(gold, keep) if k], dtype=np.float64).reshape(num_sys, -1)
    m = np.array([v for v, k in zip(metric, keep) if k], dtype=np.float64).reshape(num_sys, -1)
    return g, m


def soft_pairwise_accuracy(gold: Sequence[Optional[float]], metric: Sequence[float], num_sys: int,
                           permutations: int = PERMUTATIONS, human_p: Optional[np.ndarray] = None) -> float:
    """SPA of packed segment scores (``num_sys`` consecutive rows); ``human_p``: the humans' p-values, if known."""
    g, m = split_rows(gold, metric, num_sys)
    signs = coins(g.shape[1], permutations)
    humans = pairwise_p_values(g, signs) if human_p is None else human_p
    machine = pairwise_p_values(m, signs)
    upper = np.triu_indices(num_sys, 1)
    return float(1.0 - np.mean(np.abs(humans - machine)[upper]))


