"""Och's exact line search (Och, 2003, "Minimum Error Rate Training in Statistical Machine Translation").

Along ``w + gamma * d`` every hypothesis k of a segment has model score ``a_k + gamma * b_k``
(``a = F w``, ``b = F d``), so each segment's best hypothesis is given by the upper envelope of those
lines: it changes only at finitely many ``gamma``.  The envelopes of all segments are merged into one
sorted list of change points; between two consecutive points the selection, hence its summed stats
vector, is constant (change points closer than 1e-9, relative, are merged: an interval that narrow is
rounding noise, not a selection).  The stats of every interval are built by adding each change's difference once,
and all intervals are scored in one request (the scorer scores summed stats, so any additive metric
works).  The result is the exact best ``gamma`` (an interval's midpoint; one unit beyond the first or
last point for the unbounded ends), not a grid search.
"""
from __future__ import annotations

from typing import Callable, List, Sequence, Tuple

import numpy as np

Scorer = Callable[[np.ndarray], np.ndarray]  # (intervals x stats) -> scores, one per row


def envelope(a: np.ndarray, b: np.ndarray) -> Tuple[List[float], List[int]]:
    """The upper envelope of lines ``a_k + gamma * b_k``: ``(starts, best)`` where hypothesis
    ``best[i]`` is the argmax from ``starts[i]`` (``starts[0] = -inf``) up to ``starts[i + 1]``.
    Among equal lines the first hypothesis wins."""
    order = sorted(range(len(a)), key=lambda k: (b[k], a[k], -k))
    hull: List[int] = []
    starts: List[float] = []
    for k in order:
        if hull and b[hull[-1]] == b[k]:  # same slope: the higher (or, equal, the earlier) line stays
            if a[k] > a[hull[-1]] or (a[k] == a[hull[-1]] and k < hull[-1]):
                hull.pop()
                starts.pop()
            else:
                continue
        while hull:
            x = (a[hull[-1]] - a[k]) / (b[k] - b[hull[-1]])  # where k overtakes the top line
            if x <= starts[-1]:
                hull.pop()
                starts.pop()
            else:
                break
        starts.append(-np.inf if not hull else (a[hull[-1]] - a[k]) / (b[k] - b[hull[-1]]))
        hull.append(k)
    return starts, hull


def line_search(features: Sequence[np.ndarray], stats: Sequence[np.ndarray], w: np.ndarray, d: np.ndarray,
                score_rows: Scorer, higher_is_better: bool = True) -> Tuple[float, float]:
    """``(best score, gamma)`` along ``w + gamma * d`` (see the module docstring); ``features[s]`` and
    ``stats[s]`` are segment s's hypotheses x features and hypotheses x stats matrices."""
    total = np.zeros(stats[0].shape[1], dtype=np.float64)
    events: List[Tuple[float, int, int, int]] = []  # (gamma, segment, from hypothesis, to hypothesis)
    for s, (f, st) in enumerate(zip(features, stats)):
        starts, best = envelope(f @ w, f @ d)
        total += st[best[0]]
        events += [(starts[i], s, best[i - 1], best[i]) for i in range(1, len(best))]
    if not events:
        return float(score_rows(total[None, :])[0]), 0.0
    events.sort(key=lambda e: e[0])
    groups: List[List[Tuple[float, int, int, int]]] = []  # change points closer than rounding are one
    for event in events:
        if groups and event[0] - groups[-1][-1][0] <= 1e-9 * max(1.0, abs(event[0])):
            groups[-1].append(event)
        else:
            groups.append([event])
    rows = [total.copy()]
    for group in groups:
        for _, s, old, new in group:
            total += stats[s][new] - stats[s][old]
        rows.append(total.copy())
    firsts, lasts = [g[0][0] for g in groups], [g[-1][0] for g in groups]
    gammas = [firsts[0] - 1.0] + [(p + q) / 2 for p, q in zip(lasts, firsts[1:])] + [lasts[-1] + 1.0]
    scores = np.asarray(score_rows(np.array(rows)), dtype=np.float64)
    keyed = scores if higher_is_better else -scores
    j = min(np.flatnonzero(keyed == keyed.max()), key=lambda c: abs(gammas[c]))  # among equal scores, the smallest move
    return float(scores[j]), float(gammas[j])


def select(features: Sequence[np.ndarray], w: np.ndarray) -> List[int]:
    """Each segment's best hypothesis under weights ``w`` (the first among equals)."""
    return [int(np.argmax(f @ w)) for f in features]
