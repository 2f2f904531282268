"""The metric plugin contract: segment statistics and score-from-statistics, validated once.

A plugin subclasses :class:`Metric` and implements the math only:

* ``name``, ``OPTIONS`` (keyword options, :class:`~evalpipe.sufficient_stats.options.Option`),
  ``STATS_FIELDS`` (the layout of its stats vector; ``fields()`` when options change it);
* ``segment_stats(hypothesis, references)`` -- a fixed-length vector for one segment, additive
  across segments;
* ``score_from_stats(stats)`` -- the metric value of a (summed) vector;
* optionally ``block_stats(hypotheses, reference_streams)`` -- the rows of many segments at once
  (a vectorized fast path; the default loops over ``segment_stats``), ``corpus_partial`` (exact
  column sums without rows), ``score_many`` (scores of many summed vectors, for resampling) and
  ``signature(nrefs)``.  A metric instance may be shared by threads: keep per-call state local.

The public methods wrap them (template methods) and do every check once, so plugins repeat none:
:meth:`Metric.stats` validates the hypothesis (its ``hypothesis_kind``) and the references and the
length of what the plugin returned; :meth:`Metric.score` validates the vector's length and values;
:meth:`Metric.corpus_stats` validates parallel reference streams and runs ``block_stats`` on blocks of
``BLOCK_SEGMENTS`` segments.  Errors are :class:`~evalpipe.errors.InputError` /
:class:`~evalpipe.errors.StatsError` naming what was expected and what came.  Wire forms (protocol
fields, SimulEval records) are not the metric's business: see :mod:`evalpipe.protocol.requests` and
:mod:`evalpipe.simul.records`.
"""
from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Dict, List, Optional, Sequence, Tuple

from evalpipe.errors import InputError, OptionError, StatsError
from evalpipe.sufficient_stats.options import Option
from evalpipe.sufficient_stats.segments import SimulHypothesis
from evalpipe.sufficient_stats.vectors import Partial, partial_sum

BLOCK_SEGMENTS = 5000


