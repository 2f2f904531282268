"""The metric plugin contract shared by every evaluator.

A metric is a class with

* ``name`` -- the entry-point name it is registered under;
* ``OPTIONS`` -- a mapping of keyword option name to :class:`Option` (type, default, help);
* ``stats_fields`` -- the meaning of each position of its stats vector (``STATS_FIELDS`` on the
  class documents the default configuration; the instance attribute follows the options);
* ``stats(hypothesis, references)`` -- a fixed-length vector for one segment, additive across
  segments;
* ``score(summed_stats)`` -- the metric value computed from a sum of such vectors;
* ``signature()`` -- a reproducibility string in sacrebleu's style.

Options are validated in the constructor; a wrong one raises :class:`OptionError` naming what was
expected and what came.
"""
from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Dict, List, Optional, Sequence, Tuple

from evalpipe.sufficient_stats.vectors import sum_stats


class OptionError(ValueError):
    """A metric option that does not exist or has a value of the wrong kind."""


def _parse_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("1", "true", "yes", "on"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"expected a boolean (true/false/yes/no/1/0), got {value!r}")


@dataclass(frozen=True)
class Option:
    """One keyword option of a metric: its type, default, help text and allowed values.

    ``kind`` is ``bool``, ``int``, ``float`` or ``str``; strings given on a command line are
    converted to it.  ``choices`` (if given) lists every allowed value.  ``optional`` allows ``None``.
    """

    kind: type
    default: Any
    help: str
    choices: Optional[Tuple[Any, ...]] = None
    optional: bool = False
    minimum: Optional[float] = None

    def convert(self, name: str, value: Any) -> Any:
        """Return ``value`` converted to this option's type, or raise :class:`OptionError`."""
        if value is None or (self.optional and isinstance(value, str) and value.lower() == "none"):
            if self.optional:
                return None
            raise OptionError(f"option {name!r}: expected a {self.kind.__name__}, got None")
        try:
            if self.kind is bool:
                out = _parse_bool(value)
            elif self.kind is int:
                if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                    raise ValueError(f"expected an integer, got {value!r}")
                out = int(value)
            elif self.kind is float:
                if isinstance(value, bool):
                    raise ValueError(f"expected a number, got {value!r}")
                out = float(value)
                if math.isnan(out):
                    raise ValueError("expected a number, got NaN")
            else:
                out = str(value)
        except (TypeError, ValueError) as exc:
            raise OptionError(f"option {name!r}: expected a {self.kind.__name__}, got {value!r}") from exc
        if self.choices is not None and out not in self.choices:
            allowed = ", ".join(map(str, self.choices))
            raise OptionError(f"option {name!r}: expected one of {allowed}; got {value!r}")
        if self.minimum is not None and out < self.minimum:
            raise OptionError(f"option {name!r}: expected a value >= {self.minimum}, got {value!r}")
        return out


