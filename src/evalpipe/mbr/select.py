"""From a segment's utility matrix to its choice: the expected utility of each candidate, and the selection.

A candidate's expected utility is the mean of its row (or the weighted mean, weights over pseudo-references); the
candidate with the highest one is chosen (the lowest for metrics where lower is better: TER, MetricX).  Ties go to
the first candidate (``ties="first"``, the default); ``ties="mbrs"`` reproduces mbrs 0.1.8's choice exactly: it
keeps utilities in float32 (the mean of a float32 matrix) and takes ``torch.topk(k=1)``, whose order among equal
values is torch's partial sort, not the first index -- so that mode needs torch.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

import numpy as np

from evalpipe.errors import InputError, UsageError
from evalpipe.optional_torch import load


def expected_utilities(matrix: np.ndarray, weights: Optional[Sequence[float]] = None) -> np.ndarray:
    """Each row's mean (uniform over pseudo-references) or weighted mean (weights normalized to sum 1)."""
    matrix = np.asarray(matrix, dtype=np.float64)
    if weights is None:
        return matrix.mean(axis=1)
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (matrix.shape[1],) or (w < 0).any() or not w.sum() > 0:
        raise InputError(f"expected {matrix.shape[1]} non-negative weights with a positive sum, got {w.tolist()}")
    return matrix @ (w / w.sum())


TIES = ("first", "mbrs")


def _torch() -> Any:
    return load("ties=mbrs breaks ties with torch.topk as mbrs does: it needs torch: pip install torch")


def select(utilities: np.ndarray, higher_is_better: bool = True, ties: str = "first") -> int:
    """The chosen candidate: the highest expected utility (the lowest when lower is better); on ties the first,
    or with ``ties="mbrs"`` the one ``torch.topk`` picks among the float32 utilities (mbrs's rule)."""
    if ties == "mbrs":
        torch = _torch()
        u32 = torch.from_numpy(np.asarray(utilities, dtype=np.float32))
        return int(torch.topk(u32, k=1, largest=higher_is_better).indices.item())
    if ties != "first":
        raise UsageError(f"expected ties first or mbrs, got {ties!r}")
    u = np.asarray(utilities, dtype=np.float64)
    return int(np.argmax(u) if higher_is_better else np.argmin(u))


def softmax(lprobs: Sequence[float]) -> np.ndarray:
    """The weights of log-probabilities: ``exp(l - max) / sum`` (float64)."""
    lp = np.asarray(lprobs, dtype=np.float64)
    e = np.exp(lp - lp.max())
    return e / e.sum()


def weighted_mean(matrix: np.ndarray, lprobs: Optional[Sequence[float]] = None) -> np.ndarray:
    """Each row's mean over the columns, or its mean weighted by the softmax of the columns' log-probabilities
    (float64): the expected utilities of the efficient decoders' matrices."""
    if lprobs is None:
        return np.asarray(matrix).mean(axis=-1)
    return np.asarray(matrix) @ softmax(lprobs)


def expectations(matrix: np.ndarray, weights: Optional[Sequence[float]], ties: str,
                 lprobs: Optional[Sequence[float]] = None) -> Tuple[np.ndarray, Any]:
    """One segment's ``(expected utilities, float32 means for ties="mbrs" or None)``: mbrs takes torch's mean of
    the float32 matrix (numpy sums float32 in another order).  A one-column matrix (reference aggregation) is its
    own expectation.  ``lprobs`` (one a pseudo-reference): the pseudo-references weighted by their softmax, as
    mbrs's ``reference_lprobs`` (its float32 rule for ties="mbrs": ``(matrix * softmax(lprobs)).sum(-1)``)."""
    if lprobs is not None:
        if len(lprobs) != matrix.shape[1]:
            raise InputError(f"expected {matrix.shape[1]} log-probabilities (one a pseudo-reference), got "
                             f"{len(lprobs)}")
        u = np.asarray(matrix, dtype=np.float64) @ softmax(lprobs)
        if ties != "mbrs":
            return u, None
        torch = _torch()
        m32 = torch.from_numpy(np.asarray(matrix, dtype=np.float32))
        w32 = torch.tensor(np.asarray(lprobs, dtype=np.float64)).to(m32).softmax(dim=-1, dtype=torch.float32)
        return u, (m32 * w32[None, :]).sum(dim=-1).numpy()
    if matrix.shape[1] == 1 and weights is None:
        u = np.asarray(matrix[:, 0], dtype=np.float64)
        return u, (u if ties == "mbrs" else None)
    return (expected_utilities(matrix, weights),
            _torch().from_numpy(np.asarray(matrix, dtype=np.float32)).mean(dim=-1).numpy() if ties == "mbrs" else None)
