"""The pair-swapping permutation test of two Kendall-like correlations (WMT23's official test).

MT Metrics Eval's ``PairwisePermutationSigDiff`` (Deutsch et al., 2023): instead of swapping the two
metrics' *scores* at positions, each trial swaps their *pair outcomes*.  Within each row (``average_by``
none / sys / item; human scores that are None dropped), every pair of positions has an outcome under
metric 1 and under metric 2 -- concordant, discordant, tied in the metric only (``|difference| <=
epsilon`` of that metric), tied in the human scores only, tied in both.  A trial draws one fair coin per
pair; hybrid 1 takes metric 1's outcome where the coin is 1 and metric 2's elsewhere, hybrid 2 the
reverse; each hybrid's Kendall variant (b, 23 or acc23; not c, which needs scores) is computed per row
from its outcome counts and averaged over rows (NaN rows dropped, 0 if none is left).  The p-value is
the share of trials with ``tau(hybrid 2) - tau(hybrid 1) >= tau(metric 2) - tau(metric 1)``.  Each
metric's epsilon is its own tie-calibrated threshold unless given (``kendall_with_ties_opt``, the *23
variants only).  Early stopping as MTME writes it: at a trial that is a multiple of ``block_size`` and
itself reaches the observed difference, stop if the running p-value is below ``early_min`` or above
``early_max``.  A row of one position has no pairs: its tau is NaN and it is dropped (MTME divides by
zero there).

* ``mode="mtme"``: MTME's draws -- per trial, per row, ``binomial(1, 0.5, (n, n))`` from a legacy
  ``RandomState(seed)`` (MTME's global generator after ``numpy.random.seed(seed)``), the coin of pair
  (a < b) being element (a, b).  Those draws consume the stream element by element, so one call per
  trial gives the same coins.  p-values equal MTME's.
* ``mode="fast"`` (default): the same test drawn another way, from ``numpy.random.default_rng(seed)``.
  Only pairs whose outcome differs between the metrics matter (elsewhere both hybrids agree with both
  metrics), and a trial depends on their coins only through how many heads fall in each group of pairs of
  one row and one (outcome 1, outcome 2) kind: each group's heads are drawn at once as a binomial, every
  trial of a batch together.  The linear variants (23, acc23) then decide each trial in exact integer
  arithmetic (no floating-point ties with delta).
"""
from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from evalpipe.errors import UsageError
from evalpipe.meta.correlation import (LINEAR, Pair, groups, kendall_with_ties_opt, pair_outcomes, require_numbers,
                                       reshape, row_counts, taus_from_counts)
from evalpipe.meta.significance import average_rows, check_trials

CATEGORIES = len(Pair)
INT64_SAFE = 2 ** 62  # sums below this stay in int64; beyond, Python integers


def _mtme_average(values: np.ndarray, replace_nans_with_zeros: bool) -> float:
    """MTME's average of one trial's row taus: NaN dropped (or 0), ``numpy.average``, 0 if none."""
    vals = np.nan_to_num(values) if replace_nans_with_zeros else values[~np.isnan(values)]
    return float(np.average(vals)) if len(vals) else 0.0


def _stop(large: int, i: int, block_size: int, early_min: float, early_max: float) -> bool:
    return i % block_size == 0 and not early_min <= large / i <= early_max


