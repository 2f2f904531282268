"""Is one metric's correlation with human scores significantly higher than another's?

PERM-BOTH permutation test (Deutsch et al., 2021), as MT Metrics Eval's ``PermutationSigDiff``
defines it: human scores missing (None) are dropped per row; both metrics' remaining scores are
z-normalized; each trial swaps the two metrics' scores at the positions where a fair coin comes up
heads; the p-value is the share of trials in which metric 2's correlation minus metric 1's is at
least the observed difference.  Early stopping as MTME: after every ``block_size`` trials, stop if
the running p-value is below ``early_min`` or above ``early_max``.

Two random modes:

* ``mode="mtme"`` -- MTME's draws exactly: a legacy ``numpy.random.RandomState(seed)`` (the stream
  ``numpy.random.seed(seed)`` gives MTME's global generator), one ``binomial(1, 0.5, N)`` per trial in
  order, correlations computed trial by trial.  With the same systems in the same order, p-values
  equal MTME's.
* ``mode="fast"`` (default) -- all trials drawn at once from ``numpy.random.default_rng(seed)``;
  Pearson is linear in the swap mask (sums of products of the mask with fixed vectors), Kendall
  counts depend on the pair of coins of each pair of positions (one table lookup per pair), so every
  trial is computed with matrix operations.  Same test, different random stream.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from evalpipe import progress
from evalpipe.errors import UsageError
from evalpipe.meta.correlation import (STATISTICS, Pair, groups, kendall_from_counts, pair_index, require_numbers,
                                       row_values)
from evalpipe.sufficient_stats.resample import assign_ranks


def _zscore(v: np.ndarray) -> np.ndarray:
    return (v - v.mean()) / v.std()


def _packed(gold, m1, m2, num_sys, average_by):
    g1 = groups(gold, m1, num_sys, average_by)
    g2 = groups(gold, m2, num_sys, average_by)
    require_numbers(g1 + g2, "permutation test")
    lens = [len(g) for g, _ in g1]
    y = np.concatenate([g for g, _ in g1]) if g1 else np.zeros(0)
    s1 = _zscore(np.concatenate([m for _, m in g1]))
    s2 = _zscore(np.concatenate([m for _, m in g2]))
    return lens, y, s1, s2


def average_rows(values: np.ndarray, replace_nans_with_zeros: bool) -> np.ndarray:
    """Mean over the last axis ignoring NaN (or counting NaN as 0); 0 when nothing is left."""
    if replace_nans_with_zeros:
        return np.nan_to_num(values).mean(axis=-1)
    ok = ~np.isnan(values)
    n = ok.sum(axis=-1)
    total = np.where(ok, values, 0.0).sum(axis=-1)
    return np.where(n > 0, total / np.maximum(n, 1), 0.0)


def _corr_loop(statistic, bounds, y, mscores, replace_nans_with_zeros, options) -> float:
    vals = np.array(row_values(statistic, [(y[b:e], mscores[b:e]) for b, e in bounds], **options), dtype=np.float64)
    return float(average_rows(vals, replace_nans_with_zeros))


def _pearson_batch(W: np.ndarray, y, s1, s2, starts, lens) -> Tuple[np.ndarray, np.ndarray]:
    """Per-trial, per-group Pearson of (mix1, gold) and (mix2, gold), mix1 = s2 + W d, mix2 = s1 - W d."""
    n = np.asarray(lens, dtype=np.float64)
    seg = lambda v: np.add.reduceat(v, starts, axis=-1)  # noqa: E731
    yc = y - np.repeat(seg(y) / n, lens)
    ynorm = np.sqrt(seg(yc * yc))
    d = s1 - s2
    out = []
    for base, sign in ((s2, 1.0), (s1, -1.0)):
        dd = sign * d
        sum_m = seg(base) + seg(W * dd)
        sum_m2 = seg(base * base) + seg(W * (2 * base * dd + dd * dd))
        cross = seg(yc * base) + seg(W * (yc * dd))
        var = sum_m2 - sum_m * sum_m / n
        with np.errstate(invalid="ignore", divide="ignore"):
            r = cross / (np.sqrt(np.maximum(var, 0.0)) * ynorm)
        r = np.where((var <= 1e-12 * np.maximum(sum_m2, 1.0)) | (ynorm == 0), np.nan, np.clip(r, -1.0, 1.0))
        out.append(r)
    return out[0], out[1]


def _kendall_tables(y, s1, s2, bounds, epsilon):
    """For every pair of positions in a group: its group and its :class:`Pair` outcome under each of
    the four coin combinations (which metric each side takes)."""
    i, j, group = pair_index([e - b for b, e in bounds])
    dy = y[i] - y[j]
    table = np.empty((len(i), 4), dtype=np.int8)
    for case, (a, b) in enumerate(((s2, s2), (s2, s1), (s1, s2), (s1, s1))):  # (w_i, w_j) = 00, 01, 10, 11
        dx = a[i] - b[j]
        x_tie, y_tie = np.abs(dx) <= epsilon, dy == 0
        con = ~x_tie & ~y_tie & (np.sign(dx) == np.sign(dy))
        table[:, case] = np.select([x_tie & y_tie, x_tie, y_tie, con],
                                   [Pair.BOTH_TIED, Pair.METRIC_TIE, Pair.HUMAN_TIE, Pair.CONCORDANT],
                                   default=Pair.DISCORDANT)
    return i, j, group, table


SMALL_GROUP = 64  # rows this short take the multilinear form of the Kendall counts


def _worth(variant: str) -> np.ndarray:
    """Each :class:`Pair` outcome's share of tau 23 / acc23 (times the pair count)."""
    worth = np.zeros(len(Pair), dtype=np.float32)
    worth[[Pair.CONCORDANT, Pair.BOTH_TIED]] = 1
    if variant == "23":
        worth[[Pair.DISCORDANT, Pair.METRIC_TIE, Pair.HUMAN_TIE]] = -1
    return worth


