"""Correlations between metric and human scores, as pure numpy functions.

Conventions follow MT Metrics Eval (``mt_metrics_eval/stats.py``):

* scores for ``num_sys`` systems are packed system by system into one vector (``sys`` level: one
  score per system; ``seg``/``doc``/``domain``: one per item);
* ``average_by``: ``none`` (one correlation over the whole vector), ``sys`` (one per system's row,
  averaged) or ``item`` (one per item's column, averaged);
* a None human score drops that position from both vectors; rows with fewer than two positions
  left are skipped; NaN correlations (constant vectors) are left out of the average (or counted as
  0 with ``replace_nans_with_zeros``); Pearson and Spearman of a constant vector are NaN.

Statistics: Pearson; Spearman (Pearson of average ranks); Kendall from the counts of concordant,
discordant and tied pairs -- variants ``b`` (tau-b), ``c`` (tau-c), ``23`` and ``acc23`` (Deutsch
et al., 2023, with ``epsilon``: metric differences of at most epsilon count as ties); pairwise
``accuracy`` (MTME's Agreement: the share of pairs whose human and metric differences have the same
sign, ties included).
"""
from __future__ import annotations

import math
from enum import IntEnum
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from evalpipe.errors import InputError, UsageError

CHUNK = 2048


class Pair(IntEnum):
    """How a pair of items compares under the human and the metric scores.  The one representation of
    pair outcomes: :func:`pair_counts` returns counts in this order, tie calibration and the batched
    permutation test (:mod:`evalpipe.meta.significance`) index tables with it."""

    CONCORDANT = 0
    DISCORDANT = 1
    METRIC_TIE = 2  # tied in the metric only
    HUMAN_TIE = 3  # tied in the human scores only
    BOTH_TIED = 4


def pearson(gold: Sequence[float], metric: Sequence[float]) -> float:
    """Pearson's r; NaN when either vector is constant."""
    x = np.asarray(metric, dtype=np.float64)
    y = np.asarray(gold, dtype=np.float64)
    if len(x) < 2 or np.all(x == x[0]) or np.all(y == y[0]):
        return math.nan
    xm, ym = x - x.mean(), y - y.mean()
    r = float(np.dot(xm / np.linalg.norm(xm), ym / np.linalg.norm(ym)))
    return max(-1.0, min(1.0, r))


def ranks(values: Sequence[float]) -> np.ndarray:
    """Ranks 1..n with ties given their average rank."""
    v = np.asarray(values, dtype=np.float64)
    order = np.argsort(v, kind="mergesort")
    sorted_v = v[order]
    starts = np.r_[True, sorted_v[1:] != sorted_v[:-1]]
    group = np.cumsum(starts) - 1
    first = np.flatnonzero(starts)
    last = np.r_[first[1:], len(v)] - 1
    avg = (first + last) / 2.0 + 1
    out = np.empty(len(v))
    out[order] = avg[group]
    return out


def spearman(gold: Sequence[float], metric: Sequence[float]) -> float:
    """Spearman's rho: Pearson of average ranks (constant ranks: NaN, as for a constant vector)."""
    return pearson(ranks(gold), ranks(metric))


def pair_counts(gold: Sequence[float], metric: Sequence[float], epsilon: float = 0.0) -> Tuple[int, int, int, int, int]:
    """Counts of every :class:`Pair` outcome over all pairs: (concordant, discordant, tied in metric
    only, tied in gold only, tied in both).

    A metric difference of at most ``epsilon`` is a tie.  Pairs are compared in blocks, so memory
    stays bounded for long vectors.
    """
    x = np.asarray(metric, dtype=np.float64)
    y = np.asarray(gold, dtype=np.float64)
    n = len(x)
    con = t_x = t_y = t_xy = 0
    for start in range(0, n, CHUNK):
        xi, yi = x[start:start + CHUNK, None], y[start:start + CHUNK, None]
        dx = xi - x[None, :]
        dy = yi - y[None, :]
        # only pairs (i, j) with j > i
        upper = np.arange(start, start + len(xi))[:, None] < np.arange(n)[None, :]
        x_tie = np.abs(dx) <= epsilon
        y_tie = dy == 0
        sx = np.where(x_tie, 0, np.sign(dx))
        con += int(np.sum(upper & (sx * np.sign(dy) > 0)))
        t_x += int(np.sum(upper & x_tie & ~y_tie))
        t_y += int(np.sum(upper & ~x_tie & y_tie))
        t_xy += int(np.sum(upper & x_tie & y_tie))
    total = n * (n - 1) // 2
    return con, total - con - t_x - t_y - t_xy, t_x, t_y, t_xy