class Metric(ABC):
    """Base class of every evalpipe metric plugin (see the module docstring for the contract)."""

    name: ClassVar[str] = "metric"
    OPTIONS: ClassVar[Dict[str, Option]] = {}
    STATS_FIELDS: ClassVar[Tuple[str, ...]] = ()
    #: True when larger scores are better (TER and latency metrics: False).
    higher_is_better: ClassVar[bool] = True

    def __init__(self, **options: Any) -> None:
        unknown = sorted(set(options) - set(self.OPTIONS))
        if unknown:
            valid = ", ".join(sorted(self.OPTIONS)) or "(none)"
            raise OptionError(f"{self.name}: unknown option(s) {', '.join(unknown)}; valid options: {valid}")
        self.options: Dict[str, Any] = {
            key: opt.convert(key, options.get(key, opt.default)) for key, opt in self.OPTIONS.items()
        }
        self.stats_fields: Tuple[str, ...] = tuple(self.STATS_FIELDS)

    # -- the contract -------------------------------------------------------------------------
    @abstractmethod
    def stats(self, hypothesis: str, references: Sequence[str]) -> List[float]:
        """Return this segment's sufficient-statistics vector (length ``len(stats_fields)``)."""
        raise NotImplementedError

    @abstractmethod
    def score(self, stats: Sequence[float]) -> float:
        """Return the metric value computed from a (summed) stats vector."""
        raise NotImplementedError

    @abstractmethod
    def signature(self) -> str:
        """Return a reproducibility signature, ``key:value|key:value|...``."""
        raise NotImplementedError

    # -- derived helpers ----------------------------------------------------------------------
    @property
    def num_stats(self) -> int:
        """Length of the stats vector for this configuration."""
        return len(self.stats_fields)

    def protocol_stats(self, fields: Sequence[str]) -> List[float]:
        """Stats for a protocol ``SCORE`` request whose fields follow the command.

        The default form is ``ref_1 ||| ... ||| ref_n ||| hyp`` (n >= 1).  Metrics whose
        requests look different (latency metrics) override this.
        """
        if len(fields) < 2:
            raise ValueError(
                f"SCORE expects at least one reference and a hypothesis (ref_1 ||| ... ||| hyp); "
                f"got {len(fields)} field(s)"
            )
        return self.stats(fields[-1], list(fields[:-1]))

    def simul_stats(self, source_length: str, reference: str, delays: str, elapsed: Optional[str] = None,
                    hypothesis: Optional[str] = None) -> List[float]:
        """Stats from a simultaneous-translation request (see :mod:`evalpipe.evaluators.latency`);
        a quality metric scores ``hypothesis`` against ``reference``."""
        if hypothesis is None:
            raise ValueError(f"{self.name} needs the hypothesis text: SCORE ||| SOURCE_LENGTH ||| REFERENCE ||| "
                             f"DELAYS ||| HYPOTHESIS")
        return self.stats(hypothesis, [reference])

    def item_stats(self, item: Any) -> List[float]:
        """Stats of one SimulEval instance record (``prediction``, ``reference``, ``delays`` ...)."""
        if not isinstance(item, dict) or "prediction" not in item or item.get("reference") is None:
            raise ValueError(f"{self.name}: expected an instance with 'prediction' and 'reference'")
        return self.stats(item["prediction"], [item["reference"]])

    def check_stats(self, stats: Sequence[float]) -> None:
        """Raise ``ValueError`` unless ``stats`` has this metric's length."""
        if len(stats) != self.num_stats:
            raise ValueError(
                f"{self.name} expects {self.num_stats} stats ({' '.join(self.stats_fields)}), got {len(stats)}"
            )

    def corpus_stats(self, hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> List[List[float]]:
        """Per-segment stats rows; ``references`` is a list of reference *streams* (sacrebleu's layout)."""
        check_parallel(hypotheses, references)
        return [self.stats(h, [ref[i] for ref in references]) for i, h in enumerate(hypotheses)]

    def corpus_score(self, hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> float:
        """The corpus value: ``score`` of the sum of every segment's stats."""
        return self.score(sum_stats(self.corpus_stats(hypotheses, references), self.num_stats))

    def segment_score(self, stats: Sequence[float]) -> float:
        """The value of one segment from its own stats (sentence-level scores)."""
        return self.score(stats)

    def describe(self) -> str:
        """One line per option, for ``evalpipe list``."""
        lines = []
        for key, opt in self.OPTIONS.items():
            choices = f" (one of: {', '.join(map(str, opt.choices))})" if opt.choices else ""
            lines.append(f"{key}={opt.default!r}: {opt.help}{choices}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self.options.items())
        return f"{type(self).__name__}({opts})"


BLOCK_SEGMENTS = 5000


def batched_corpus_stats(metric: Metric, hypotheses: Sequence[str], references: Sequence[Sequence[str]],
                         block_stats: Callable[[Sequence[str], Sequence[Sequence[str]]], Any]) -> List[List[int]]:
    """``metric.corpus_stats`` by ``block_stats(hyps, ref_streams) -> int matrix``, run on blocks of
    at most ``BLOCK_SEGMENTS`` segments (bounded memory).  Input that is not all strings goes through
    the per-segment ``stats`` so its error names the offending segment."""
    check_parallel(hypotheses, references)
    if not hypotheses:
        return []
    if any(set(map(type, stream)) != {str} for stream in [hypotheses, *references]):
        return Metric.corpus_stats(metric, hypotheses, references)
    metric.nrefs.add(len(references))
    rows: List[List[int]] = []
    for start in range(0, len(hypotheses), BLOCK_SEGMENTS):
        stop = start + BLOCK_SEGMENTS
        rows += block_stats(hypotheses[start:stop], [r[start:stop] for r in references]).tolist()
    return rows


def check_parallel(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> None:
    """Raise ``ValueError`` unless every reference stream has as many lines as the hypotheses."""
    if isinstance(references, str) or not references:
        raise ValueError("expected at least one reference stream (a list of lists of strings)")
    for k, ref in enumerate(references):
        if isinstance(ref, str):
            raise ValueError("expected reference streams (a list of lists of strings), got a list of strings")
        if len(ref) != len(hypotheses):
            raise ValueError(
                f"reference stream {k + 1} has {len(ref)} lines but the hypotheses have {len(hypotheses)}"
            )
