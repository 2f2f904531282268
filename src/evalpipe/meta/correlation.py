"""Correlations between metric and human scores, as pure numpy functions.

Conventions follow MT Metrics Eval (``mt_metrics_eval/stats.py``):

* scores for ``num_sys`` systems are packed system by system into one vector (``sys`` level: one
  score per system; ``seg``/``doc``/``domain``: one per item);
* ``average_by``: ``none`` (one correlation over the whole vector), ``sys`` (one per system's row,
  averaged) or ``item`` (one per item's column, averaged);
* a None human score drops that position from both vectors; rows with fewer than two positions
  left are skipped; NaN correlations (constant vectors) are left out of the average (or counted as
  0 with ``replace_nans_with_zeros``); Pearson and Spearman of a constant vector are NaN;
* a row holding a NaN score (human or metric) has a NaN correlation, every statistic alike (scipy's
  ``nan_policy="propagate"``, which MTME's rows get), so it leaves the average as any NaN row does.

Statistics: Pearson; Spearman (Pearson of average ranks); Kendall from the counts of concordant,
discordant and tied pairs -- variants ``b`` (tau-b), ``c`` (tau-c), ``23`` and ``acc23`` (Deutsch
et al., 2023, with ``epsilon``: metric differences of at most epsilon count as ties); pairwise
``accuracy`` (MTME's Agreement: the share of pairs whose human and metric differences have the same
sign, ties included).
"""
from __future__ import annotations

import math
from enum import IntEnum
from typing import Any, List, Optional, Sequence, Tuple

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


# the numerator weights of the linear Kendall variants, in Pair order: tau = w . counts / all pairs of the row
LINEAR = {"acc23": (1, 0, 0, 0, 1), "23": (1, -1, -1, -1, 1)}


def pearson(gold: Sequence[float], metric: Sequence[float]) -> float:
    """Pearson's r; NaN when either vector is constant or holds a NaN."""
    x = np.asarray(metric, dtype=np.float64)
    y = np.asarray(gold, dtype=np.float64)
    if len(x) < 2 or np.all(x == x[0]) or np.all(y == y[0]) or np.isnan(x).any() or np.isnan(y).any():
        return math.nan
    xm, ym = x - x.mean(), y - y.mean()
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        xm, ym = xm / np.abs(xm).max(), ym / np.abs(ym).max()  # scaled first, as scipy: tiny values do not underflow
        r = float(np.dot(xm / np.linalg.norm(xm), ym / np.linalg.norm(ym)))
    return math.nan if math.isnan(r) else max(-1.0, min(1.0, r))


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
    """Spearman's rho: the correlation coefficient of average ranks, computed as scipy's ``spearmanr`` computes it
    (``numpy.corrcoef`` of the two rank columns), so that equal rhos of different rank vectors are equal to the last
    bit as MTME sees them (constant ranks: NaN, as for a constant vector; NaN scores: NaN)."""
    g, m = np.asarray(gold, dtype=np.float64), np.asarray(metric, dtype=np.float64)
    if len(g) < 2 or np.isnan(g).any() or np.isnan(m).any() or np.all(g == g[0]) or np.all(m == m[0]):
        return math.nan
    with np.errstate(invalid="ignore", divide="ignore"):
        r = float(np.corrcoef(np.column_stack((ranks(g), ranks(m))), rowvar=False)[1, 0])
    return math.nan if math.isnan(r) else r


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
                2 * np.asarray(con - dis, dtype=float) / (np.asarray(size, dtype=float) ** 2 * (
                    np.asarray(min_classes, dtype=float) - 1) / min_classes)  # one class: 0/0, NaN (scipy's value)
        return np.where(undefined, np.nan, tau)
    if variant == "23":
        return (con + t_xy - dis - t_x - t_y) / total
    if variant == "acc23":
        return (con + t_xy) / total
    raise UsageError(f"unknown Kendall variant {variant!r}; expected b, c, 23 or acc23")