def pairwise_permutation_test(gold: Sequence[Optional[float]], metric1: Sequence[float], metric2: Sequence[float],
                              num_sys: int, average_by: str = "none", variant: str = "acc23", k: int = 1000,
                              seed: Optional[int] = None, mode: str = "fast",
                              epsilon1: Optional[float] = None, epsilon2: Optional[float] = None,
                              sample_rate: float = 1.0, block_size: int = 1000, early_min: float = 0.02,
                              early_max: float = 0.5, replace_nans_with_zeros: bool = False,
                              random_state: Optional[np.random.RandomState] = None) -> Dict[str, Any]:
    """``{"p_value", "delta", "trials", "epsilon1", "epsilon2", "correlation1", "correlation2"}``: does metric
    2's Kendall-like correlation beat metric 1's?  (See the module docstring.)"""
    if mode not in ("fast", "mtme"):
        raise UsageError(f"expected mode fast or mtme, got {mode!r}")
    if variant not in ("b", "23", "acc23"):
        raise UsageError(f"the pairwise permutation test takes Kendall variant b, 23 or acc23, got {variant!r} "
                         f"(tau-c needs the scores themselves)")
    rng = random_state if random_state is not None else np.random.RandomState(seed) if mode == "mtme" else None
    rows1, rows2 = groups(gold, metric1, num_sys, average_by), groups(gold, metric2, num_sys, average_by)
    require_numbers(rows1 + rows2, "pair-swapping permutation test")
    epsilons: List[float] = []
    for given, metric in ((epsilon1, metric1), (epsilon2, metric2)):
        if given is None:  # tie calibration (draws from the same stream as MTME when sample_rate < 1)
            given = kendall_with_ties_opt(gold, metric, num_sys, average_by, variant, sample_rate,
                                          rng if rng is not None else np.random.RandomState(seed))[1]
        if given < 0:
            raise UsageError(f"epsilon must be non-negative, got {given}")
        epsilons.append(float(given))
    lens = [len(g) for g, _ in rows1]
    y = np.concatenate([g for g, _ in rows1]).astype(np.float64) if rows1 else np.zeros(0)
    m1 = np.concatenate([m for _, m in rows1]).astype(np.float64) if rows1 else np.zeros(0)
    m2 = np.concatenate([m for _, m in rows2]).astype(np.float64) if rows2 else np.zeros(0)
    (out1, row), (out2, _) = pair_outcomes(y, m1, lens, epsilons[0]), pair_outcomes(y, m2, lens, epsilons[1])
    base1, base2 = row_counts(row, out1, len(lens)), row_counts(row, out2, len(lens))
    delta = _mtme_average(taus_from_counts(base2, variant), replace_nans_with_zeros) - \
        _mtme_average(taus_from_counts(base1, variant), replace_nans_with_zeros)
    if mode == "mtme":  # MTME also draws coins for rows of one position (they have no pair)
        drawn = [n for n in (sum(v is not None for v in g) for g in reshape(gold, num_sys, average_by)) if n]
        result = _mtme_trials(rng, drawn, lens, row, out1, out2, variant, delta, k, block_size, early_min, early_max,
                              replace_nans_with_zeros)
    else:
        result = _fast_trials(np.random.default_rng(seed), row, out1, out2, base1, base2, variant, delta, k,
                              block_size, early_min, early_max, replace_nans_with_zeros)
    p_value, trials = result
    return {"p_value": p_value, "delta": float(delta), "trials": trials, "epsilon1": epsilons[0],
            "epsilon2": epsilons[1], "correlation1": _average(taus_from_counts(base1, variant), replace_nans_with_zeros),
            "correlation2": _average(taus_from_counts(base2, variant), replace_nans_with_zeros)}


def _average(taus: np.ndarray, replace_nans_with_zeros: bool) -> float:
    """Each metric's own average correlation as ``correlation.average_correlation`` sums it (in row order,
    NaN rows dropped or counted as 0; 0 without rows)."""
    values = [0.0 if v != v else v for v in taus.tolist()] if replace_nans_with_zeros else \
        [v for v in taus.tolist() if v == v]
    return sum(values) / len(values) if values else 0.0


def _mtme_trials(rng, drawn, lens, row, out1, out2, variant, delta, k, block_size, early_min, early_max,
                 replace_nans_with_zeros) -> Tuple[float, int]:
    offsets = np.r_[0, np.cumsum([n * n for n in drawn])]
    pick = np.concatenate([o + a * n + b for o, n in zip(offsets, drawn) if n > 1 for a, b in [np.triu_indices(n, 1)]]) \
        if lens else np.zeros(0, dtype=np.int64)
    large, i = 0, 1
    for i in range(1, k + 1):
        coins = rng.binomial(1, 0.5, int(offsets[-1]))[pick].astype(bool)
        taus = []
        for first, second in ((out1, out2), (out2, out1)):  # hybrid 1 takes metric 1 where the coin is 1
            counts = row_counts(row, np.where(coins, first, second), len(lens))
            taus.append(_mtme_average(taus_from_counts(counts, variant), replace_nans_with_zeros))
        if taus[1] - taus[0] >= delta:
            large += 1
            if _stop(large, i, block_size, early_min, early_max):
                break
    return large / i, i