def _small_group_forms(tables, n_groups, variant):
    """What :func:`_kendall_small_groups` needs that does not depend on the coins, computed once per test: each
    row's first position, local pair positions, width and length, and per mix the constant, linear and
    quadratic forms of the row sums (see there)."""
    i, j, group, table = tables
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    first = np.zeros(n_groups, dtype=np.int64)
    first[group[starts]] = i[starts]  # a row's first position is the first of its first pair
    li, lj = i - first[group], j - first[group]
    width = int(lj.max()) + 1
    lens = np.zeros(n_groups, dtype=np.int64)
    np.maximum.at(lens, group, lj + 1)
    if variant == "b":
        sign = np.zeros(len(Pair), dtype=np.float32)
        sign[Pair.CONCORDANT], sign[Pair.DISCORDANT] = 1, -1
        metric_tie = np.isin(np.arange(len(Pair)), [Pair.METRIC_TIE, Pair.BOTH_TIED]).astype(np.float32)
        values = np.stack([sign[table], metric_tie[table]], axis=-1)  # pairs x 4 cases x (con - dis, metric ties)
    else:
        values = _worth(variant)[table][..., None]  # pairs x 4 cases x 1
    q = values.shape[-1]
    human_ties = np.bincount(group, weights=np.isin(table[:, 0], [Pair.HUMAN_TIE, Pair.BOTH_TIED]), minlength=n_groups)
    forms = []
    for flip in (0, 3):  # mix 1 reads case 2x + y, mix 2 the coins reversed: case 3 - (2x + y)
        f00, f01, f10, f11 = (values[:, case ^ flip] for case in (0, 1, 2, 3))
        constant = np.stack([np.bincount(group, weights=f00[:, k], minlength=n_groups) for k in range(q)],
                            axis=-1).astype(np.float32)
        linear = np.zeros((n_groups * width, q), dtype=np.float32)
        for k in range(q):
            linear[:, k] = np.bincount(group * width + li, weights=f10[:, k] - f00[:, k], minlength=n_groups * width) + \
                np.bincount(group * width + lj, weights=f01[:, k] - f00[:, k], minlength=n_groups * width)
        quadratic = np.zeros((n_groups, width, q * width), dtype=np.float32)  # columns: q blocks of width
        quadratic.reshape(n_groups, width, q, width)[group, li, :, lj] = f11 - f10 - f01 + f00
        forms.append((constant, linear.reshape(n_groups, width, q), quadratic))
    return first, lens, width, q, human_ties, forms