def kendall(gold: Sequence[float], metric: Sequence[float], variant: str = "b", epsilon: float = 0.0) -> float:
    """Kendall's tau (``variant`` b, c, 23 or acc23; ``epsilon`` ties close metric scores); NaN scores: NaN."""
    if epsilon < 0:
        raise UsageError(f"epsilon must be non-negative, got {epsilon}")
    if epsilon > 0 and variant == "c":
        raise UsageError("a non-zero epsilon is not defined for tau-c")
    if np.isnan(np.asarray(gold, dtype=np.float64)).any() or np.isnan(np.asarray(metric, dtype=np.float64)).any():
        return math.nan
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


def require_numbers(rows: Sequence[Tuple[np.ndarray, np.ndarray]], test: str) -> None:
    """Significance tests resample scores: a NaN (which a correlation would leave out with its row) is an
    error there, naming the row."""
    for k, (g, m) in enumerate(rows, 1):
        if np.isnan(g).any() or np.isnan(m).any():
            raise InputError(f"the {test} needs numbers: row {k} holds a NaN {'human' if np.isnan(g).any() else 'metric'}"
                             f" score (a correlation leaves such a row out; resampling cannot)")


ROW_PAIRS = 4_000_000  # rows with at most this many pairs in all take the vectorized Kendall path


