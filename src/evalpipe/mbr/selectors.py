"""From expected utilities to the n-best list: the n best (``nbest``) or a diverse n-best (``diverse``), as mbrs
0.1.8's ``SelectorNbest`` and ``SelectorDiverse``.

``nbest``: the ``n`` highest expected utilities (lowest when lower is better), best first; ties to the first
candidate, or with ``ties="mbrs"`` in ``torch.topk``'s order over float32 utilities.

``diverse`` (mbrs's diverse MBR): the set S of n candidates maximizing (minimizing when lower is better)

    mean_{i in S} E[u_i] + lambda * sum_{i != j in S} D_ij / (n (n - 1))

where D is the diversity metric's pairwise matrix over the candidates (sentence BLEU by default), negated when
the utility is higher-is-better (so that dissimilar pairs add), its diagonal zero.  The set is built greedily
(each step the candidate that improves the objective most, the first on ties), then improved by
``iterations`` rounds of local search: drop ``neighbors`` of the set drawn at random (a generator seeded by
``seed``; torch's where installed, the same draws as mbrs), add back greedily, keep the change unless the old set
was strictly better.  The set is listed best expected utility first.
"""
from __future__ import annotations

from typing import List, NamedTuple, Tuple

import numpy as np

from evalpipe.mbr.draws import Draws


def nbest(utilities: np.ndarray, n: int, higher_is_better: bool, ties: str = "first") -> List[int]:
    """The indices of the ``n`` best finite utilities, best first."""
    u = np.asarray(utilities, dtype=np.float64)
    finite = np.nonzero(np.isfinite(u))[0]
    n = min(n, len(finite))
    if ties == "mbrs":
        from evalpipe.mbr.select import _torch

        torch = _torch()
        got = torch.topk(torch.from_numpy(u[finite].astype(np.float32)), k=n, largest=higher_is_better).indices
        return [int(finite[i]) for i in got.tolist()]
    order = np.argsort(-u[finite] if higher_is_better else u[finite], kind="stable")
    return [int(finite[i]) for i in order[:n]]


class Objective(NamedTuple):
    score: float
    expected: float
    diversity: float


def objective(utilities: np.ndarray, dissimilarity: np.ndarray, chosen: np.ndarray, lam: float) -> Objective:
    """The diverse selector's objective of the set ``chosen`` (a boolean mask)."""
    k = int(chosen.sum())
    m = chosen.astype(np.float64)
    expected = float(utilities[chosen].sum() / k)
    diversity = float(m @ dissimilarity @ m / k / max(k - 1, 1))
    return Objective(expected + lam * diversity, expected, diversity)


def _better(a: float, b: float, higher_is_better: bool) -> bool:
    return a > b if higher_is_better else a < b


def _add_best(utilities: np.ndarray, dis: np.ndarray, chosen: np.ndarray, lam: float, higher_is_better: bool) -> None:
    best, best_i = (float("-inf") if higher_is_better else float("inf")), -1
    for i in range(len(utilities)):
        if chosen[i]:
            continue
        chosen[i] = True
        score = objective(utilities, dis, chosen, lam).score
        chosen[i] = False
        if _better(score, best, higher_is_better):
            best, best_i = score, i
    chosen[best_i] = True


def diverse(utilities: np.ndarray, similarity: np.ndarray, n: int, higher_is_better: bool, lam: float,
            iterations: int, neighbors: int, seed: int, draws: str, ties: str = "first") -> Tuple[List[int], Objective]:
    """``(the diverse n-best, best expected utility first; the set's objective)`` (module docstring);
    ``similarity``: the diversity metric's candidates x candidates matrix."""
    u = np.asarray(utilities, dtype=np.float64)
    n = min(n, len(u))
    dis = np.array(similarity, dtype=np.float64) * (-1.0 if higher_is_better else 1.0)
    np.fill_diagonal(dis, 0.0)
    chosen = np.zeros(len(u), dtype=bool)
    for _ in range(n):
        _add_best(u, dis, chosen, lam, higher_is_better)
    g = Draws(seed, draws)
    swap = min(neighbors, n)
    for _ in range(iterations):
        before = chosen.copy()
        members = np.nonzero(chosen)[0]
        for k in g.randperm(n)[:swap]:
            chosen[members[k]] = False
        for _ in range(swap):
            _add_best(u, dis, chosen, lam, higher_is_better)
        if _better(objective(u, dis, before, lam).score, objective(u, dis, chosen, lam).score, higher_is_better):
            chosen = before
    return nbest(np.where(chosen, u, np.nan), n, higher_is_better, ties), objective(u, dis, chosen, lam)
