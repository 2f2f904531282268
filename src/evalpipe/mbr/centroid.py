"""Centroid-based MBR (Deguchi et al., 2024, "Centroid-Based Efficient Minimum Bayes Risk Decoding"; mbrs 0.1.8's
``DecoderCentroidMBR``).

The pseudo-references' vectors (:mod:`.cells`: a COMET model's sentence embeddings; chrF's and BLEU's statistic
vectors, the n-gram counts) are clustered by k-means into ``ncentroids`` centroids, and each candidate is scored
against the centroids instead of every pseudo-reference: ``H x k`` utilities instead of ``H x R``.  The expected
utility is the mean over centroids, or with ``count_weight`` weighted by how many pseudo-references are assigned to each;
with pseudo-references' log-probabilities, each centroid weighs the sum of its assigned ones' probabilities.

k-means as mbrs's ``Kmeans``: one centroid is the mean of all vectors; ``R <= k`` vectors are their own centroids
(exact MBR); otherwise k-means++ seeding (the first vector drawn uniformly, each next one with probability
proportional to its squared distance to the nearest chosen, clamped at 1e-5), then up to ``kmeans_iterations``
rounds of assigning each vector to its nearest centroid (the first on ties) and moving each centroid that got
vectors to their mean, stopping when no assignment changes.  Every centroid is the mean of a set of
pseudo-references (its members: those last assigned to it, or its seed), which is what an n-gram centroid is
scored as.

One difference from mbrs 0.1.8, deliberate: with ``reference_lprobs`` mbrs adds the probabilities to the clusters
with ``scatter_add(index=assigns.unique(), src=probabilities)``, which adds the first ``u`` probabilities to the
``u`` distinct clusters rather than each probability to its own cluster; evalpipe adds each to its own.
"""
from __future__ import annotations

from typing import Any, Generator, List, Tuple, Union

import numpy as np

from evalpipe.mbr.cells import Against, Segment, Vectors
from evalpipe.mbr.draws import Draws


def _ops(draws: str) -> Tuple[Any, Any]:
    """``(distances, mean)``: the Euclidean distance matrix of two sets of rows and the mean of rows.  With torch
    draws torch's own (``cdist``, ``mean``: mbrs's operations, so that near-ties in float32 embeddings fall as
    they fall in mbrs), otherwise numpy's in float64."""
    if draws == "torch":
        import torch

        def distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
            return torch.cdist(torch.from_numpy(np.ascontiguousarray(a)), torch.from_numpy(np.ascontiguousarray(b)),
                               p=2).numpy()

        def mean(rows: np.ndarray) -> np.ndarray:
            return torch.from_numpy(np.ascontiguousarray(rows)).mean(dim=0).numpy()

        return distances, mean

    def distances64(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a64, b64 = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        return np.sqrt(((a64[:, None, :] - b64[None, :, :]) ** 2).sum(axis=-1))

    return distances64, (lambda rows: np.asarray(rows, dtype=np.float64).mean(axis=0))


def kmeans(x: np.ndarray, k: int, iterations: int, seed: int, draws: str) -> Tuple[np.ndarray, np.ndarray, List[List[int]]]:
    """``(centroids, each vector's centroid, each centroid's members)`` (module docstring)."""
    n = len(x)
    distances, mean = _ops(draws)
    if k == 1:
        return mean(x)[None, :].astype(x.dtype), np.zeros(n, dtype=np.int64), [list(range(n))]
    if n <= k:
        return x.copy(), np.arange(n), [[i] for i in range(n)]
    g = Draws(seed, draws)
    chosen = [int(g.randint(n, (1,))[0])]
    for _ in range(k - 1):
        nearest = (distances(x[chosen], x) ** 2).min(axis=0).astype(np.float32)
        nearest = np.maximum(nearest, np.float32(1e-5))
        chosen.append(g.choice(nearest / nearest.sum()))
    centroids = x[chosen].astype(x.dtype, copy=True)
    members = [[i] for i in chosen]
    assigns = np.full(n, -1)
    for _ in range(iterations):
        new = distances(x, centroids).argmin(axis=1)
        if (new == assigns).all():
            break
        assigns = new
        for c in range(k):
            here = np.nonzero(assigns == c)[0]
            if len(here):
                centroids[c] = mean(x[here])
                members[c] = here.tolist()
    return centroids, assigns, members


def decode(seg: Segment, cfg: Any, draws: str) -> Generator[Union[Vectors, Against], Any, Tuple[np.ndarray, np.ndarray]]:
    """One segment: asks for the pseudo-references' vectors, then the candidates against the centroids; returns
    ``(the H x k matrix, the centroids' log-weights or None)``."""
    x = yield Vectors()
    centroids, assigns, members = kmeans(np.asarray(x), cfg.ncentroids, cfg.kmeans_iterations, cfg.seed, draws)
    matrix = yield Against(centroids, members)
    lprobs = None
    if cfg.count_weight:
        with np.errstate(divide="ignore"):
            lprobs = np.log(np.bincount(assigns, minlength=len(members)).astype(np.float64))
    elif seg.lprobs is not None:
        lp = np.asarray(seg.lprobs, dtype=np.float64)
        p = np.exp(lp - lp.max())
        p /= p.sum()
        with np.errstate(divide="ignore"):
            lprobs = np.log(np.bincount(assigns, weights=p, minlength=len(members)))
    return np.asarray(matrix, dtype=np.float64), lprobs