def row_values(statistic: str, rows: Sequence[Tuple[np.ndarray, np.ndarray]], **options: Any) -> List[float]:
    """``STATISTICS[statistic](gold, metric, **options)`` of every row.  Kendall (not tau-c) and accuracy
    of short rows are computed for all rows at once -- every pair's outcome from :func:`pair_index`, as
    :func:`pair_counts` classifies it, counted per row -- the same counts, so the same values."""
    variant = "acc23" if statistic == "accuracy" else options.get("variant", "b")
    lens = [len(g) for g, _ in rows]
    if statistic not in ("kendall", "accuracy") or variant == "c" or \
            sum(n * (n - 1) // 2 for n in lens) > ROW_PAIRS or min(lens, default=0) < 2:
        return [STATISTICS[statistic](g, m, **options) for g, m in rows]
    epsilon = options.get("epsilon", 0.0)
    if epsilon < 0:
        raise UsageError(f"epsilon must be non-negative, got {epsilon}")
    nan = [bool(np.isnan(g).any() or np.isnan(m).any()) for g, m in rows]
    if any(nan):  # NaN rows are NaN; the others at once
        values = iter(row_values(statistic, [r for r, bad in zip(rows, nan) if not bad], **options))
        return [math.nan if bad else next(values) for bad in nan]
    y = np.concatenate([g for g, _ in rows]).astype(np.float64)
    x = np.concatenate([m for _, m in rows]).astype(np.float64)
    outcome, row = pair_outcomes(y, x, lens, epsilon)
    return [float(v) for v in taus_from_counts(row_counts(row, outcome, len(rows)), variant)]


def pair_outcomes(gold: np.ndarray, metric: np.ndarray, lens: Sequence[int], epsilon: float
                  ) -> Tuple[np.ndarray, np.ndarray]:
    """(the :class:`Pair` outcome of every pair a < b of positions of every row, rows laid end to end and
    pairs row-major as :func:`pair_index` gives them; each pair's row).  The metric ties a pair when its
    two scores differ by at most ``epsilon``."""
    a, b, row = pair_index(lens)
    dy, dx = gold[b] - gold[a], metric[b] - metric[a]
    x_tie, y_tie = np.abs(dx) <= epsilon, dy == 0
    concordant = ((dx > 0) & (dy > 0)) | ((dx < 0) & (dy < 0))
    outcome = np.select([x_tie & y_tie, x_tie, y_tie, concordant],
                        [Pair.BOTH_TIED, Pair.METRIC_TIE, Pair.HUMAN_TIE, Pair.CONCORDANT], default=Pair.DISCORDANT)
    return outcome.astype(np.int64), row


def row_counts(row: np.ndarray, outcome: np.ndarray, rows: int) -> np.ndarray:
    """``rows x 5``: how many pairs of each row have each :class:`Pair` outcome."""
    return np.bincount(row * len(Pair) + outcome, minlength=rows * len(Pair)).reshape(rows, len(Pair))


def taus_from_counts(counts: np.ndarray, variant: str) -> np.ndarray:
    """Kendall's tau (``variant`` b, 23 or acc23) of every row of ``... x 5`` outcome counts; NaN for a row
    without pairs (or, for tau-b, without untied pairs)."""
    c = counts.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return kendall_from_counts(*(c[..., k] for k in Pair), variant=variant)


def average_correlation(gold: Sequence[Optional[float]], metric: Sequence[float], num_sys: int,
                        average_by: str = "none", statistic: str = "pearson",
                        replace_nans_with_zeros: bool = False, **options) -> Tuple[float, int]:
    """(average correlation, number of rows averaged) -- 0 and 0 when no row is usable."""
    if statistic not in STATISTICS:
        raise UsageError(f"unknown statistic {statistic!r}; expected one of {', '.join(STATISTICS)}")
    total, n = 0.0, 0
    for value in row_values(statistic, groups(gold, metric, num_sys, average_by), **options):
        if not math.isnan(value):
            total += value
            n += 1
        elif replace_nans_with_zeros:
            n += 1
    return (total / n, n) if n else (0.0, 0)


def undefined_reason(gold: Sequence[Optional[float]], metric: Sequence[float]) -> str:
    """Why a correlation of these scores is undefined (no row gave a number), in words a person reads."""
    pairs = [(g, m) for g, m in zip(gold, metric) if g is not None]
    if not pairs:
        return "no human scores"
    g, m = (np.array(v, dtype=np.float64) for v in zip(*pairs))
    if np.isnan(m).any() or np.isnan(g).any():
        return "NaN scores"
    if np.all(m == m[0]):
        return "constant metric scores"
    if np.all(g == g[0]):
        return "constant human scores"
    return "no row with two or more different scores"


#: pairwise differences beyond which PDP is refused (rows x systems^2 values; MTME would build them all too)
PDP_MAX_VALUES = 100_000_000


def pairwise_difference_pearson(gold: Sequence[Optional[float]], metric: Sequence[float], num_sys: int,
                                average_by: str = "none") -> Tuple[float, int]:
    """(PDP, 1) -- or (0.0, 0) when it is undefined: Pearson's r of pairwise differences, MTME's
    ``Correlation.Pearson(pdp=True)`` (``stats.AverageCorrelation._enumerate_pairwise_diffs``, commit 68a481ae).

    The scores are laid out as :func:`reshape` lays them out for ``average_by``; within each row every column is
    subtracted from every column (``row[j] - row[i]`` for all i, j: the diagonal's zeros and both orders
    included), and one Pearson's r is computed over all rows' differences together, those with a None human
    score left out -- not an average over rows."""
    if len(gold) != len(metric):
        raise InputError(f"{len(gold)} human scores but {len(metric)} metric scores")
    if num_sys < 1 or len(gold) % num_sys:
        raise InputError(f"{len(gold)} scores do not split into {num_sys} systems")
    g = reshape([math.nan if v is None else float(v) for v in gold], num_sys, average_by).astype(np.float64)
    m = reshape(list(metric), num_sys, average_by).astype(np.float64)
    if g.shape[1] < 2:
        raise UsageError("pairwise differences need at least 2 scores in a row (PDP: 2 systems or more)")
    if g.shape[0] * g.shape[1] ** 2 > PDP_MAX_VALUES:
        raise UsageError(f"PDP over {g.shape[0]} rows of {g.shape[1]} would build {g.shape[0] * g.shape[1] ** 2:,} "
                         f"differences; average by item (or sys) instead")
    human = (g[:, None, :] - g[:, :, None]).ravel()
    machine = (m[:, None, :] - m[:, :, None]).ravel()
    keep = ~np.isnan(human)
    if keep.sum() < 2:
        return 0.0, 0
    r = pearson(human[keep], machine[keep])
    return (0.0, 0) if math.isnan(r) else (r, 1)


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


def pair_index(lens: Sequence[int]) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(i, j, row) of every pair i < j of positions within each row, rows laid end to end: rows in
    order, each row's pairs row-major (MTME's loop order)."""
    if not len(lens):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    lens = np.asarray(lens, dtype=np.int64)
    triu = {n: np.triu_indices(n, 1) for n in set(lens.tolist())}
    starts = np.r_[0, np.cumsum(lens)[:-1]]
    i = np.concatenate([triu[n][0] + b for n, b in zip(lens.tolist(), starts.tolist())])
    j = np.concatenate([triu[n][1] + b for n, b in zip(lens.tolist(), starts.tolist())])
    return i, j, np.repeat(np.arange(len(lens)), lens * (lens - 1) // 2)


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
    if len(gold) != len(metric):
        raise InputError(f"{len(gold)} human scores but {len(metric)} metric scores")
    if num_sys < 1 or len(gold) % num_sys:
        raise InputError(f"{len(gold)} scores do not split into {num_sys} systems")
    keep = reshape(np.array([a is not None and b is not None for a, b in zip(gold, metric)], dtype=bool),
                   num_sys, average_by).astype(bool)
    h = reshape([0.0 if v is None else v for v in gold], num_sys, average_by).astype(np.float64)[keep]
    x = reshape([0.0 if v is None else v for v in metric], num_sys, average_by).astype(np.float64)[keep]
    i, j, row = pair_index(keep.sum(axis=1))  # positions kept, rows laid end to end
    if sample_rate < 1.0:  # one draw per pair in MTME's order (one call draws the same stream)
        chosen = rng.random_sample(len(i)) <= sample_rate
        i, j, row = i[chosen], j[chosen], row[chosen]
    if not len(row):
        return 0.0, 0.0
    human_tie, metric_tie = h[i] == h[j], x[i] == x[j]
    concordant = (h[i] > h[j]) == (x[i] > x[j])
    outcome = np.select([human_tie & metric_tie, human_tie, metric_tie, concordant],
                        [Pair.BOTH_TIED, Pair.HUMAN_TIE, Pair.METRIC_TIE, Pair.CONCORDANT], default=Pair.DISCORDANT)
    tie = np.where(human_tie, Pair.BOTH_TIED, Pair.METRIC_TIE)
    d = np.abs(x[i] - x[j])
    starts = np.r_[True, row[1:] != row[:-1]]  # rows with pairs, in order (MTME's dict order); row is sorted
    row = np.cumsum(starts) - 1
    rows_count = int(starts.sum())
    # tau = w . counts / pairs of the row (both variants are linear): track each row's integer numerator.
    # Each pair in order of its difference (stable, as sorted()) turns into a tie; its row's numerator before
    # and after comes from per-row running sums of the changes.
    w = np.array(LINEAR[variant], dtype=np.int64)
    pairs = np.bincount(row, minlength=rows_count).astype(np.float64)
    initial = np.bincount(row, weights=w[outcome], minlength=rows_count).astype(np.int64)
    order = np.argsort(d, kind="stable")
    r = row[order]
    change = w[tie[order]] - w[outcome[order]]
    by_row = np.argsort(r.astype(np.uint16) if rows_count <= 1 << 16 else r, kind="stable")  # grouped by row,
    # in step order (a stable sort of 16-bit keys is a radix sort)
    running = np.cumsum(change[by_row])
    firsts = np.flatnonzero(np.r_[True, r[by_row][1:] != r[by_row][:-1]])
    running -= np.repeat(running[firsts] - change[by_row][firsts], np.diff(np.r_[firsts, len(d)]))
    after = np.empty_like(change)
    after[by_row] = running
    after += initial[r]
    # MTME's running sum -- start, then "-= old tau, += new tau" per step -- in its floating-point steps
    # (a cumulative sum adds left to right; integer numerator / pairs is the float taus_from_counts gives),
    # so the arg-max (and ties between thresholds) is the same
    steps = np.empty(2 * len(d) + 1)
    steps[0] = sum((initial / pairs).tolist())
    steps[1::2], steps[2::2] = -((after - change) / pairs[r]), after / pairs[r]
    running_taus = np.cumsum(steps)[2::2] / rows_count
    ordered = d[order]
    last = np.flatnonzero(np.r_[ordered[1:] != ordered[:-1], True])  # the last step of each run of equal d
    thresholds = np.r_[0.0, ordered[last]]
    taus = np.r_[steps[0] / rows_count, running_taus[last]]
    if len(last) and thresholds[1] == 0.0:  # pairs already tied update the threshold-0 entry itself
        thresholds, taus = thresholds[1:], taus[1:]
    best = int(np.nanargmax(taus))
    return float(taus[best]), float(thresholds[best])
