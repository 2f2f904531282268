"""MBR segments as an engine input, so that every core works on a large pool of candidates.

:class:`CandidateSets` is an :class:`~evalpipe.inputs.Input` whose "stats row" of a segment is its decision
material (:data:`evalpipe.mbr.decode.Row`: the expected utilities, the float32 means for ties="mbrs", the matrix
when it is to be saved).  An engine splits it into contiguous runs of segments and computes each run where it runs
(:func:`evalpipe.mbr.decode.segment_rows`); the pool gives
the rows back in order, so the choices are the same on every worker count.
"""
from __future__ import annotations

from typing import Any, Iterator, List, Optional, Sequence

from evalpipe.inputs import Input, chunk_bounds

PAIRS_PER_WORK = 20  # about the cost of one text segment of BLEU + chrF (a pair of chrF takes ~1 us, a segment ~20 us)


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
                 weights: Optional[Sequence[Sequence[float]]], aggregate: bool, ties: str, keep: bool = False) -> None:
        self.candidates, self.pseudo_references, self.weights = candidates, pseudo_references, weights
        self.aggregate, self.ties, self.keep = aggregate, ties, keep

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
                              self.aggregate, self.ties, self.keep) for a, b in chunk_bounds(len(self), parts)]

    def rows(self, metric: Any) -> List[Any]:
        from evalpipe.mbr.decode import segment_rows

        return segment_rows(metric, self.candidates, self.pseudo_references, self.aggregate, self.weights, self.ties,
                            self.keep)

    def segments(self) -> Iterator[Any]:
        refs = self.candidates if self.pseudo_references is None else self.pseudo_references
        return zip(self.candidates, refs)
