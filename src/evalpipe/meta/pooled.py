"""System-level pairwise accuracy pooled over language pairs, with its significance matrix (WMT22/WMT23's headline).

MT Metrics Eval's ``data.CompareMetricsWithGlobalAccuracy`` (a ``tasks.Task`` with ``corr_fcn='accuracy'`` and
``lang='en-de,zh-en'``): within each language pair, every pair of systems is a pair whose human and metric
differences agree in sign (``np.sign(gold_a - gold_b) == np.sign(metric_a - metric_b)``: both ties agree; MTME's
``stats.Agreement``, a pair with a None human score left out); the accuracy is the agreeing pairs of every language
pair over all their pairs, ``sum A / sum P`` -- pairs of systems of different language pairs are never compared.

Significance: MTME's PERM-BOTH test on the merged vectors (the language pairs' systems end to end): each metric's
scores z-normalized over all of them at once (``scipy.stats.zscore``), a fair coin per system swapping the two
metrics' scores, the accuracy of each mix, early stopping in blocks.  ``mode="mtme"`` draws MTME's legacy stream
trial by trial (``numpy.random.binomial(1, 0.5, N)``; with the same systems in the same order, p-values equal
MTME's); ``mode="fast"`` draws all trials at once from ``default_rng`` and reads each pair's outcome from a table of
its four coin cases (the pair's two coins decide which scores are compared), so a trial is one gather and one sum.
Integer agreement counts throughout: a trial's accuracy is ``A / P`` as MTME divides it, so ties in the difference
compare as MTME's do.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from evalpipe.errors import InputError, UsageError
from evalpipe.meta.significance import EarlyStopping, mtme_trials, ranked_matrix


class Part:
    """One language pair's systems: human scores (None: unrated) and the pairs of systems compared."""

    def __init__(self, name: str, gold: Sequence[Optional[float]]) -> None:
        self.name = name
        self.gold = list(gold)
        n = len(self.gold)
        i, j = np.triu_indices(n, 1)
        keep = np.array([self.gold[a] is not None and self.gold[b] is not None for a, b in zip(i, j)], dtype=bool)
        self.i, self.j = i[keep], j[keep]
        g = np.array([np.nan if v is None else float(v) for v in self.gold])
        self.gold_sign = np.sign(g[self.i] - g[self.j])
        self.pairs = int(keep.sum())

    def agree(self, metric: np.ndarray) -> int:
        return int(np.count_nonzero(np.sign(metric[self.i] - metric[self.j]) == self.gold_sign))


def _zscore(v: np.ndarray) -> np.ndarray:
    return (v - v.mean()) / v.std()


def _check(parts: Sequence[Part], metric: Sequence[float], name: str) -> np.ndarray:
    need = sum(len(p.gold) for p in parts)
    if len(metric) != need:
        raise InputError(f"{name}: {len(metric)} metric scores for {need} systems of {', '.join(p.name for p in parts)}")
    values = np.asarray(metric, dtype=np.float64)
    if np.isnan(values).any():
        raise InputError(f"{name}: a NaN metric score (pooled accuracy compares numbers)")
    return values


def pooled_accuracy(parts: Sequence[Part], metric: Sequence[float], name: str = "metric") -> Tuple[float, int]:
    """``(accuracy, pairs)``: agreeing system pairs of every part over all their pairs."""
    values = _check(parts, metric, name)
    total = sum(p.pairs for p in parts)
    if not total:
        raise InputError(f"{name}: no pair of systems with human scores in {', '.join(p.name for p in parts)}")
    agree, start = 0, 0
    for p in parts:
        agree += p.agree(values[start:start + len(p.gold)])
        start += len(p.gold)
    return agree / total, total


def _bounds(parts: Sequence[Part]) -> List[int]:
    return list(np.cumsum([0] + [len(p.gold) for p in parts]))


def permutation_test(parts: Sequence[Part], metric1: Sequence[float], metric2: Sequence[float], k: int = 1000,
                     seed: Optional[int] = None, mode: str = "fast", block_size: int = 100, early_min: float = 0.02,
                     early_max: float = 0.5, random_state: Optional[np.random.RandomState] = None) -> Dict[str, Any]:
    """``{"p_value", "delta", "trials"}``: is metric2's pooled accuracy higher than metric1's (module docstring)?"""
    if mode not in ("fast", "mtme"):
        raise UsageError(f"expected mode fast or mtme, got {mode!r}")
    s1, s2 = _zscore(_check(parts, metric1, "metric 1")), _zscore(_check(parts, metric2, "metric 2"))
    total = sum(p.pairs for p in parts)
    bounds = _bounds(parts)

    def acc(m: np.ndarray) -> float:
        return sum(p.agree(m[b:e]) for p, b, e in zip(parts, bounds, bounds[1:])) / total

    delta = acc(s2) - acc(s1)
    n = len(s1)
    if mode == "mtme":
        rng = random_state if random_state is not None else np.random.RandomState(seed)
        return mtme_trials(acc, s1, s2, delta, k, block_size, early_min, early_max, rng)
    # fast: each pair's agreement under its four coin cases (coin of i, coin of j), for both mixes
    gi = np.concatenate([p.i + b for p, b in zip(parts, bounds)]).astype(np.int64)
    gj = np.concatenate([p.j + b for p, b in zip(parts, bounds)]).astype(np.int64)
    gold_sign = np.concatenate([p.gold_sign for p in parts])
    table1 = np.empty((len(gi), 4), dtype=np.int8)  # mix 1 takes s1 where the coin is 1
    table2 = np.empty((len(gi), 4), dtype=np.int8)
    for code, (ci, cj) in enumerate(((0, 0), (0, 1), (1, 0), (1, 1))):
        a1, b1 = (s1 if ci else s2)[gi], (s1 if cj else s2)[gj]
        a2, b2 = (s2 if ci else s1)[gi], (s2 if cj else s1)[gj]
        table1[:, code] = np.sign(a1 - b1) == gold_sign
        table2[:, code] = np.sign(a2 - b2) == gold_sign
    rng = np.random.default_rng(seed)
    stop = EarlyStopping(k, block_size, early_min, early_max)
    batch = max(1, min(k, 20_000_000 // max(len(gi), 1)))
    rows = np.arange(len(gi))
    for size in stop.batches(batch):
        w = rng.integers(0, 2, size=(size, n), dtype=np.int8)
        code = 2 * w[:, gi] + w[:, gj]
        a1 = table1[rows, code].sum(axis=1, dtype=np.int64)
        a2 = table2[rows, code].sum(axis=1, dtype=np.int64)
        stop.add(a2 / total - a1 / total >= delta)
    return stop.result(delta)


def significance_matrix(parts: Sequence[Part], metrics: Dict[str, Sequence[float]], k: int = 1000,
                        seed: Optional[int] = None, mode: str = "fast", threshold: float = 0.05,
                        block_size: int = 100) -> Dict[str, Any]:
    """Metrics ranked by pooled accuracy (the name breaks ties, as MTME) with significance clusters: ``matrix[i][j]``
    (i < j) is the p-value of the test that metric i is more accurate than metric j; in mtme mode every test draws from
    one legacy generator seeded once, in MTME's order."""
    accs = {name: pooled_accuracy(parts, scores, name)[0] for name, scores in metrics.items()}
    result = ranked_matrix(accs, None if not k else lambda worse, better, **draw: permutation_test(
        parts, metrics[worse], metrics[better], k=k, mode=mode, block_size=block_size, **draw), seed, mode, threshold)
    return dict(result, pairs=sum(p.pairs for p in parts))