def _kendall_small_groups(W, tables, n_groups, variant, prepared=None):
    """Tau (b, 23 or acc23) of both mixes for every trial when rows are short (item-wise averaging).

    Tau-b needs, per row, con - dis and the metric ties (the human ties and the pair count do not depend
    on the coins); tau 23 and acc23 the sum of each outcome's share.  Each is a sum over pairs of a function of the pair's two coins, f(x, y) = f00 + (f10 -
    f00) x + (f01 - f00) y + (f11 - f10 - f01 + f00) x y with fXY its value in case (x, y); per row that is
    a constant, a linear form in the row's coins and a quadratic form w' Q w -- batched matrix products
    instead of one table lookup per trial and pair.  The sums are small integers, exact in float32.
    ``prepared``: :func:`_small_group_forms` of these tables, computed once for all batches."""
    first, lens, width, q, human_ties, forms = prepared or _small_group_forms(tables, n_groups, variant)
    trials = len(W)
    coins = np.zeros((n_groups, trials, width), dtype=np.float32)  # each row's coins, padded
    pos_group = np.repeat(np.arange(n_groups), lens)
    pos_local = np.arange(len(pos_group)) - np.repeat(np.cumsum(lens) - lens, lens)
    coins[pos_group, :, pos_local] = W[:, first[pos_group] + pos_local].T
    total = lens * (lens - 1) / 2
    results = []
    for constant, linear, quadratic in forms:
        sums = constant[:, None, :] + np.matmul(coins, linear)  # rows x trials x q
        quad = np.matmul(coins, quadratic).reshape(n_groups, trials, q, width)
        for k in range(q):
            sums[..., k] += np.einsum("gtw,gtw->gt", quad[:, :, k, :], coins)
        sums = np.rint(sums).transpose(1, 0, 2).astype(np.float64)
        if variant != "b":  # the same division as the linear path
            results.append(np.where(lens < 2, np.nan, sums[..., 0] / np.maximum(total, 1)))
            continue
        score, x_tie = sums[..., 0], sums[..., 1]
        with np.errstate(invalid="ignore", divide="ignore"):  # the same operations as kendall_from_counts
            tau = score / np.sqrt(total - x_tie) / np.sqrt(total - human_ties)
        results.append(np.where((x_tie == total) | (human_ties == total) | (lens < 2), np.nan, tau))
    return results[0], results[1]


def _kendall_batch(W, tables, n_groups, variant, cache=None):
    """``cache``: a dict kept across the batches of one test (the coin-independent forms)."""
    i, j, group, table = tables
    if len(i) and variant in ("b", "23", "acc23") and int((j - i).max()) < SMALL_GROUP:
        if cache is None:
            cache = {}
        if "forms" not in cache:
            cache["forms"] = _small_group_forms(tables, n_groups, variant)
        return _kendall_small_groups(W, tables, n_groups, variant, cache["forms"])
    wb = W.astype(np.int8)
    case1 = 2 * wb[:, i] + wb[:, j]  # mix1 takes s1 where w = 1
    trials, linear = len(W), variant in ("23", "acc23")
    if linear:  # tau is linear in the outcomes: sum a per-pair value per group (pairs are stored group by group)
        value_table = _worth(variant)[table]
        starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
        per_group = np.bincount(group, minlength=n_groups).astype(np.float64)
    else:  # count the outcomes per trial and group
        slot = (np.arange(trials)[:, None] * n_groups + group[None, :]) * 5
    pair_index = np.arange(len(i))[None, :]
    results = []
    for case in (case1, 3 - case1):  # mix2 takes s1 where w = 0
        if linear:
            sums = np.add.reduceat(value_table[pair_index, case], starts, axis=1, dtype=np.float64)
            values = np.full((trials, n_groups), np.nan)
            values[:, group[starts]] = sums / per_group[group[starts]]
        else:
            outcome = table[pair_index, case]
            counts = np.bincount((slot + outcome).ravel(), minlength=trials * n_groups * 5).reshape(trials, n_groups, 5)
            values = kendall_from_counts(*(counts[:, :, k].astype(np.float64) for k in Pair), variant=variant)
        results.append(values)
    return results[0], results[1]