def kendall_from_counts(con: Any, dis: Any, t_x: Any, t_y: Any, t_xy: Any, variant: str,
                        size: int = 0, min_classes: int = 0) -> Any:
    """Kendall's tau variant from pair counts (MTME's formulas); counts may be numpy arrays (one tau each)."""
    x_tie, y_tie = t_x + t_xy, t_y + t_xy
    total = con + dis + t_x + t_y + t_xy
    if variant in ("b", "c"):
        undefined = (x_tie == total) | (y_tie == total)
        with np.errstate(invalid="ignore", divide="ignore"):
            tau = (con - dis) / np.sqrt(total - x_tie) / np.sqrt(total - y_tie) if variant == "b" else \
                2 * (con - dis) / (size ** 2 * (min_classes - 1) / min_classes)
        return np.where(undefined, np.nan, tau)
    if variant == "23":
        return (con + t_xy - dis - t_x - t_y) / total
    if variant == "acc23":
        return (con + t_xy) / total
    raise UsageError(f"unknown Kendall variant {variant!r}; expected b, c, 23 or acc23")


def kendall(gold: Sequence[float], metric: Sequence[float], variant: str = "b", epsilon: float = 0.0) -> float:
    """Kendall's tau (``variant`` b, c, 23 or acc23; ``epsilon`` ties close metric scores)."""
    if epsilon < 0:
        raise UsageError(f"epsilon must be non-negative, got {epsilon}")
    if epsilon > 0 and variant == "c":
        raise UsageError("a non-zero epsilon is not defined for tau-c")
    counts = pair_counts(gold, metric, epsilon)
    classes = min(len(set(np.asarray(metric).tolist())), len(set(np.asarray(gold).tolist())))
    return float(kendall_from_counts(*counts, variant=variant, size=len(gold), min_classes=classes))


def accuracy(gold: Sequence[float], metric: Sequence[float]) -> float:
    """Pairwise ranking agreement: share of pairs where sign(gold diff) == sign(metric diff) (Kendall acc23
    without epsilon); NaN without pairs."""
    return kendall(gold, metric, "acc23") if len(gold) > 1 else math.nan


STATISTICS = {"pearson": pearson, "spearman": spearman, "kendall": kendall, "accuracy": accuracy}


def reshape(vector: Sequence, num_sys: int, average_by: str) -> np.ndarray:
    """Rows to correlate: one row (none), one per system (sys), one per item (item)."""
    arr = np.asarray(vector, dtype=object)
    if average_by == "none":
        return arr.reshape(1, -1)
    if average_by == "sys":
        return arr.reshape(num_sys, -1)
    if average_by == "item":
        return arr.reshape(num_sys, -1).T
    raise UsageError(f"expected average_by none, sys or item; got {average_by!r}")


def groups(gold: Sequence[Optional[float]], metric: Sequence[float], num_sys: int, average_by: str
           ) -> List[Tuple[np.ndarray, np.ndarray]]:
    """(gold row, metric row) pairs with None human scores removed; rows left with < 2 kept out."""
    if len(gold) != len(metric):
        raise InputError(f"{len(gold)} human scores but {len(metric)} metric scores")
    if num_sys < 1 or len(gold) % num_sys:
        raise InputError(f"{len(gold)} scores do not split into {num_sys} systems")
    out = []
    for g, m in zip(reshape(gold, num_sys, average_by), reshape(metric, num_sys, average_by)):
        keep = np.array([v is not None for v in g], dtype=bool)
        if keep.sum() < 2:
            continue
        out.append((g[keep].astype(np.float64), m[keep].astype(np.float64)))
    return out


def average_correlation(gold: Sequence[Optional[float]], metric: Sequence[float], num_sys: int,
                        average_by: str = "none", statistic: str = "pearson",
                        replace_nans_with_zeros: bool = False, **options) -> Tuple[float, int]:
    """(average correlation, number of rows averaged) -- 0 and 0 when no row is usable."""
    if statistic not in STATISTICS:
        raise UsageError(f"unknown statistic {statistic!r}; expected one of {', '.join(STATISTICS)}")
    fn: Callable = STATISTICS[statistic]
    total, n = 0.0, 0
    for g, m in groups(gold, metric, num_sys, average_by):
        value = fn(g, m, **options)
        if not math.isnan(value):
            total += value
            n += 1
        elif replace_nans_with_zeros:
            n += 1
    return (total / n, n) if n else (0.0, 0)