def _fast_trials(rng, row, out1, out2, base1, base2, variant, delta, k, block_size, early_min, early_max,
                 replace_nans_with_zeros) -> Tuple[float, int]:
    """(p-value, trials) from head counts: the pairs whose outcomes differ fall into groups of one row and one
    (outcome 1, outcome 2) kind; a trial depends on its coins only through each group's number of heads,
    which is drawn directly, ``Binomial(group size, 1/2)``.  Hybrid 1 = metric 2's counts + the gain of the
    heads (each moves a pair from its metric-2 outcome to its metric-1 outcome), hybrid 2 = metric 1's
    counts - the same gain.  The linear variants (23, acc23: tau = w . counts / pairs of the row) are decided
    exactly, in integers; tau-b from each trial's counts, as the other modes do."""
    rows = len(base1)
    g_row, g_out1, g_out2, sizes = _kinds(row, out1, out2)
    check_trials(k, 8 * (len(sizes) + 2), "the pair-swapping permutation test")
    if variant in LINEAR:  # one draw per distinct integer coefficient: sums of binomials are binomials
        classes, bound = _linear_classes(base1, base2, g_row, g_out1, g_out2, sizes, LINEAR[variant])
        counts = np.array(list(classes.values()), dtype=np.int64)
        values = list(classes)
        exact = max([abs(bound)] + [abs(c) * n for c, n in classes.items()]) < INT64_SAFE // max(len(values), 1)
        coefficient = np.array(values, dtype=np.int64 if exact else object)
        heads = rng.binomial(counts, 0.5, size=(k, len(values))) if values else np.zeros((k, 0), np.int64)
        hit = (heads if exact else heads.astype(object)) @ coefficient <= bound
    else:
        hit = np.empty(k, dtype=bool)
        batch = max(1, min(k, 4_000_000 // max(len(sizes), 1)))
        for start in range(0, k, batch):
            trials = min(batch, k - start)
            heads = rng.binomial(sizes, 0.5, size=(trials, len(sizes)))
            gain = np.zeros((trials, rows, CATEGORIES), dtype=np.int64)
            for a in range(CATEGORIES):  # within one (outcome 1, outcome 2) kind each row appears once
                for b in range(CATEGORIES):
                    chosen = np.flatnonzero((g_out1 == a) & (g_out2 == b))
                    if len(chosen):
                        gain[:, g_row[chosen], a] += heads[:, chosen]
                        gain[:, g_row[chosen], b] -= heads[:, chosen]
            taus1 = taus_from_counts(base2[None] + gain, variant)
            taus2 = taus_from_counts(base1[None] - gain, variant)
            hit[start:start + trials] = average_rows(taus2, replace_nans_with_zeros) - \
                average_rows(taus1, replace_nans_with_zeros) >= delta
    hits = np.cumsum(hit)
    for i in range(block_size, k + 1, block_size):  # MTME's rule: checked at trials that reach delta
        if hit[i - 1] and _stop(int(hits[i - 1]), i, block_size, early_min, early_max):
            return float(hits[i - 1] / i), i
    return float(hits[-1] / k), k


def _kinds(row: np.ndarray, out1: np.ndarray, out2: np.ndarray) -> Tuple[np.ndarray, ...]:
    """(row, outcome 1, outcome 2, pairs) of each group of differing pairs of one row and one kind."""
    differ = np.flatnonzero(out1 != out2)
    kinds, sizes = np.unique((row[differ] * CATEGORIES + out1[differ]) * CATEGORIES + out2[differ], return_counts=True)
    return kinds // CATEGORIES ** 2, kinds // CATEGORIES % CATEGORIES, kinds % CATEGORIES, sizes


def _linear_classes(base1, base2, g_row, g_out1, g_out2, sizes, w) -> Tuple[Dict[int, int], int]:
    """({coefficient: pairs}, bound) for a linear variant, in exact integers.  With T_r the pairs of row r
    (every row has one at least, so no row is NaN) and L = lcm(T_r), a trial reaches delta --
    ``mean tau(hybrid 2) - mean tau(hybrid 1) >= mean tau(metric 2) - mean tau(metric 1)`` -- exactly when
    ``sum over kinds of heads * (L / T_r) * (w[out1] - w[out2]) <= sum over rows of (L / T_r) * w . (base1 - base2)``.
    Kinds with the same coefficient are one class (their heads together are one binomial)."""
    w = np.asarray(w, dtype=np.int64)
    totals = base1.sum(axis=1).tolist()
    lcm = math.lcm(*totals) if totals else 1
    scale = [lcm // t for t in totals]
    bound = sum(s * int(v) for s, v in zip(scale, ((base1 - base2) @ w).tolist()))
    classes: Dict[int, int] = {}
    for r, a, b, n in zip(g_row.tolist(), g_out1.tolist(), g_out2.tolist(), sizes.tolist()):
        c = scale[r] * int(w[a] - w[b])
        if c:
            classes[c] = classes.get(c, 0) + n
    return dict(sorted(classes.items())), bound
