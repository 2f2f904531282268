"""The tuner: MERT over an n-best list with any scorer that speaks the line protocol.

1. Every distinct ``(segment, hypothesis)`` of the n-best list gets its stats vector from the scorer
   (``SCORE`` requests, pipelined; repeated hypotheses are scored once).
2. From each start point (the given weights, then ``restarts`` random points drawn with ``seed``), the
   weights move along the best of the coordinate directions and ``random_directions`` random ones,
   each searched exactly (:func:`~evalpipe.tune.linesearch.line_search`, all candidate selections of a
   direction scored in one ``EVAL`` request), until no direction improves the score.
3. The best weights over all starts are returned, L1-normalised (the selection does not change), with
   the tuning curve: the score after every accepted move.

The scorer sums nothing itself and is asked only for ``score(sum of stats)``, so any additive metric or
combination tunes, quality-minus-latency included.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from evalpipe.errors import InputError
from evalpipe.tune.linesearch import line_search, select
from evalpipe.tune.nbest import NBest


@dataclass
class TuneResult:
    """Tuned weights by feature name, their score on the tuning set, and the tuning curve."""

    weights: Dict[str, float]
    score: float
    curve: List[Dict[str, Any]] = field(default_factory=list)


def nbest_stats(nbest: NBest, references: Sequence[Sequence[str]], client: Any) -> Dict[int, np.ndarray]:
    """Stats matrix (hypotheses x stats) of every segment, each distinct hypothesis scored once."""
    missing = [sid for sid in nbest.ids if not 0 <= sid < len(references[0])]
    if missing:
        raise InputError(f"n-best segment id {missing[0]} has no reference (the references have "
                         f"{len(references[0])} lines, ids are 0-based)")
    keys = list(dict.fromkeys((sid, h) for sid in nbest.ids for h in nbest.hypotheses[sid]))
    rows = client.score_many([(h, [stream[sid] for stream in references]) for sid, h in keys])
    table = dict(zip(keys, rows))
    return {sid: np.array([table[(sid, h)] for h in nbest.hypotheses[sid]], dtype=np.float64) for sid in nbest.ids}


def corpus_score(stats: Dict[int, np.ndarray], features: Dict[int, np.ndarray], ids: Sequence[int],
                 w: np.ndarray, client: Any) -> float:
    """The score of the selection under ``w`` on segments ``ids``."""
    chosen = select([features[s] for s in ids], w)
    total = np.sum([stats[s][k] for s, k in zip(ids, chosen)], axis=0)
    return client.evaluate_many([total.tolist()])[1]


def mert(nbest: NBest, stats: Dict[int, np.ndarray], client: Any, start: Optional[np.ndarray] = None,
         restarts: int = 5, random_directions: int = 2, seed: int = 0, higher_is_better: bool = True,
         max_iterations: int = 50, ids: Optional[Sequence[int]] = None, log: Any = None) -> TuneResult:
    """MERT (see the module docstring) on segments ``ids`` (default: all)."""
    ids = list(nbest.ids if ids is None else ids)
    features = [nbest.features[s] for s in ids]
    seg_stats = [stats[s] for s in ids]
    dims = len(nbest.feature_names)
    rng = np.random.default_rng(seed)

    def score_rows(rows: np.ndarray) -> np.ndarray:
        return np.array(client.evaluate_many(rows.tolist())[0])

    def better(a: float, b: float) -> bool:
        return a > b if higher_is_better else a < b

    starts = [np.ones(dims) if start is None else np.asarray(start, dtype=np.float64)]
    starts += [rng.uniform(-1, 1, dims) for _ in range(restarts)]
    best_w, best_score, curve = None, None, []
    for run, w in enumerate(starts):
        current = corpus_score(stats, nbest.features, ids, w, client)
        curve.append({"start": run, "iteration": 0, "score": current})
        for iteration in range(1, max_iterations + 1):
            directions = [np.eye(dims)[i] for i in range(dims)] + [rng.normal(size=dims) for _ in range(random_directions)]
            move = None
            for d in directions:
                value, gamma = line_search(features, seg_stats, w, d, score_rows, higher_is_better)
                if gamma != 0.0 and better(value, current if move is None else move[0]):
                    move = (value, w + gamma * d)
            if move is None:
                break
            value = corpus_score(stats, nbest.features, ids, move[1], client)  # the selection it really makes
            if not better(value, current):
                break
            current, w = value, move[1]
            curve.append({"start": run, "iteration": iteration, "score": current})
            if log:
                log(f"start {run} iteration {iteration}: {current:.4f}")
        if best_score is None or better(current, best_score):
            best_w, best_score = w, current
    norm = np.abs(best_w).sum() or 1.0
    return TuneResult(dict(zip(nbest.feature_names, (best_w / norm).tolist())), best_score, curve)
