"""MBR segments as an engine input, so that every core works on a large pool of candidates.

:class:`CandidateSets` is an :class:`~evalpipe.inputs.Input` whose "stats row" of a segment is its decision
material (:data:`Row`: the expected utilities, the float32 means for ties="mbrs", the matrix
when it is to be saved).  An engine splits it into contiguous runs of segments and computes each run where it runs
(:func:`segment_rows`); the pool gives
the rows back in order, so the choices are the same on every worker count.
"""
from __future__ import annotations

from typing import Any, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from evalpipe.inputs import Input, chunk_bounds
from evalpipe.mbr.select import expectations
from evalpipe.mbr.utilities import model_matrices, segment_matrices

PAIRS_PER_WORK = 20  # about the cost of one text segment of BLEU + chrF (a pair of chrF takes ~1 us, a segment ~20 us)


#: one segment's decision material: (expected utilities, float32 means for ties="mbrs" or None, the matrix or None)
Row = Tuple[np.ndarray, Any, Optional[np.ndarray]]


def segment_rows(metric: Any, candidates: Sequence[Sequence[str]],
                 pseudo_references: Optional[Sequence[Sequence[str]]], aggregate: bool,
                 weights: Optional[Sequence[Sequence[float]]], ties: str, keep: bool = False,
                 sources: Optional[Sequence[str]] = None,
                 lprobs: Optional[Sequence[Sequence[float]]] = None) -> List[Row]:
    """For every segment, its :data:`Row` (the matrix only when ``keep``: a file is to be written)."""
    if getattr(metric, "reads_source", False):
        matrices = model_matrices(metric, candidates, pseudo_references, sources, aggregate)
    else:
        matrices = segment_matrices(metric, candidates, pseudo_references, aggregate)
    out = []
    for g, m in enumerate(matrices):
        m = np.asarray(m)
        u, kept = expectations(m, None if weights is None else weights[g], ties, None if lprobs is None else lprobs[g])
        out.append((u, kept, np.asarray(m, dtype=np.float64) if keep else None))
    return out


class Given:
    """A job's spec for a metric already built (a pool forked after the job was made inherits it)."""

    def __init__(self, metric: Any) -> None:
        self.metric = metric

    def build(self) -> Any:
        return self.metric


class CandidateSets(Input):
    """Candidates per segment, pseudo-references per segment (None: the candidates), weights per segment (or
    None), how the expectation is taken (``aggregate``, ``ties``) and whether the matrices come back (``keep``)."""

    def __init__(self, candidates: Sequence[Sequence[str]], pseudo_references: Optional[Sequence[Sequence[str]]],
                 weights: Optional[Sequence[Sequence[float]]], aggregate: bool, ties: str, keep: bool = False,
                 lprobs: Optional[Sequence[Sequence[float]]] = None) -> None:
        self.candidates, self.pseudo_references, self.weights = candidates, pseudo_references, weights
        self.aggregate, self.ties, self.keep, self.lprobs = aggregate, ties, keep, lprobs

    def __len__(self) -> int:
        return len(self.candidates)

    def work(self) -> int:
        refs = self.candidates if self.pseudo_references is None else self.pseudo_references
        if self.aggregate:
            return sum(len(c) + len(r) for c, r in zip(self.candidates, refs)) // 2
        return sum(len(c) * len(r) for c, r in zip(self.candidates, refs)) // PAIRS_PER_WORK

    def split(self, parts: int) -> List["Input"]:
        def cut(seq: Optional[Sequence[Any]], a: int, b: int) -> Optional[Sequence[Any]]:
            return None if seq is None else seq[a:b]

        return [CandidateSets(self.candidates[a:b], cut(self.pseudo_references, a, b), cut(self.weights, a, b),
                              self.aggregate, self.ties, self.keep, cut(self.lprobs, a, b))
                for a, b in chunk_bounds(len(self), parts)]

    def rows(self, metric: Any) -> List[Any]:
        return segment_rows(metric, self.candidates, self.pseudo_references, self.aggregate, self.weights, self.ties,
                            self.keep, lprobs=self.lprobs)

    def segments(self) -> Iterator[Any]:
        refs = self.candidates if self.pseudo_references is None else self.pseudo_references
        return zip(self.candidates, refs)
