"""Minimum Bayes risk decoding on sufficient statistics.

For each segment, N candidates (samples, an n-best list, or several systems' outputs) are scored against M
pseudo-references (by default the candidates themselves) with a utility metric; a candidate's expected
utility is the mean of its row (or the weighted mean, weights over pseudo-references), and the candidate
with the highest one is chosen (the lowest for metrics where lower is better, TER).  Ties go to the first
candidate (``ties="first"``, the default); ``ties="mbrs"`` reproduces mbrs 0.1.8's choice exactly: it keeps
utilities in float32 (the mean of a float32 matrix) and takes ``torch.topk(k=1)``, whose order among equal
values is torch's partial sort, not the first index -- so that mode needs torch.

* :func:`pairwise` / :func:`pairwise_batch`: the N x M utility matrix of one segment / of many.  Each value is
  the metric's own sentence score of the pair -- sacrebleu's, to the last bit, for BLEU, chrF and chrF++ with
  the same options.  Metrics with a ``pairwise_rows`` method (BLEU, chrF, chrF++) count every pair's
  statistics in one C pass per segment (``evaluators/kernels/pairwise_ngrams.c``: one segment's n-grams in
  memory, never a table per pair); any other metric is scored pair by pair from its ``stats``.
* :func:`aggregate_utilities`: reference aggregation (DeNero et al., 2009; Vamvas & Sennrich, 2024): the
  pseudo-references' n-gram statistics averaged once and each candidate scored against the average -- N
  scores instead of N x M; for metrics whose statistics allow it (chrF, chrF++, BLEU).
* :func:`expected_utilities`, :func:`select`, :func:`decode`.
"""
from __future__ import annotations

from typing import Any, Iterator, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from evalpipe.errors import InputError, MissingDependency, UsageError


def _sentence_scores(metric: Any, rows: np.ndarray) -> np.ndarray:
    exact = getattr(metric, "sentence_scores", None) or getattr(metric, "score_many", None)
    if exact is not None:
        return np.asarray(exact(rows), dtype=np.float64)
    return np.array([metric.score(list(r)) for r in np.asarray(rows).tolist()], dtype=np.float64)


def _check(candidates: Sequence[Sequence[str]], pseudo_references: Sequence[Sequence[str]]) -> None:
    if len(candidates) != len(pseudo_references):
        raise InputError(f"{len(candidates)} segments of candidates but {len(pseudo_references)} of pseudo-references")
    for g, (cands, refs) in enumerate(zip(candidates, pseudo_references), 1):
        if not len(cands):
            raise InputError(f"segment {g} has no candidate")
        if not len(refs):
            raise InputError(f"segment {g} has no pseudo-reference")
        for text in list(cands) + list(refs):
            if not isinstance(text, str):
                raise InputError(f"segment {g}: expected candidates and pseudo-references as strings, got "
                                 f"{type(text).__name__}")


PAIRS_PER_CHUNK = 100_000  # segments are scored in chunks of about this many pairs: memory does not grow with N^2 x G


def _chunks(candidates: Sequence[Sequence[str]], refs: Sequence[Sequence[str]]) -> Iterator[Tuple[int, int]]:
    start, pairs = 0, 0
    for g, (cands, rs) in enumerate(zip(candidates, refs)):
        pairs += len(cands) * len(rs)
        if pairs >= PAIRS_PER_CHUNK:
            yield start, g + 1
            start, pairs = g + 1, 0
    if start < len(candidates):
        yield start, len(candidates)


def iter_pairwise(metric: Any, candidates: Sequence[Sequence[str]],
                  pseudo_references: Optional[Sequence[Sequence[str]]] = None) -> Iterator[np.ndarray]:
    """:func:`pairwise_batch` one segment at a time, computed in chunks of about ``PAIRS_PER_CHUNK`` pairs."""
    refs = candidates if pseudo_references is None else pseudo_references
    _check(candidates, refs)
    fast = getattr(metric, "pairwise_rows", None)
    for a, b in _chunks(candidates, refs):
        cands, rs = candidates[a:b], refs[a:b]
        if fast is not None:
            scores = _sentence_scores(metric, fast(cands, rs))
        else:
            scores = np.array([metric.score(metric.stats(h, [r])) for cs, rr in zip(cands, rs) for h in cs for r in rr],
                              dtype=np.float64)
        at = 0
        for c, r in zip(cands, rs):
            n = len(c) * len(r)
            yield scores[at:at + n].reshape(len(c), len(r))
            at += n


def pairwise_batch(metric: Any, candidates: Sequence[Sequence[str]],
                   pseudo_references: Optional[Sequence[Sequence[str]]] = None) -> List[np.ndarray]:
    """For every segment, the ``len(candidates[g]) x len(pseudo_references[g])`` matrix of sentence scores
    (pseudo-references: the candidates themselves when None)."""
    return list(iter_pairwise(metric, candidates, pseudo_references))


def pairwise(metric: Any, candidates: Sequence[str], pseudo_references: Optional[Sequence[str]] = None) -> np.ndarray:
    """The ``N x M`` matrix of sentence scores of one segment's candidates against its pseudo-references."""
    return pairwise_batch(metric, [candidates], None if pseudo_references is None else [pseudo_references])[0]


