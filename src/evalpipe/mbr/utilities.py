"""Utility matrices of MBR: each segment's candidates scored against its pseudo-references.

* :func:`pairwise` / :func:`pairwise_batch` / :func:`iter_pairwise`: the N x M utility matrix of one segment / of
  many.  Each value is the metric's own sentence score of the pair -- sacrebleu's, to the last bit, for BLEU, chrF
  and chrF++ with the same options.  Metrics with a ``pairwise_rows`` method (BLEU, chrF, chrF++) count every
  pair's statistics in one C pass per segment (``evaluators/kernels/pairwise_ngrams.c``: one segment's n-grams in
  memory, never a table per pair); any other metric is scored pair by pair from its ``stats``.
* :func:`aggregate_utilities`: reference aggregation (DeNero et al., 2009; Vamvas & Sennrich, 2024): the
  pseudo-references' n-gram statistics averaged once and each candidate scored against the average -- N scores
  instead of N x M; for metrics whose statistics allow it (chrF, chrF++, BLEU).
* :func:`segment_matrices` / :func:`model_matrices`: what a decoder reads -- the pairwise matrices, or with
  ``aggregate`` one column a segment (each candidate against the aggregate) -- for n-gram metrics and for metrics
  that run a model on the source (COMET, MetricX: float32 matrices from the model, in chunks of segments).
"""
from __future__ import annotations

from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple, TypeVar

import numpy as np

from evalpipe.errors import InputError, UsageError


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


T = TypeVar("T")

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


def _in_order(compute: Callable[[Tuple[int, int]], T], chunks: List[Tuple[int, int]]) -> Iterator[T]:
    """``compute`` of each chunk, in order; on :func:`~evalpipe.engines.base.kernel_threads` threads when the
    engine gave more than one (``pairwise_rows`` runs its C kernels without the GIL, and each call is independent),
    at most that many chunks ahead, so memory holds a few chunks, not the whole run."""
    from evalpipe.engines.base import kernel_threads

    threads = min(kernel_threads(), len(chunks))
    if threads < 2:
        yield from map(compute, chunks)
        return
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(threads) as pool:
        ahead: deque = deque()
        for chunk in chunks:
            ahead.append(pool.submit(compute, chunk))
            if len(ahead) > threads:
                yield ahead.popleft().result()
        while ahead:
            yield ahead.popleft().result()


def _thread_chunks(candidates: Sequence[Sequence[str]], refs: Sequence[Sequence[str]]) -> List[Tuple[int, int]]:
    """:func:`_chunks`, cut so that each of the kernel threads gets about four."""
    from evalpipe.engines.base import kernel_threads

    chunks = list(_chunks(candidates, refs))
    threads = kernel_threads()
    if threads < 2:
        return chunks
    size = max(1, -(-len(candidates) // (4 * threads)))
    return [(c, min(c + size, b)) for a, b in chunks for c in range(a, b, size)]


def iter_pairwise(metric: Any, candidates: Sequence[Sequence[str]],
                  pseudo_references: Optional[Sequence[Sequence[str]]] = None) -> Iterator[np.ndarray]:
    """:func:`pairwise_batch` one segment at a time, computed in chunks of about ``PAIRS_PER_CHUNK`` pairs."""
    refs = candidates if pseudo_references is None else pseudo_references
    _check(candidates, refs)
    fast = getattr(metric, "pairwise_rows", None)

    def scored(chunk: Tuple[int, int]) -> np.ndarray:
        cands, rs = candidates[chunk[0]:chunk[1]], refs[chunk[0]:chunk[1]]
        if fast is not None:
            return _sentence_scores(metric, fast(cands, rs))
        return np.array([metric.score(metric.stats(h, [r])) for cs, rr in zip(cands, rs) for h in cs for r in rr],
                        dtype=np.float64)

    if fast is not None:  # C kernels: on the engine's threads
        chunks = _thread_chunks(candidates, refs)
        computed = _in_order(scored, chunks)
    else:
        chunks = list(_chunks(candidates, refs))
        computed = map(scored, chunks)
    for (a, b), scores in zip(chunks, computed):
        cands, rs = candidates[a:b], refs[a:b]
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
    def scored(chunk: Tuple[int, int]) -> np.ndarray:  # from fractional statistics
        return _sentence_scores(metric, fast(candidates[chunk[0]:chunk[1]], refs[chunk[0]:chunk[1]], aggregate=True))

    out = []
    chunks = _thread_chunks(candidates, refs)
    for (a, b), scores in zip(chunks, _in_order(scored, chunks)):
        at = 0
        for cands in candidates[a:b]:
            out.append(scores[at:at + len(cands)])
            at += len(cands)
    return out


def segment_matrices(metric: Any, candidates: Sequence[Sequence[str]],
                     pseudo_references: Optional[Sequence[Sequence[str]]], aggregate: bool) -> Iterator[np.ndarray]:
    """Every segment's matrix (module docstring), one at a time."""
    if aggregate:
        for u in aggregate_utilities(metric, candidates, pseudo_references):
            yield np.asarray(u, dtype=np.float64).reshape(-1, 1)
        return
    yield from iter_pairwise(metric, candidates, pseudo_references)


def model_matrices(metric: Any, candidates: Sequence[Sequence[str]],
                   pseudo_references: Optional[Sequence[Sequence[str]]], sources: Optional[Sequence[str]],
                   aggregate: bool) -> Iterator[np.ndarray]:
    """:func:`segment_matrices` of a metric that runs a model on the source (``reads_source``): its float32
    matrices come from the model in chunks of segments (each distinct sentence of a chunk encoded once)."""
    if sources is None:
        raise UsageError(f"{metric.name} reads the source of each segment: give the sources (--source FILE)")
    if len(sources) != len(candidates):
        raise InputError(f"{len(sources)} sources for {len(candidates)} segments of candidates")
    refs = candidates if pseudo_references is None else pseudo_references
    for a, b in _chunks(candidates, refs):
        yield from metric.utility_matrices(candidates[a:b], None if pseudo_references is None else refs[a:b],
                                           sources[a:b], aggregate)