def mtme_trials(statistic: Callable[[np.ndarray], float], s1: np.ndarray, s2: np.ndarray, delta: float, k: int,
                block_size: int, early_min: float, early_max: float,
                rng: np.random.RandomState) -> Dict[str, Any]:
    """MTME's ``PermutationSigDiff`` loop, trial by trial: a ``binomial(1, 0.5, N)`` coin per position swaps the two
    z-normalized score vectors, ``statistic`` of each mix, a hit when the second's lead reaches ``delta``; early
    stopping after every ``block_size`` trials.  Every test that draws MTME's legacy stream goes through here."""
    large, i = 0, 1
    for i in range(1, k + 1):
        w1 = rng.binomial(1, 0.5, len(s1))
        w2 = 1 - w1
        c1, c2 = statistic(w1 * s1 + w2 * s2), statistic(w2 * s1 + w1 * s2)
        if c2 - c1 >= delta:
            large += 1
        if i % block_size == 0:
            progress.step("draws", i, k)
            p = large / i
            if p < early_min or p > early_max:
                break
    return {"p_value": large / i, "delta": delta, "trials": i}


#: what a test that keeps every trial's outcome may hold in memory for them
TRIALS_MEMORY = 2_000_000_000


def check_trials(k: int, bytes_per_trial: int, what: str) -> None:
    """A test that keeps every trial (a bootstrap's percentiles, draws made at once) refuses a ``-k`` whose trials
    would not fit in :data:`TRIALS_MEMORY`, in one line, instead of failing to allocate them."""
    most = TRIALS_MEMORY // max(bytes_per_trial, 1)
    if k > most:
        raise UsageError(f"-k {k}: {what} keeps every trial's outcome; at most {most} trials fit here")