def chance_accuracy(gold: Sequence[float]) -> float:
    """Expected pairwise accuracy of a random metric with no ties: the share of non-tied gold pairs
    times one half, plus nothing for gold ties (a metric without ties never matches them)."""
    y = np.asarray([v for v in gold if v is not None], dtype=np.float64)
    n = len(y)
    if n < 2:
        return math.nan
    _, counts = np.unique(y, return_counts=True)
    ties = int(sum(c * (c - 1) // 2 for c in counts))
    total = n * (n - 1) // 2
    return 0.5 * (total - ties) / total


def kendall_with_ties_opt(gold: Sequence[Optional[float]], metric: Sequence[float], num_sys: int = 1,
                          average_by: str = "none", variant: str = "acc23", sample_rate: float = 1.0,
                          random_state: Optional[np.random.RandomState] = None) -> Tuple[float, float]:
    """(best average tau, its tie threshold epsilon): Kendall 23 / acc23 with tie calibration.

    Deutsch et al. (2023), MTME's ``KendallWithTiesOpt`` / ``tau_optimization``: every pair of
    positions in a row (None human scores dropped) is a candidate; pairs are sorted by their metric
    difference and turned into metric ties one by one; the threshold with the highest average tau
    over rows wins (the first on ties; threshold 0 means no new ties).  ``sample_rate`` < 1 keeps each
    pair with that probability, drawing one ``random_sample`` per pair in MTME's order from
    ``random_state`` (MTME uses the global legacy generator).
    """
    if variant not in ("23", "acc23"):
        raise UsageError(f"tie calibration is defined for the 23 and acc23 variants, got {variant!r}")
    if not 0 < sample_rate <= 1:
        raise UsageError(f"sample_rate must be in (0, 1], got {sample_rate}")
    rng = random_state if random_state is not None else np.random.mtrand._rand
    rows_g, rows_m = reshape(gold, num_sys, average_by), reshape(metric, num_sys, average_by)
    pairs = []  # (diff, row, its Pair outcome, its outcome once the metric ties it)
    for r, (g, m) in enumerate(zip(rows_g, rows_m)):
        kept = [(a, b) for a, b in zip(g, m) if a is not None and b is not None]
        for i in range(len(kept)):
            for j in range(i + 1, len(kept)):
                if sample_rate < 1.0 and not rng.random_sample() <= sample_rate:
                    continue
                (h1, m1), (h2, m2) = kept[i], kept[j]
                if h1 == h2:
                    outcome = Pair.BOTH_TIED if m1 == m2 else Pair.HUMAN_TIE
                elif m1 == m2:
                    outcome = Pair.METRIC_TIE
                else:
                    outcome = Pair.CONCORDANT if (h1 > h2) == (m1 > m2) else Pair.DISCORDANT
                pairs.append((abs(m1 - m2), r, outcome, Pair.BOTH_TIED if h1 == h2 else Pair.METRIC_TIE))
    if not pairs:
        return 0.0, 0.0
    counts: Dict[int, List[int]] = {}
    for _, r, outcome, _ in pairs:
        counts.setdefault(r, [0, 0, 0, 0, 0])[outcome] += 1

    def tau(c: List[int]) -> float:
        return kendall_from_counts(*c, variant=variant)

    # MTME's running sum, in its order, so the arg-max (and ties between thresholds) is the same
    total_tau = sum(tau(c) for c in counts.values())
    thresholds, taus = [0.0], [total_tau / len(counts)]
    for d, r, outcome, tie_outcome in sorted(pairs, key=lambda p: p[0]):
        c = counts[r]
        total_tau -= tau(c)
        c[outcome] -= 1
        c[tie_outcome] += 1
        total_tau += tau(c)
        if thresholds[-1] == d:
            taus[-1] = total_tau / len(counts)
        else:
            thresholds.append(d)
            taus.append(total_tau / len(counts))
    best = int(np.nanargmax(taus))
    return float(taus[best]), float(thresholds[best])
