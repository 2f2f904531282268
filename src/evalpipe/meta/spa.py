"""Soft pairwise accuracy (SPA; Thompson et al., 2024), MTME's ``stats.PairwiseConfidenceError`` (``pce.py``, commit
68a481ae), called ``pce`` in MTME's tasks.

For every pair of systems i < j, a paired permutation test over segments gives the p-value of "i is better
than j": each of ``permutations`` trials flips a fair coin per segment and swaps the two systems' scores where it
comes up tails; p is the share of trials whose difference of summed scores reaches the observed one.  SPA is
1 - mean over pairs of |p(humans) - p(metric)|: 1 when the metric is as sure of every ranking as the humans are.

The coins are MTME's -- numpy's ``default_rng(4)``, ``random`` in float32 rounded to 0/1 and mapped to -1/+1, one
row of coins per trial shared by every pair -- and the scores are rounded to float32 as MTME rounds them.  What
differs, on purpose: MTME decides each trial on a float32 matrix product, whose rounding depends on the BLAS
kernel the CPU selects, so its p-values (and SPA) move in the 4th decimal from one CPU to another wherever a
trial's permuted difference equals the observed one (systems with equal scores on the flipped segments).
evalpipe decides every trial on the exact sums of those float32 scores (:func:`pairwise_p_values`): the same
value on every CPU, equal to MTME's wherever MTME's rounding did not flip a comparison.  The humans' p-values are
the same for every metric and are computed once per set of human scores by callers that compare several metrics.

Human scores that are None are removed from every system's row before the test (MTME filters the packed vectors
and reshapes them); the Nones must therefore sit at the same segments in every system, as in the WMT MQM files --
otherwise the rows would have different lengths, which is an error naming the systems.
"""
from __future__ import annotations

import math
from functools import lru_cache
from typing import Dict, Hashable, Optional, Sequence, Tuple

import numpy as np

from evalpipe import progress
from evalpipe.errors import InputError
from evalpipe.meta.significance import mtme_trials, rank_order, ranked_matrix, ranking

SEED = 4
PERMUTATIONS = 1000


@lru_cache(maxsize=8)
def coins(segments: int, permutations: int = PERMUTATIONS, seed: int = SEED) -> np.ndarray:
    """The trials' signs, shape (permutations, segments), float32 -1 / +1, drawn as MTME draws them (kept for the
    last few shapes: a significance matrix asks for the same ones again and again; read-only)."""
    signs = np.random.default_rng(seed).random(size=(permutations, segments), dtype=np.float32)
    np.rint(signs, out=signs, casting="same_kind")
    signs *= 2.0
    signs -= 1.0
    signs.flags.writeable = False
    return signs