class EarlyStopping:
    """Trials drawn batch by batch, counted as they come and stopped where MTME's early stopping stops them: at the
    first multiple of ``block_size`` whose running p-value lies outside ``[early_min, early_max]``.  Nothing the size
    of ``k`` is ever allocated, so memory does not grow with ``k`` and a huge ``k`` that stops early ends early::

        stop = EarlyStopping(k, block_size, early_min, early_max)
        for size in stop.batches(batch):
            stop.add(leads_of(size) >= delta)
        return stop.result(delta)
    """

    def __init__(self, k: int, block_size: int, early_min: float, early_max: float) -> None:
        self.k, self.block_size, self.early_min, self.early_max = k, block_size, early_min, early_max
        self.trials, self.hits, self.stopped = 0, 0, False

    def batches(self, batch: int):
        """The sizes of the batches still to draw (at most ``batch`` trials each)."""
        while not self.stopped and self.trials < self.k:
            yield min(batch, self.k - self.trials)

    def add(self, hit: np.ndarray) -> None:
        """Count one batch of trials (``hit``: whether each trial's lead reached the observed one)."""
        running = self.hits + np.cumsum(hit, dtype=np.int64)
        first = self.block_size * (self.trials // self.block_size + 1)
        for i in range(first, self.trials + len(hit) + 1, self.block_size):
            p = running[i - self.trials - 1] / i
            if p < self.early_min or p > self.early_max:
                self.hits, self.trials, self.stopped = int(running[i - self.trials - 1]), i, True
                return
        self.hits, self.trials = int(running[-1]) if len(hit) else self.hits, self.trials + len(hit)
        progress.step("draws", self.trials, self.k)

    def result(self, delta: float) -> Dict[str, Any]:
        return {"p_value": float(self.hits / self.trials), "delta": float(delta), "trials": int(self.trials)}


def ranked_matrix(values: Dict[str, float], test: Optional[Callable[..., Dict[str, Any]]], seed: Optional[int],
                  mode: str, threshold: float) -> Dict[str, Any]:
    """Metrics in decreasing order of ``values`` (the name breaks ties, as MTME), ``sig[i, j]`` (i < j) the p-value of
    ``test(worse, better, seed=..., random_state=...)``, and MTME's significance clusters.  In mtme mode every test
    draws from one legacy generator seeded once, in MTME's order (i, then j); in fast mode each pair has its own
    seed.  ``test`` None (MTME's k = 0): no test, a matrix of zeros, ranks 1, 2, 3, ... in order."""
    order = rank_order(values)
    n = len(order)
    sig = np.zeros((n, n))
    shared = np.random.RandomState(seed) if mode == "mtme" else None
    pairs, done = n * (n - 1) // 2 if test is not None else 0, 0
    for i in range(n if test is not None else 0):
        for j in range(i + 1, n):
            done += 1
            progress.step("pair", done, pairs)
            sig[i, j] = test(order[j], order[i], seed=None if seed is None else seed + i * n + j,
                             random_state=shared)["p_value"]
    return ranking(order, values, sig, threshold)


def rank_order(values: Dict[str, float]) -> List[str]:
    """Metrics in decreasing order of value, the name breaking ties (MTME's order)."""
    return sorted(values, key=lambda m: (-values[m], m))


def ranking(order: Sequence[str], values: Dict[str, float], sig: np.ndarray, threshold: float) -> Dict[str, Any]:
    """``{"metrics", "correlations", "matrix", "ranks"}`` of metrics in ``order`` with their p-value matrix: MTME's
    significance clusters at ``threshold``."""
    return {"metrics": list(order), "correlations": [values[m] for m in order], "matrix": sig.tolist(),
            "ranks": assign_ranks(sig, threshold)}


def permutation_test(gold: Sequence[Optional[float]], metric1: Sequence[float], metric2: Sequence[float],
                     num_sys: int, average_by: str = "none", statistic: str = "pearson", k: int = 1000,
                     seed: Optional[int] = None, mode: str = "fast", block_size: int = 1000,
                     early_min: float = 0.02, early_max: float = 0.5, replace_nans_with_zeros: bool = False,
                     random_state: Optional[np.random.RandomState] = None, **options: Any) -> Dict[str, Any]:
    """``{"p_value", "delta", "trials"}``: is metric2's correlation higher than metric1's?

    ``random_state`` (mtme mode): a shared legacy generator, so several tests draw from one stream
    in order, as MTME's global generator does."""
    if mode not in ("fast", "mtme"):
        raise UsageError(f"expected mode fast or mtme, got {mode!r}")
    if statistic not in STATISTICS:
        raise UsageError(f"unknown statistic {statistic!r}; expected one of {', '.join(STATISTICS)}")
    lens, y, s1, s2 = _packed(gold, metric1, metric2, num_sys, average_by)
    starts = np.r_[0, np.cumsum(lens)][:-1].astype(np.int64)
    bounds = [(int(b), int(b + n)) for b, n in zip(starts, lens)]
    corr = lambda m: _corr_loop(statistic, bounds, y, m, replace_nans_with_zeros, options)  # noqa: E731
    delta = corr(s2) - corr(s1)
    N = len(y)
    if mode == "mtme":
        rng = random_state if random_state is not None else np.random.RandomState(seed)
        return mtme_trials(corr, s1, s2, delta, k, block_size, early_min, early_max, rng)
    rng = np.random.default_rng(seed)
    stop = EarlyStopping(k, block_size, early_min, early_max)
    batch = max(1, min(k, 20_000_000 // max(N, 1)))
    if statistic in ("kendall", "accuracy"):  # its per-trial tables are wider: fresh memory costs more than batches
        batch = max(1, min(batch, 2_000_000 // max(N, 1)))
    tables = None
    for size in stop.batches(batch):
        w = rng.integers(0, 2, size=(size, N), dtype=np.int8).astype(np.float64)
        if statistic == "pearson":
            r1, r2 = _pearson_batch(w, y, s1, s2, starts, lens)
        elif statistic in ("kendall", "accuracy") and options.get("variant", "b") != "c":
            if tables is None:
                tables, cache = _kendall_tables(y, s1, s2, bounds, options.get("epsilon", 0.0)), {}
            variant = "acc23" if statistic == "accuracy" else options.get("variant", "b")
            r1, r2 = _kendall_batch(w, tables, len(lens), variant, cache)
        else:  # spearman, tau-c: trial by trial
            r1, r2 = (np.array([[STATISTICS[statistic](y[b:e], mix[b:e], **options) for b, e in bounds] for mix in mixes])
                      for mixes in (s2 + w * (s1 - s2), s1 - w * (s1 - s2)))
        stop.add(average_rows(r2, replace_nans_with_zeros) - average_rows(r1, replace_nans_with_zeros) >= delta)
    return stop.result(delta)


def significance_matrix(gold: Sequence[Optional[float]], metrics: Dict[str, Sequence[float]], num_sys: int,
                        average_by: str = "none", statistic: str = "pearson", k: int = 1000,
                        seed: Optional[int] = None, mode: str = "fast", threshold: float = 0.05,
                        block_size: int = 1000, **options: Any) -> Dict[str, Any]:
    """Rank metrics by correlation and cluster them by significance, as MTME's ``--matrix`` does
    (``block_size``: its ``k_block``, 1000 in its command line and ``CompareMetrics``, 100 in ``tasks.Task``).

    ``sig[i, j]`` (i < j, metrics in decreasing order of correlation) is the p-value of the test that
    metric i correlates better than metric j.  In mtme mode all tests share one legacy generator
    seeded once, drawing in MTME's order (i, then j).
    """
    from evalpipe.meta.correlation import average_correlation

    corrs = {name: average_correlation(gold, scores, num_sys, average_by, statistic, **options)[0]
             for name, scores in metrics.items()}
    return ranked_matrix(corrs, lambda worse, better, **draw: permutation_test(
        gold, metrics[worse], metrics[better], num_sys, average_by, statistic, k=k, mode=mode, block_size=block_size,
        **draw, **options), seed, mode, threshold)


def bootstrap_test(gold: Sequence[Optional[float]], metric1: Sequence[float], metric2: Sequence[float],
                   num_sys: int, average_by: str = "none", statistic: str = "pearson", k: int = 1000,
                   seed: Optional[int] = None, **options: Any) -> Dict[str, Any]:
    """Paired bootstrap of the correlation difference (Efron & Tibshirani's percentile bootstrap).

    Resamples the averaged rows with replacement (systems for ``sys``, items for ``item``) or, with
    ``average_by="none"``, the scored positions; ``p_value`` is the share of resamples in which
    metric 2 does not correlate better than metric 1, ``ci`` the 95 % interval of the difference.
    """
    fn = STATISTICS[statistic]
    rows = groups(gold, metric1, num_sys, average_by)
    rows2 = groups(gold, metric2, num_sys, average_by)
    require_numbers(rows + rows2, "bootstrap test")
    check_trials(k, 16 * max(len(rows[0][0]) if average_by == "none" else len(rows), 1), "the bootstrap test")
    rng = np.random.default_rng(seed)
    if average_by == "none":
        (g, a), (_, b) = rows[0], rows2[0]
        observed = fn(g, b, **options) - fn(g, a, **options)
        draws = rng.integers(0, len(g), size=(k, len(g)))
        diffs = np.array([fn(g[d], b[d], **options) - fn(g[d], a[d], **options) for d in draws])
    else:
        v1 = np.array([fn(g, m, **options) for g, m in rows])
        v2 = np.array([fn(g, m, **options) for g, m in rows2])
        observed = float(average_rows(v2, False) - average_rows(v1, False))
        draws = rng.integers(0, len(v1), size=(k, len(v1)))
        diffs = average_rows(v2[draws], False) - average_rows(v1[draws], False)
    diffs = diffs[~np.isnan(diffs)]
    return {"p_value": float(np.mean(diffs <= 0)), "delta": float(observed),
            "ci": [float(np.percentile(diffs, 2.5)), float(np.percentile(diffs, 97.5))], "trials": int(len(diffs))}