class Metric(ABC):
    """Base class of every evalpipe metric plugin (see the module docstring for the contract)."""

    name: ClassVar[str] = "metric"
    OPTIONS: ClassVar[Dict[str, Option]] = {}
    STATS_FIELDS: ClassVar[Tuple[str, ...]] = ()
    #: True when larger scores are better (TER and latency metrics: False).
    higher_is_better: ClassVar[bool] = True
    #: "text": the hypothesis is a string; "simul": a :class:`SimulHypothesis`.
    hypothesis_kind: ClassVar[str] = "text"
    #: how many references a segment may have (latency metrics: 0 or 1; accuracy: exactly 1)
    min_references: ClassVar[int] = 1
    max_references: ClassVar[Optional[int]] = None
    #: what a summed vector of this metric always satisfies (``serve --strict-stats`` rejects the rest):
    #: every field >= 0 when ``NONNEGATIVE_STATS``; ``part <= whole`` for each pair of :meth:`stats_bounds`
    NONNEGATIVE_STATS: ClassVar[bool] = False

    def __init__(self, **options: Any) -> None:
        unknown = sorted(set(options) - set(self.OPTIONS))
        if unknown:
            raise OptionError(f"{self.name}: unknown option(s) {', '.join(unknown)}; valid options: "
                              f"{', '.join(sorted(self.OPTIONS)) or '(none)'}")
        self.options: Dict[str, Any] = {
            key: opt.convert(key, options.get(key, opt.default)) for key, opt in self.OPTIONS.items()
        }
        self.stats_fields: Tuple[str, ...] = tuple(self.fields())

    # -- what a plugin implements -------------------------------------------------------------
    def fields(self) -> Sequence[str]:
        """The stats layout for this configuration (``STATS_FIELDS`` unless options change it)."""
        return self.STATS_FIELDS

    @abstractmethod
    def segment_stats(self, hypothesis: Any, references: Tuple[str, ...]) -> List[Any]:
        """This segment's stats vector; inputs are already validated."""
        raise NotImplementedError

    @abstractmethod
    def score_from_stats(self, stats: List[Any]) -> float:
        """The metric value of a (summed) stats vector of the right length."""
        raise NotImplementedError

    def block_stats(self, hypotheses: Sequence[Any], references: Sequence[Sequence[str]]) -> List[List[Any]]:
        """Rows of a block of validated segments (``references``: parallel streams).  Override with
        a vectorized version that gives the same rows."""
        return [self.segment_stats(h, tuple(stream[i] for stream in references)) for i, h in enumerate(hypotheses)]

    def stats_bounds(self) -> Sequence[Tuple[str, str]]:
        """``(part, whole)`` field pairs with part <= whole in every vector the metric produces."""
        return ()

    def display_name(self) -> str:
        """What a table calls this metric with these options (its entry-point name unless it says otherwise)."""
        return self.name

    def signature(self, nrefs: Optional[int] = None) -> str:
        """A reproducibility signature, ``key:value|...``; ``nrefs`` is the input's reference count."""
        opts = "|".join(f"{k}:{v}" for k, v in self.options.items())
        return f"{self.name}|{opts}|evalpipe" if opts else f"{self.name}|evalpipe"

    # -- the validated public API -------------------------------------------------------------
    @property
    def num_stats(self) -> int:
        """Length of the stats vector for this configuration."""
        return len(self.stats_fields)

    def stats(self, hypothesis: Any, references: Sequence[str]) -> List[Any]:
        """The stats vector of one segment: ``segment_stats`` around validation."""
        refs = self.check_references(references)
        out = self.segment_stats(self.check_hypothesis(hypothesis), refs)
        if len(out) != len(self.stats_fields):
            raise StatsError(f"{self.name} returned {len(out)} stats for a segment, its layout has "
                             f"{len(self.stats_fields)} ({' '.join(self.stats_fields)})")
        return out

    def score(self, stats: Sequence[Any]) -> float:
        """The metric value of a (summed) stats vector, validated."""
        return self.score_from_stats(self.check_stats(stats))

    def corpus_stats(self, hypotheses: Sequence[Any], references: Sequence[Sequence[str]]) -> List[List[Any]]:
        """Per-segment stats rows; ``references`` is a list of reference *streams* (sacrebleu's layout)."""
        hypotheses = self.check_corpus(hypotheses, references)
        rows: List[List[Any]] = []
        for start in range(0, len(hypotheses), BLOCK_SEGMENTS):
            stop = start + BLOCK_SEGMENTS
            rows += self.block_stats(hypotheses[start:stop], [r[start:stop] for r in references])
        if rows and len(rows[0]) != len(self.stats_fields):
            raise StatsError(f"{self.name} returned rows of {len(rows[0])} stats, its layout has {self.num_stats}")
        return rows

    def corpus_partial(self, hypotheses: Sequence[Any], references: Sequence[Sequence[str]]) -> Partial:
        """The exact sum of the per-segment stats, as a mergeable :class:`Partial` (what engines
        total).  A plugin whose ``block_matrix`` gives a block's integer rows as one numpy matrix has its
        columns summed there, without a Python list per row."""
        if type(self).block_matrix is Metric.block_matrix:
            return partial_sum(self.corpus_stats(hypotheses, references), self.num_stats)
        from evalpipe.sufficient_stats.vectors import partial_of_columns

        hypotheses = self.check_corpus(hypotheses, references)
        totals = [0] * self.num_stats
        for start in range(0, len(hypotheses), BLOCK_SEGMENTS):
            stop = start + BLOCK_SEGMENTS
            block = self.block_matrix(hypotheses[start:stop], [r[start:stop] for r in references])
            if block.shape[1] != self.num_stats:
                raise StatsError(f"{self.name} returned rows of {block.shape[1]} stats, its layout has {self.num_stats}")
            totals = [t + v for t, v in zip(totals, block.sum(axis=0).tolist())]
        return partial_of_columns(totals, len(hypotheses))

    def block_matrix(self, hypotheses: Sequence[Any], references: Sequence[Sequence[str]]) -> Any:
        """Optional: ``block_stats`` as an integer numpy matrix (segments x stats), for exact column sums."""
        raise NotImplementedError

    def check_corpus(self, hypotheses: Sequence[Any], references: Sequence[Sequence[str]]) -> Sequence[Any]:
        """The hypotheses this metric scores, after checking the corpus's shape and types once."""
        check_parallel(hypotheses, references)
        cache = getattr(hypotheses, "cache", None)  # an input's hypotheses: the types are found once
        key = ("types", tuple(map(id, references)))
        kinds, _ = cache[key] if cache is not None and key in cache else (None, None)
        if kinds is None:
            kinds = set(map(type, hypotheses))
            for k, stream in enumerate(references):
                if set(map(type, stream)) - {str}:
                    bad = next(i for i, r in enumerate(stream) if not isinstance(r, str))
                    raise InputError(f"{self.name}: reference stream {k + 1}, segment {bad + 1}: expected a "
                                     f"string, got {type(stream[bad]).__name__}")
            if cache is not None:
                cache[key] = (kinds, references)  # the streams are kept, so their ids are not reused
        texts = None
        if kinds == {SimulHypothesis} and self.hypothesis_kind == "text":  # their texts at once; a missing one named
            texts = [h.text for h in hypotheses]
            if None in texts:
                texts = None
        if texts is not None:
            hypotheses = texts
        elif not (kinds <= {str} and self.hypothesis_kind == "text") and not (
                kinds <= {SimulHypothesis} and self.hypothesis_kind != "text"):
            hypotheses = [self.check_hypothesis(h, i) for i, h in enumerate(hypotheses)]
        if len(references) < self.min_references or len(references) > (self.max_references or len(references)):
            self.check_references(["" for _ in references])  # raises, naming the expected count
        return hypotheses

    def corpus_score(self, hypotheses: Sequence[Any], references: Sequence[Sequence[str]]) -> float:
        """The corpus value: ``score`` of the sum of every segment's stats."""
        return self.score(self.corpus_partial(hypotheses, references).finish())

    # -- checks -------------------------------------------------------------------------------
    def check_hypothesis(self, hypothesis: Any, index: Optional[int] = None) -> Any:
        """The hypothesis this metric scores (a text metric takes a simultaneous hypothesis's text)."""
        where = "" if index is None else f" (segment {index + 1})"
        if self.hypothesis_kind == "text":
            if isinstance(hypothesis, str):
                return str(hypothesis)  # a str subclass becomes a plain str
            if isinstance(hypothesis, SimulHypothesis):
                if hypothesis.text is None:
                    raise InputError(f"{self.name} needs the hypothesis text{where}; the simultaneous hypothesis "
                                     f"has delays only")
                return hypothesis.text
            raise InputError(f"{self.name}{where}: the hypothesis should be a string, got {type(hypothesis).__name__}")
        if not isinstance(hypothesis, SimulHypothesis):
            raise InputError(f"{self.name}{where}: expected a simultaneous hypothesis (delays, source length), "
                             f"got {type(hypothesis).__name__}")
        return hypothesis

    def check_references(self, references: Sequence[str]) -> Tuple[str, ...]:
        """``references`` as a tuple of strings of an allowed count, or an :class:`InputError`."""
        if type(references) is list and len(references) == 1 and type(references[0]) is str \
                and self.max_references is None:
            return (references[0],)  # the common case, without the general checks
        if isinstance(references, str):
            raise InputError(f"{self.name}: expected a list of reference strings, got a single string")
        refs = tuple(references)
        if len(refs) < self.min_references:
            least = "one reference" if self.min_references == 1 else f"{self.min_references} references"
            raise InputError(f"{self.name}: expected at least {least}, got {len(refs) or 'none'}")
        if self.max_references is not None and len(refs) > self.max_references:
            raise InputError(f"{self.name}: expected at most {self.max_references} reference(s), got {len(refs)}")
        for i, ref in enumerate(refs):
            if not isinstance(ref, str):
                raise InputError(f"{self.name}: reference {i + 1} should be a string, got {type(ref).__name__}")
        return refs

    def check_stats(self, stats: Sequence[Any]) -> List[Any]:
        """``stats`` as a list of finite numbers of this metric's length, or a :class:`StatsError`."""
        values = [v.item() if hasattr(v, "item") else v for v in stats]
        if len(values) != self.num_stats:
            raise StatsError(f"{self.name} expects {self.num_stats} stats ({' '.join(self.stats_fields)}), "
                             f"got {len(values)}")
        for v in values:
            if isinstance(v, bool) or not isinstance(v, (int, float)) or (type(v) is float and not math.isfinite(v)):
                raise StatsError(f"{self.name} expects finite numbers as stats, got {v!r}")
        return values

    def impossible(self, stats: Sequence[Any]) -> Optional[str]:
        """Why a (summed) vector of the right length cannot come from this metric, or None."""
        fields = dict(zip(self.stats_fields, stats))
        if self.NONNEGATIVE_STATS:
            negative = [f"{k}={v}" for k, v in fields.items() if v < 0]
            if negative:
                return f"{self.name} stats are counts >= 0; got {', '.join(negative)}"
        above = [f"{part}={fields[part]} > {whole}={fields[whole]}" for part, whole in self.stats_bounds()
                 if fields[part] > fields[whole]]
        return f"{self.name} stats cannot have {', '.join(above)}" if above else None

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options.items())
        return f"{type(self).__name__}({opts})"


def check_parallel(hypotheses: Sequence[Any], references: Sequence[Sequence[str]]) -> None:
    """Raise :class:`InputError` unless every reference stream has as many lines as the hypotheses."""
    if isinstance(references, str) or isinstance(hypotheses, str):
        raise InputError("expected a list of hypotheses and a list of reference streams (lists of strings), "
                         "got a string")
    for k, ref in enumerate(references):
        if isinstance(ref, str):
            raise InputError("expected reference streams (a list of lists of strings), got a list of strings")
        if len(ref) != len(hypotheses):
            raise InputError(f"reference stream {k + 1} has {len(ref)} lines but the hypotheses have {len(hypotheses)}")