def pairwise_p_values(scores: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """p-values of "system i beats system j" for i < j (NaN elsewhere) from a (systems, segments) score matrix.

    A trial counts when its permuted difference of sums reaches the observed one.  With F the trial's flipped
    segments (coin -1) the permuted difference is the observed one minus 2 * sum over F of (a_i - a_j), so the trial
    counts exactly when that sum is <= 0.  The sums are taken in float64 and every trial whose sum lies within
    float64's rounding bound of zero is decided on the exact sum (``math.fsum``), so the answer is the exact one
    whatever order a BLAS kernel adds in."""
    x = np.asarray(scores).astype(np.float32).astype(np.float64)
    flipped = np.asarray(signs) < 0
    sums = np.matmul(flipped.astype(np.float64), x.T)  # (trials, systems): each system's flipped sum
    magnitude = np.matmul(flipped.astype(np.float64), np.abs(x).T)
    slack = (x.shape[1] + 4) * np.finfo(np.float64).eps  # any order of the additions stays within this share
    n = x.shape[0]
    out = np.full((n, n), np.nan)
    for i in range(n):
        for j in range(i + 1, n):
            d = sums[:, i] - sums[:, j]
            close = np.flatnonzero(np.abs(d) <= slack * (magnitude[:, i] + magnitude[:, j]))
            reached = d <= 0
            for t in close:  # decided on the exact sum of the flipped scores
                rows = flipped[t]
                reached[t] = math.fsum(np.concatenate([x[i, rows], -x[j, rows]])) <= 0
            out[i, j] = np.count_nonzero(reached) / signs.shape[0]
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


def _filtered(gold: Sequence[Optional[float]], metric: Sequence[float]) -> np.ndarray:
    """The metric's scores where the human score is not None, z-normalized (MTME's ``_ReshapeAndFilter`` with
    average_by none, then ``scipy.stats.zscore``)."""
    v = np.array([m for g, m in zip(gold, metric) if g is not None], dtype=np.float64)
    if np.isnan(v).any():
        raise InputError("the SPA significance test needs numbers: a NaN metric score")
    return (v - v.mean()) / v.std()


def _spa_of(matrix: np.ndarray, human_p: np.ndarray, signs: np.ndarray, upper) -> float:
    return float(1.0 - np.mean(np.abs(human_p - pairwise_p_values(matrix, signs))[upper]))


def permutation_test(gold: Sequence[Optional[float]], metric1: Sequence[float], metric2: Sequence[float],
                     num_sys: int, k: int = 1000, seed: Optional[int] = None, mode: str = "fast",
                     block_size: int = 100, early_min: float = 0.02, early_max: float = 0.5,
                     random_state: Optional[np.random.RandomState] = None, human_p: Optional[np.ndarray] = None,
                     permutations: int = PERMUTATIONS, zscored: Optional[Dict[int, np.ndarray]] = None,
                     observed: Optional[Dict[int, float]] = None) -> dict:
    """``{"p_value", "delta", "trials"}``: is metric2's SPA higher than metric1's?  MTME's PERM-BOTH test with SPA as
    the statistic (``CompareMetricsWithPairwiseConfidenceError``): both metrics' scores (None human scores' segments
    left out) z-normalized, a coin per score swapping them, SPA of each mix.  ``mode="mtme"``: MTME's legacy stream,
    trial by trial, its float32 sums (p-values equal MTME's); ``mode="fast"``: a block of trials drawn at once from
    ``default_rng`` and scored with one matrix product.  The humans' p-values and the coins of SPA's own test are the
    same in every trial: computed once (MTME recomputes both for every SPA).  The fast mode is :func:`_fast_matrix`'s
test of the one pair."""
    from evalpipe.errors import UsageError

    if mode not in ("fast", "mtme"):
        raise UsageError(f"expected mode fast or mtme, got {mode!r}")
    rated = (len(gold) - list(gold).count(None)) // max(num_sys, 1)
    if human_p is None:
        g, _ = split_rows(gold, metric1, num_sys)
        split_rows(gold, metric2, num_sys)
        humans = pairwise_p_values(g, coins(rated, permutations))
    else:
        humans = human_p
    signs = coins(rated, permutations)
    upper = np.triu_indices(num_sys, 1)
    known = zscored or {}
    s1 = known[id(metric1)] if id(metric1) in known else _filtered(gold, metric1)
    s2 = known[id(metric2)] if id(metric2) in known else _filtered(gold, metric2)
    shape = (num_sys, rated)
    seen = observed if observed is not None else {}
    for metric, z in ((metric1, s1), (metric2, s2)):  # SPA of a z-normalized metric: the same in all its tests
        if id(metric) not in seen:
            seen[id(metric)] = _spa_of(z.reshape(shape), humans, signs, upper)
    delta = seen[id(metric2)] - seen[id(metric1)]
    if mode == "mtme":
        rng = random_state if random_state is not None else np.random.RandomState(seed)
        return mtme_trials(lambda mix: _spa_of(mix.reshape(shape), humans, signs, upper), s1, s2, delta, k,
                           block_size, early_min, early_max, rng)
    z = {1: s1.reshape(shape).astype(np.float32), 2: s2.reshape(shape).astype(np.float32)}
    p, trials = _fast_matrix([2, 1], z, {1: seen[id(metric1)], 2: seen[id(metric2)]}, humans, signs, k, seed,
                             block_size, early_min, early_max)
    return {"p_value": float(p[0, 1]), "delta": float(delta), "trials": int(trials[0, 1])}


def _p_counts(u: np.ndarray, upper, permutations: int) -> np.ndarray:
    """(trials, pairs) p-values of "i beats j" from each trial's permuted minus observed sums (trials, systems,
    permutations)."""
    return np.stack([np.count_nonzero(u[:, i] >= u[:, j], axis=1) for i, j in zip(*upper)], axis=1) / permutations


def _fast_matrix(order: Sequence[Hashable], zs: Dict[Hashable, np.ndarray], spa: Dict[Hashable, float],
                 humans: np.ndarray, signs: np.ndarray, k: int, seed: Optional[int], block_size: int,
                 early_min: float = 0.02, early_max: float = 0.5) -> Tuple[np.ndarray, np.ndarray]:
    """Every pair's SPA permutation test at once, block by block: one coin matrix per block is shared by every
    pair of metrics, so that a mix's permuted sums are sums of per-metric products computed once per block --
    W(a) = (coins * z(a)) @ signs.T -- rather than one product per pair (the mix of a and b taking a where the coin
    is 1 sums to W(a) + F(b) - W(b), F(b) = z(b) @ signs.T).  Each pair's test is the same test (its own trials,
    its early stopping at the end of a block); the pairs' p-values are no longer drawn independently of each other,
    which no single comparison sees.  (``matrix``, ``trials``): ``matrix[i, j]`` the p-value of the pair (``order[i]``
    better than ``order[j]``), ``trials[i, j]`` the trials it ran."""
    n, rated = next(iter(zs.values())).shape
    upper = np.triu_indices(n, 1)
    perms = signs.shape[0]
    # a metric's permuted minus observed sums: G(a) for all its scores, U(a) for the part the coins give it
    full = {a: np.matmul(z, signs.T) - z.sum(axis=1)[:, None] for a, z in zs.items()}  # (n, perms)
    hp = humans[upper][None, :]
    m = len(order)
    active = {(i, j) for i in range(m) for j in range(i + 1, m)}
    large = dict.fromkeys(active, 0)
    matrix, trials = np.zeros((m, m)), np.zeros((m, m), dtype=np.int64)
    rng = np.random.default_rng(seed)
    done = 0
    while active and done < k:
        # trials drawn together: up to 250, fewer where every metric's sums would pass ~200 MB of float32
        size = min(block_size - done % block_size, k - done, 250, max(1, 50_000_000 // (len(zs) * n * perms)))
        w = rng.integers(0, 2, size=(size, n, rated), dtype=np.int8).astype(np.float32)
        needed = {order[x] for pair in active for x in pair}
        part = {}
        for a in needed:
            weighted = w * zs[a]
            part[a] = np.matmul(weighted.reshape(size * n, rated), signs.T).reshape(size, n, perms)
            part[a] -= weighted.sum(axis=2)[:, :, None]
        for i, j in active:
            better, worse = order[i], order[j]  # metric 1 = worse, metric 2 = better, as permutation_test
            d = part[worse] - part[better]  # mix 1 = U(worse) + G(better) - U(better); mix 2 = G(worse) - that d
            mix1 = _p_counts(d + full[better], upper, perms)
            d = np.subtract(full[worse], d, out=d)
            mix2 = _p_counts(d, upper, perms)
            c1, c2 = 1.0 - np.abs(hp - mix1).mean(axis=1), 1.0 - np.abs(hp - mix2).mean(axis=1)
            large[i, j] += int(np.count_nonzero(c2 - c1 >= spa[better] - spa[worse]))
        done += size
        progress.step("draws", done, k)
        for pair in sorted(active):
            matrix[pair], trials[pair] = large[pair] / done, done
            if done % block_size == 0 and not early_min <= matrix[pair] <= early_max:
                active.discard(pair)
    return matrix, trials


def significance_matrix(gold: Sequence[Optional[float]], metrics: dict, num_sys: int, k: int = 1000,
                        seed: Optional[int] = None, mode: str = "fast", threshold: float = 0.05,
                        block_size: int = 100) -> dict:
    """Metrics ranked by SPA (the name breaks ties, as MTME) with significance clusters (MTME's
    ``CompareMetricsWithPairwiseConfidenceError``): ``matrix[i][j]`` (i < j) is the p-value of the test that metric i
    has the higher SPA than metric j; in mtme mode every test draws from one legacy generator seeded once."""
    first = next(iter(metrics.values()))
    g, _ = split_rows(gold, first, num_sys)
    signs = coins(g.shape[1])
    humans = pairwise_p_values(g, signs)
    values = {name: soft_pairwise_accuracy(gold, scores, num_sys, human_p=humans) for name, scores in metrics.items()}
    zscored = {id(scores): _filtered(gold, scores) for scores in metrics.values()}  # each metric is in many tests
    if mode == "fast" and k:
        order = rank_order(values)
        upper = np.triu_indices(num_sys, 1)
        zs = {name: zscored[id(metrics[name])].reshape(num_sys, -1).astype(np.float32) for name in order}
        spa = {name: _spa_of(zs[name], humans, signs, upper) for name in order}
        return ranking(order, values, _fast_matrix(order, zs, spa, humans, signs, k, seed, block_size)[0], threshold)
    observed: Dict[int, float] = {}  # and so is the SPA of its z-normalized scores
    return ranked_matrix(values, None if not k else lambda worse, better, **draw: permutation_test(
        gold, metrics[worse], metrics[better], num_sys, k=k, mode=mode, block_size=block_size, human_p=humans,
        zscored=zscored, observed=observed, **draw), seed, mode, threshold)
