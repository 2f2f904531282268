"""MBR segments as an engine input, so that every core -- or every executor of a Spark cluster -- works on a large
pool of candidates.

:class:`CandidateSets` is an :class:`~evalpipe.inputs.Input` whose "stats row" of a segment is its decision
material (:data:`Row`).  An engine splits it into contiguous runs of segments and computes each run where it runs
(:func:`segment_rows`, any decoder); the engines give the rows back in order, so the choices are the same on every
worker count and engine.  Each segment's record carries everything its decision needs (its candidates,
pseudo-references, weights or log-probabilities, source, and how to decide: :class:`Settings`), so a Spark
partition rebuilds the input from its records alone (:meth:`CandidateSets.from_segments`), and the metric from
its spec, once per executor process (:meth:`evalpipe.registry.MetricSpec.build`).
"""
from __future__ import annotations

from typing import Any, Iterator, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from evalpipe.inputs import Input, chunk_bounds
from evalpipe.mbr.select import expectations
from evalpipe.mbr.utilities import model_matrices, segment_matrices

PAIRS_PER_WORK = 20  # about the cost of one text segment of BLEU + chrF (a pair of chrF takes ~1 us, a segment ~20 us)
#: reference aggregation scores a candidate against one averaged pseudo-reference: 1,002 WMT21 segments x 20
#: candidates (chrF) took 0.49-0.50 s in one process and 0.50-0.54 s with two workers, 5,010 x 20 took 1.37-1.42 s
#: and 1.22-1.35 s (2-core machine, start-up included), so a pool pays from about 30,000 candidates
CANDIDATES_PER_WORK = 8


#: one segment's decision material: (expected utilities (NaN: undefined), float32 means for ties="mbrs" or None,
#: the matrix's values to save or None, which cells were computed (None: all), cells computed by an efficient
#: decoder or None)
Row = Tuple[np.ndarray, Any, Optional[np.ndarray], Optional[np.ndarray], Optional[int]]


class Settings(NamedTuple):
    """How every segment is decided: the decoder (:class:`~evalpipe.mbr.decoders.Decoder`), ties, whether the
    matrices come back (``keep``), the n-best size (the pruning decoder keeps at least that many)."""

    decoder: Any
    ties: str = "first"
    keep: bool = False
    n: int = 1


def segment_rows(metric: Any, sets: "CandidateSets") -> List[Row]:
    """For every segment of ``sets``, its :data:`Row`, computed here."""
    from evalpipe.mbr import decoders as dec

    s = sets.settings
    if s.decoder.name in dec.EFFICIENT:
        return _efficient_rows(metric, sets)
    aggregate = s.decoder.name == "aggregate"
    if getattr(metric, "reads_source", False):
        matrices = model_matrices(metric, sets.candidates, sets.pseudo_references, sets.sources, aggregate)
    else:
        matrices = segment_matrices(metric, sets.candidates, sets.pseudo_references, aggregate)
    out = []
    for g, m in enumerate(matrices):
        m = np.asarray(m)
        u, kept = expectations(m, None if sets.weights is None else sets.weights[g], s.ties,
                               None if sets.lprobs is None else sets.lprobs[g])
        out.append((u, kept, np.asarray(m, dtype=np.float64) if s.keep else None, None, None))
    return out


def _efficient_rows(metric: Any, sets: "CandidateSets") -> List[Row]:
    from evalpipe.mbr import decoders as dec
    from evalpipe.mbr.cells import MetricCells, Segment

    s = sets.settings
    refs = sets.references()
    segments = [Segment(g, c, r, None if sets.sources is None else sets.sources[g],
                        None if sets.lprobs is None else sets.lprobs[g]) for g, (c, r) in enumerate(zip(sets.candidates, refs))]
    return outcome_rows(dec.run(s.decoder, MetricCells(metric), segments, bool(metric.higher_is_better), s.n, s.keep),
                        sets.candidates, refs, s.ties)


def outcome_rows(outcomes: Sequence[Any], candidates: Sequence[Sequence[str]], refs: Sequence[Sequence[str]],
                 ties: str) -> List[Row]:
    """The rows of efficient decoders' outcomes (their saved cells padded to candidates x pseudo-references)."""
    out = []
    for o, c, r in zip(outcomes, candidates, refs):
        values = computed = None
        if o.values is not None:
            values = np.zeros((len(c), len(r)))
            computed = np.zeros((len(c), len(r)), dtype=bool)
            values[:, :o.values.shape[1]] = np.where(o.computed, o.values, 0.0)
            computed[:, :o.computed.shape[1]] = o.computed
        out.append((o.utilities, o.utilities.astype(np.float32) if ties == "mbrs" else None, values, computed,
                    o.cells))
    return out


class Given:
    """A job's spec for a metric already built (a pool forked after the job was made inherits it)."""

    def __init__(self, metric: Any) -> None:
        self.metric = metric

    def build(self) -> Any:
        return self.metric


class CandidateSets(Input):
    """Candidates per segment; pseudo-references, weights, log-probabilities and sources per segment (each None
    when not given); how to decide (:class:`Settings`)."""

    def __init__(self, candidates: Sequence[Sequence[str]], pseudo_references: Optional[Sequence[Sequence[str]]],
                 weights: Optional[Sequence[Sequence[float]]], settings: Settings,
                 lprobs: Optional[Sequence[Sequence[float]]] = None, sources: Optional[Sequence[str]] = None) -> None:
        self.candidates, self.pseudo_references, self.weights = candidates, pseudo_references, weights
        self.settings, self.lprobs, self.sources = settings, lprobs, sources

    def __len__(self) -> int:
        return len(self.candidates)

    def references(self) -> Sequence[Sequence[str]]:
        return self.candidates if self.pseudo_references is None else self.pseudo_references

    def work(self) -> int:
        refs = self.references()
        if self.settings.decoder.name == "aggregate":
            return sum(len(c) + len(r) for c, r in zip(self.candidates, refs)) // (2 * CANDIDATES_PER_WORK)
        return sum(len(c) * len(r) for c, r in zip(self.candidates, refs)) // PAIRS_PER_WORK

    def split(self, parts: int) -> List["Input"]:
        def cut(seq: Optional[Sequence[Any]], a: int, b: int) -> Optional[Sequence[Any]]:
            return None if seq is None else seq[a:b]

        return [CandidateSets(self.candidates[a:b], cut(self.pseudo_references, a, b), cut(self.weights, a, b),
                              self.settings, cut(self.lprobs, a, b), cut(self.sources, a, b))
                for a, b in chunk_bounds(len(self), parts)]

    def rows(self, metric: Any) -> List[Any]:
        return segment_rows(metric, self)

    def segments(self) -> Iterator[Any]:
        """One record a segment: ``(candidates, pseudo-references, weights, log-probabilities, source,
        settings)`` (None where not given)."""
        n = len(self)

        def each(seq: Optional[Sequence[Any]]) -> Sequence[Any]:
            return [None] * n if seq is None else seq

        return zip(self.candidates, each(self.pseudo_references), each(self.weights), each(self.lprobs),
                   each(self.sources), [self.settings] * n)

    @classmethod
    def from_segments(cls, segments: Sequence[Any], nrefs: int) -> "Input":
        """The input of a Spark partition's records (:meth:`segments`)."""
        columns = list(zip(*segments))

        def given(k: int) -> Optional[List[Any]]:
            return None if columns[k][0] is None else list(columns[k])

        return cls(list(columns[0]), given(1), given(2), columns[5][0], given(3), given(4))
