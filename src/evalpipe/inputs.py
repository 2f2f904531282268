"""The kinds of input a scoring job carries -- typed once, so nothing downstream guesses.

A job is ``(metric spec, input)`` (:class:`evalpipe.engines.base.Job`).  Every input kind knows its
length and reference count ``nrefs`` (signatures show it), how it splits into contiguous picklable
chunks (:meth:`Input.split`, for a process pool, Ray or Dask), how its stats rows are computed
where the work runs (:meth:`Input.rows`), and how Spark reads it as ``(index, (hypothesis,
references))`` records (:meth:`Input.spark_records`; text files are read by Spark itself, so HDFS
or S3 paths never pass through the driver) and rebuilds it from them (:meth:`Input.from_segments`).
Kinds:

* :class:`TextPairs` -- hypothesis strings and parallel reference streams;
* :class:`SimulPairs` -- :class:`~evalpipe.sufficient_stats.segments.SimulHypothesis` objects (from
  SimulEval logs, see :mod:`evalpipe.simul.records`, or the simultaneous server) and at most one
  reference stream;
* :class:`TextFiles` -- a hypothesis file and reference files read where the work runs;
* :class:`Items` -- arbitrary items that a user evaluator scores one by one
  (:mod:`evalpipe.sentence_evaluator`).

* :class:`Talks` -- long-form streaming talks (:class:`~evalpipe.sufficient_stats.talks.Talk`):
  a segment is a whole talk, split by talk; ``rows`` realign each talk where the work runs and give
  one row per talk, the sum of its sentences' rows (or the talk's own row for a talk metric).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from itertools import zip_longest
from typing import Any, Iterator, List, Optional, Sequence, Tuple

from evalpipe.corpus import check_same_length, count_lines, line_blocks, line_starts, read_lines, read_span
from evalpipe.errors import InputError
from evalpipe.sufficient_stats.combine import Bundle, concatenate
from evalpipe.sufficient_stats.metric import check_parallel
from evalpipe.sufficient_stats.segments import Hypotheses, SimulHypothesis
from evalpipe.sufficient_stats.talks import Talk
from evalpipe.sufficient_stats.vectors import Partial, partial_sum

Segment = Tuple[Any, Tuple[str, ...]]
STREAM_BLOCK = 50_000  # lines per block when text files are streamed


class Input(ABC):
    """Base of the input kinds (see the module docstring)."""

    nrefs: int = 0

    @abstractmethod
    def __len__(self) -> int:
        """The number of segments."""

    @abstractmethod
    def split(self, parts: int) -> List["Input"]:
        """At most ``parts`` contiguous chunks, in order, covering every segment once."""

    def work(self) -> int:
        """The cost of computing this input's rows, in about text segments of BLEU + chrF (its length unless
        a kind says otherwise): an automatic pool stays in its own process for small runs."""
        return len(self)

    @abstractmethod
    def rows(self, metric: Any) -> List[list]:
        """The stats rows of every segment, in order."""

    def partial(self, metric: Any) -> Partial:
        """The exact sum of every segment's stats row (:class:`Partial`, mergeable across chunks)."""
        return partial_sum(self.rows(metric), metric.num_stats)

    @abstractmethod
    def segments(self) -> Iterator[Segment]:
        """``(hypothesis, references)`` of every segment, in order."""

    def spark_records(self, sc: Any, slices: int) -> Any:
        """An RDD of ``(index, (hypothesis, references))`` records in at least ``slices`` partitions."""
        records = list(enumerate(self.segments()))
        return sc.parallelize(records, max(slices, min(len(records) // 20000, 1000)))

    @classmethod
    def from_segments(cls, segments: Sequence[Segment], nrefs: int) -> "Input":
        """An in-memory input of ``(hypothesis, references)`` segments (a Spark partition)."""
        hyps = [h for h, _ in segments]
        streams = [[refs[k] for _, refs in segments] for k in range(nrefs)]
        return (cls if issubclass(cls, Pairs) else TextPairs)(hyps, streams)  # text files hold text


def chunk_bounds(n: int, parts: int) -> List[Tuple[int, int]]:
    size = max(1, -(-n // max(1, parts)))
    return [(i, min(n, i + size)) for i in range(0, n, size)]


class Pairs(Input):
    """Hypotheses in memory with parallel reference streams (``references[k][i]``: reference k of
    segment i)."""

    hypothesis_type: type = object

    def __init__(self, hypotheses: Sequence[Any], references: Sequence[Sequence[str]], name: str = "") -> None:
        self.name, where = name, name or None
        check_parallel(hypotheses, references)  # before copying: a string would become its characters
        self.hypotheses, self.references = Hypotheses(hypotheses), [list(stream) for stream in references]
        kinds = set(map(type, self.hypotheses))
        bad = None if kinds <= {self.hypothesis_type} else next(
            (i for i, h in enumerate(self.hypotheses) if not isinstance(h, self.hypothesis_type)), None)
        if bad is not None:
            raise InputError(f"segment {bad + 1}: expected a {self.hypothesis_type.__name__} hypothesis, "
                             f"got {type(self.hypotheses[bad]).__name__}", where)
        self.nrefs = len(self.references)

    def __len__(self) -> int:
        return len(self.hypotheses)

    def split(self, parts: int) -> List["Input"]:
        return [type(self)(self.hypotheses[a:b], [r[a:b] for r in self.references], self.name)
                for a, b in chunk_bounds(len(self), parts)]

    def rows(self, metric: Any) -> List[list]:
        return metric.corpus_stats(self.hypotheses, self.references)

    def partial(self, metric: Any) -> Partial:
        return metric.corpus_partial(self.hypotheses, self.references)

    def segments(self) -> Iterator[Segment]:
        return zip(self.hypotheses, zip(*self.references) if self.references else ((),) * len(self))


class TextPairs(Pairs):
    """Hypothesis strings and reference streams."""

    hypothesis_type = str


class SimulPairs(Pairs):
    """Simultaneous hypotheses (:class:`SimulHypothesis`) and at most one reference stream."""

    hypothesis_type = SimulHypothesis

    def work(self) -> int:
        """Simultaneous hypotheses are scored column by column in numpy, faster than a pool can be sent them:
        measured on the shared wait-k logs with BLEU, chrF and OmniSTEval's latency (``simul score``), one
        process took 0.69-0.73 s for 20,000 sentences and 2.61 s for 100,000 against a 2-worker pool's
        0.75-0.79 s and 2.99 s (pickling the delays outweighs the work).  So an automatic pool keeps them here."""
        return 0


class ScorePairs(Pairs):
    """Segment scores computed elsewhere (numbers; None: a segment without a score), one a segment, without references
    (:mod:`evalpipe.evaluators.segment_scores`)."""

    hypothesis_type = (float, type(None))

    def __init__(self, hypotheses: Sequence[Optional[float]], references: Sequence[Sequence[str]] = (),
                 name: str = "") -> None:
        super().__init__([None if h is None else float(h) for h in hypotheses], references, name)


class TextFiles(Input):
    """A hypothesis file and reference files (paths or, for Spark, URIs), lines ``start:stop``, read
    where the work runs: by this process for the local and pool engines, by Spark itself for Spark.

    :meth:`split` scans each file once for its line starts and gives chunks that carry their byte range
    in every file (``spans``), so a worker reads its own lines and nothing else."""

    #: the segments Spark counted when it read the files (None before; the local engines count them by len)
    counted: Optional[int] = None

    def __init__(self, hypothesis: str, references: Sequence[str], start: int = 0, stop: Optional[int] = None,
                 spans: Optional[Sequence[Tuple[int, int]]] = None) -> None:
        self.hypothesis, self.reference_paths = hypothesis, list(references)
        self.name, self.start, self.stop = hypothesis, start, stop
        self.nrefs = len(self.reference_paths)
        self.spans = spans  # (begin, end) bytes of lines start:stop in each file, hypothesis first
        self._starts: Optional[List[Any]] = None

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_starts": None}  # a chunk travels without its parent's line index

    def __len__(self) -> int:
        if self.spans is not None:
            return self.stop - self.start
        total = len(self.line_starts()[0]) - 1  # (scanned once: a pool splits by the same line starts)
        return max(0, (total if self.stop is None else min(total, self.stop)) - self.start)

    def line_starts(self) -> List[Any]:
        """Every file's line starts (:func:`~evalpipe.corpus.line_starts`), scanned once; files of different
        lengths are an :class:`InputError`."""
        if self._starts is None:
            paths = [self.hypothesis, *self.reference_paths]
            starts = [line_starts(p) for p in paths]
            if len({len(s) for s in starts}) > 1:
                shown = ", ".join(f"{p} has {len(s) - 1} lines" for p, s in zip(paths, starts))
                raise InputError(f"line counts differ: {shown}")
            self._starts = starts
        return self._starts

    def read(self) -> TextPairs:
        """The lines ``start:stop`` of every file; files of different lengths are an :class:`InputError`."""
        if self.spans is not None:
            paths = [self.hypothesis, *self.reference_paths]
            hyps, *refs = [read_span(p, a, b, self.start + 1) for p, (a, b) in zip(paths, self.spans)]
            return TextPairs(hyps, refs, self.hypothesis)
        hyps = read_lines(self.hypothesis)
        refs = [read_lines(p) for p in self.reference_paths]
        check_same_length([(self.hypothesis, hyps), *zip(self.reference_paths, refs)])
        cut = slice(self.start, self.stop)
        return TextPairs(hyps[cut], [r[cut] for r in refs], self.hypothesis)

    def split(self, parts: int) -> List["Input"]:
        if self.spans is not None:
            return self.read().split(parts)
        starts = self.line_starts()
        if len(starts[0]) == 1:
            read_lines(self.hypothesis)  # raises: an empty file
        return [TextFiles(self.hypothesis, self.reference_paths, self.start + a, self.start + b,
                          [(int(s[self.start + a]), int(s[self.start + b])) for s in starts])
                for a, b in chunk_bounds(len(self), parts)]

    def rows(self, metric: Any) -> List[list]:
        return self.read().rows(metric)

    def partial(self, metric: Any) -> Partial:
        """The exact totals, reading every file in blocks of ``STREAM_BLOCK`` lines (one block of each in
        memory, whatever the files' length); files of different lengths are an :class:`InputError`."""
        if self.spans is not None:
            return self.read().partial(metric)
        paths = [self.hypothesis, *self.reference_paths]
        total, index = Partial(metric.num_stats), 0
        stop = float("inf") if self.stop is None else self.stop
        for blocks in zip_longest(*(line_blocks(p, STREAM_BLOCK) for p in paths)):
            if any(b is None or len(b) != len(blocks[0]) for b in blocks):
                shown = ", ".join(f"{p} has {count_lines(p)} lines" for p in paths)
                raise InputError(f"line counts differ: {shown}")
            a, b = max(self.start - index, 0), min(stop - index, len(blocks[0]))
            if a < b:
                part = TextPairs(blocks[0][a:b], [r[a:b] for r in blocks[1:]], self.hypothesis)
                total = total.merge(part.partial(metric))
            index += len(blocks[0])
        if index == 0:
            read_lines(self.hypothesis)  # raises: an empty file
        return total

    def segments(self) -> Iterator[Segment]:
        return self.read().segments()

    def spark_records(self, sc: Any, slices: int) -> Any:
        """Spark reads the files (``textFile``, Hadoop's line reader: ``\\n``, ``\\r`` or ``\\r\\n``;
        undecodable bytes become U+FFFD) and joins them by line number."""
        def indexed(path: str) -> Any:
            return sc.textFile(path, slices).zipWithIndex().map(lambda pair: (pair[1], pair[0]))

        joined = indexed(self.hypothesis).mapValues(lambda h: (h, ()))
        counts = {self.hypothesis: joined.count()}
        for path in self.reference_paths:
            ref = indexed(path)
            counts[path] = ref.count()
            joined = joined.join(ref).mapValues(lambda pair: (pair[0][0], pair[0][1] + (pair[1],)))
        if len(set(counts.values())) != 1:
            shown = ", ".join(f"{p} has {n} lines" for p, n in counts.items())
            raise InputError(f"line counts differ: {shown}")
        lines = counts[self.hypothesis]
        self.counted = max(0, (lines if self.stop is None else min(lines, self.stop)) - self.start)
        if self.start or self.stop is not None:
            stop = float("inf") if self.stop is None else self.stop
            joined = joined.filter(lambda rec, a=self.start, b=stop: a <= rec[0] < b)
        return joined


class Talks(Input):
    """Long-form talks; each talk is one segment (see :mod:`evalpipe.evaluators.realign.talks`).

    A sentence metric sees every realigned sentence of a talk (a text metric its realigned text and
    reference), a talk metric the talk itself.  A talk's row is the exact sum of its sentences'
    rows, so resampling rows resamples talks -- the sentences of a talk share its realignment and
    its clock, so talks, not sentences, are the independent units.  ``partial`` sums every
    sentence's row exactly (no rounding per talk)."""

    nrefs = 1

    def __init__(self, talks: Sequence[Talk], name: str = "") -> None:
        bad = next((t for t in talks if not isinstance(t, Talk)), None)
        if bad is not None:
            raise InputError(f"expected talks, got {type(bad).__name__}", name or None)
        self.talks, self.name = list(talks), name

    def __len__(self) -> int:
        return len(self.talks)

    def work(self) -> int:
        """Realigning and scoring a talk costs about 1.1 ms per reference sentence (the shipped demo's two talks:
        0.2 s for 171 sentences), some 50 text segments of BLEU + chrF."""
        return 50 * sum(len(talk.references) for talk in self.talks)

    def split(self, parts: int) -> List["Input"]:
        return [Talks(self.talks[a:b], self.name) for a, b in chunk_bounds(len(self), parts)]

    @staticmethod
    def talk_partial(metric: Any, talk: Talk) -> Partial:
        """The exact sum of a talk's rows: its sentences' rows, or one row for a talk metric; for a
        :class:`~evalpipe.sufficient_stats.combine.Bundle`, every member's, concatenated."""
        from evalpipe.evaluators.realign.talks import quality_texts, sentences  # (imported by talk scoring only)

        if isinstance(metric, Bundle):
            out = concatenate([Talks.talk_partial(m, talk) for m in metric.metrics])
            out.rows = 1
            return out
        if metric.hypothesis_kind == "talk":
            rows = [metric.stats(talk, ())]
        elif metric.hypothesis_kind == "text":
            found = sentences(talk)
            rows = [metric.stats(text, (s.reference,)) for text, s in zip(quality_texts(talk), found)]
        else:
            rows = [metric.stats(s, (s.reference,)) for s in sentences(talk)]
        return partial_sum(rows, metric.num_stats)

    def rows(self, metric: Any) -> List[list]:
        return [self.talk_partial(metric, talk).finish() for talk in self.talks]

    def partial(self, metric: Any) -> Partial:
        total = Partial(metric.num_stats)
        for talk in self.talks:
            total = total.merge(self.talk_partial(metric, talk))
        return total

    def segments(self) -> Iterator[Segment]:
        return ((talk, ()) for talk in self.talks)

    @classmethod
    def from_segments(cls, segments: Sequence[Segment], nrefs: int) -> "Input":
        return cls([talk for talk, _ in segments])


class Items(Input):
    """Arbitrary items (sentences with gold labels, say) for an evaluator whose ``evaluate_item(item)``
    returns a stats vector."""

    def __init__(self, items: Sequence[Any]) -> None:
        self.items = list(items)

    def __len__(self) -> int:
        return len(self.items)

    def split(self, parts: int) -> List["Input"]:
        return [Items(self.items[a:b]) for a, b in chunk_bounds(len(self), parts)]

    def rows(self, metric: Any) -> List[list]:
        return [list(metric.evaluate_item(item)) for item in self.items]

    def segments(self) -> Iterator[Segment]:
        return ((item, ()) for item in self.items)

    @classmethod
    def from_segments(cls, segments: Sequence[Segment], nrefs: int) -> "Input":
        return cls([item for item, _ in segments])