def aggregate_utilities(metric: Any, candidates: Sequence[Sequence[str]],
                        pseudo_references: Optional[Sequence[Sequence[str]]] = None) -> List[np.ndarray]:
    """For every segment, each candidate's score against the mean statistics of the pseudo-references."""
    refs = candidates if pseudo_references is None else pseudo_references
    _check(candidates, refs)
    fast = getattr(metric, "pairwise_rows", None)
    if fast is None:
        raise UsageError(f"{metric.name}: reference aggregation needs n-gram statistics (chrf, bleu); use the "
                         f"full pairwise expectation")
    out = []
    for a, b in _chunks(candidates, refs):
        rows = fast(candidates[a:b], refs[a:b], aggregate=True)  # fractional statistics
        scores = _sentence_scores(metric, rows)
        at = 0
        for cands in candidates[a:b]:
            out.append(scores[at:at + len(cands)])
            at += len(cands)
    return out


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
    try:
        import torch
    except ImportError:
        raise MissingDependency("ties=mbrs breaks ties with torch.topk as mbrs does: it needs torch: pip install torch") from None
    return torch


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


class Choice(NamedTuple):
    """One segment's decision: the chosen candidate's index and text, and every candidate's expected utility."""

    index: int
    text: str
    utilities: List[float]


def segment_utilities(metric: Any, candidates: Sequence[Sequence[str]],
                      pseudo_references: Optional[Sequence[Sequence[str]]], aggregate: bool,
                      weights: Optional[Sequence[Sequence[float]]], ties: str) -> List[Tuple[np.ndarray, Any]]:
    """For every segment, ``(expected utilities, float32 means for ties="mbrs" or None)``."""
    if aggregate:
        return [(u, u) for u in aggregate_utilities(metric, candidates, pseudo_references)]
    out = []
    for g, m in enumerate(iter_pairwise(metric, candidates, pseudo_references)):
        out.append(_expectations(m, None if weights is None else weights[g], ties))
    return out


def _expectations(matrix: np.ndarray, weights: Optional[Sequence[float]], ties: str) -> Tuple[np.ndarray, Any]:
    """One segment's ``(expected utilities, float32 means for ties="mbrs" or None)``: mbrs takes torch's mean of
    the float32 matrix (numpy sums float32 in another order)."""
    return (expected_utilities(matrix, weights),
            _torch().from_numpy(np.asarray(matrix, dtype=np.float32)).mean(dim=-1).numpy() if ties == "mbrs" else None)


def model_utilities(metric: Any, candidates: Sequence[Sequence[str]],
                    pseudo_references: Optional[Sequence[Sequence[str]]], sources: Optional[Sequence[str]],
                    aggregate: bool, weights: Optional[Sequence[Sequence[float]]],
                    ties: str) -> List[Tuple[np.ndarray, Any]]:
    """:func:`segment_utilities` of a metric that runs a model on the source (COMET, ``reads_source``): its float32
    utility matrices come from the model in chunks of segments (each distinct sentence of a chunk encoded once);
    the expectation is the row mean (float32, as mbrs takes it, for ``ties="mbrs"``) or the weighted mean."""
    if sources is None:
        raise UsageError(f"{metric.name} reads the source of each segment: give the sources (--source FILE)")
    if len(sources) != len(candidates):
        raise InputError(f"{len(sources)} sources for {len(candidates)} segments of candidates")
    refs = candidates if pseudo_references is None else pseudo_references
    out: List[Tuple[np.ndarray, Any]] = []
    for a, b in _chunks(candidates, refs):
        matrices = metric.utility_matrices(candidates[a:b], None if pseudo_references is None else refs[a:b],
                                           sources[a:b], aggregate)
        out += [_expectations(m, None if weights is None else weights[g], ties) for g, m in enumerate(matrices, a)]
    return out


def decode(metric: Any, candidates: Sequence[Sequence[str]], pseudo_references: Optional[Sequence[Sequence[str]]] = None,
           aggregate: bool = False, weights: Optional[Sequence[Sequence[float]]] = None, ties: str = "first",
           engine: Any = None, sources: Optional[Sequence[str]] = None) -> List[Choice]:
    """MBR decisions of every segment (``weights[g]``: segment g's weights over its pseudo-references; ``ties``:
    see :func:`select`).  With an ``engine`` (:func:`evalpipe.engines.make_engine`) the segments are computed
    where it runs them -- every core by default -- with the same choices.  ``sources``: one a segment, for metrics
    that read them (COMET: :func:`model_utilities`, in this process, whatever the engine)."""
    model = getattr(metric, "reads_source", False)
    if sources is not None and not model:
        raise UsageError(f"{metric.name} does not read the source: give no sources (they are read by -m comet)")
    if ties not in TIES:
        raise UsageError(f"expected ties first or mbrs, got {ties!r}")
    if ties == "mbrs" and weights is not None:
        raise UsageError("ties=mbrs reproduces mbrs's uniform expectation; weights are not part of it")
    if ties == "mbrs":
        _torch()
    if aggregate and weights is not None:
        raise UsageError("weights over pseudo-references go with the full pairwise expectation, not --aggregate")
    if aggregate and not model and getattr(metric, "pairwise_rows", None) is None:
        aggregate_utilities(metric, [], [])  # the metric's refusal before any work
    _check(candidates, candidates if pseudo_references is None else pseudo_references)
    if model:
        rows = model_utilities(metric, candidates, pseudo_references, sources, aggregate, weights, ties)
    elif engine is None:
        rows = segment_utilities(metric, candidates, pseudo_references, aggregate, weights, ties)
    else:
        from evalpipe.engines import Job
        from evalpipe.mbr.sets import CandidateSets, Given

        rows = engine.rows(Job(Given(metric), CandidateSets(candidates, pseudo_references, weights, aggregate, ties)))
    choices = []
    for cands, (u, kept) in zip(candidates, rows):
        k = select(kept if ties == "mbrs" else u, metric.higher_is_better, ties)
        choices.append(Choice(k, cands[k], u.tolist()))
    return choices
