"""Weighted combinations of metrics, so a tuner can optimise e.g. (BLEU - TER) / 2 through one process.

Spec grammar: terms joined by ``+`` or ``-``, each ``[WEIGHT*]NAME``::

    bleu-ter            ->  (BLEU - TER) / 2      (no explicit weight: every term gets sign / k)
    0.7*bleu+0.3*chrf   ->  0.7 BLEU + 0.3 chrF
    bleu-0.05*al        ->  BLEU - 0.05 AL        (explicit weights present: a bare term weighs +-1)

Stats layout: the concatenation of the members' stats vectors, in spec order.  Score: the
weighted sum of each member's score of its own slice.  Options: ``NAME.KEY=VALUE`` goes to that
member; a bare ``KEY=VALUE`` goes to every member that has the option (an error if none has it).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import accumulate
from typing import Any, List, Optional, Sequence, Tuple

from evalpipe.errors import UsageError
from evalpipe.sufficient_stats.metric import Metric
from evalpipe.sufficient_stats.vectors import Partial

_TERM = re.compile(r"\s*([+-]?)\s*(?:(\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+)\s*\*\s*)?([A-Za-z_][\w.:]*)\s*")


def parse_spec(spec: str) -> List[Tuple[float, str]]:
    """``[(weight, name), ...]`` for a combination spec; ``ValueError`` if it does not parse."""
    terms: List[Tuple[str, str, str]] = []
    pos = 0
    while pos < len(spec):
        m = _TERM.match(spec, pos)
        if not m or m.end() == pos or (terms and not m.group(1)):
            raise UsageError(f"cannot parse metric combination {spec!r} at position {pos}: "
                             f"expected [+|-][WEIGHT*]NAME, got {spec[pos:]!r}")
        terms.append(m.groups())
        pos = m.end()
    if not terms:
        raise UsageError("empty metric combination")
    bare = 1.0 if any(w for _, w, _ in terms) else 1.0 / len(terms)  # the weight of a term without one
    return [((-1.0 if sign == "-" else 1.0) * (float(weight) if weight else bare), name) for sign, weight, name in terms]


class Combination(Metric):
    """A weighted sum of member metrics over concatenated stats (see the module docstring).

    Built by :func:`evalpipe.registry.load_metric` from a spec; members validate their own input, so
    a quality member given a simultaneous hypothesis scores its text."""

    name = "combination"

    def __init__(self, members: Sequence[Tuple[float, str, Metric]]) -> None:
        self.options = {}
        self.members = list(members)
        metrics = [m for _, _, m in self.members]
        ends = list(accumulate(m.num_stats for m in metrics))
        self.slices = [slice(end - m.num_stats, end) for end, m in zip(ends, metrics)]
        self.stats_fields = tuple(f"{name}.{f}" for _, name, m in self.members for f in m.stats_fields)
        self.higher_is_better = all((w > 0) == m.higher_is_better for w, _, m in self.members)
        self.hypothesis_kind = "simul" if any(m.hypothesis_kind == "simul" for m in metrics) else "text"
        #: a simultaneous combination with a quality member needs the hypothesis text
        self.needs_text = self.hypothesis_kind == "simul" and any(m.hypothesis_kind == "text" for m in metrics)
        self.min_references = max(m.min_references for m in metrics)
        bounded = [m.max_references for m in metrics if m.max_references is not None]
        self.max_references: Optional[int] = min(bounded) if bounded else None

    def check_hypothesis(self, hypothesis: Any, index: Optional[int] = None) -> Any:
        return hypothesis  # each member checks what it scores

    def segment_stats(self, hypothesis: Any, references: Tuple[str, ...]) -> List[Any]:
        """Concatenation of every member's stats for this segment."""
        out: List[Any] = []
        for _, _, metric in self.members:
            out += metric.stats(hypothesis, list(references))
        return out

    def block_stats(self, hypotheses: Sequence[Any], references: Sequence[Sequence[str]]) -> List[List[Any]]:
        """Every member's rows (through its own fast path), concatenated segment by segment."""
        parts = [m.corpus_stats(hypotheses, references) for _, _, m in self.members]
        return [sum(row, []) for row in zip(*parts)]

    def score_from_stats(self, stats: List[Any]) -> float:
        """Sum of weight * member score of its slice of ``stats``."""
        return sum(w * m.score(stats[sl]) for (w, _, m), sl in zip(self.members, self.slices))

    def impossible(self, stats: Sequence[Any]) -> Optional[str]:
        return next(filter(None, (m.impossible(stats[sl]) for (_, _, m), sl in zip(self.members, self.slices))), None)

    def signature(self, nrefs: Optional[int] = None) -> str:
        return " + ".join(f"{w!r}*{name}[{m.signature(nrefs)}]" for w, name, m in self.members)


class Bundle:
    """Several metrics computed over one input in one pass (an input whose segments are costly to
    prepare, such as a talk to realign, prepares each once): the stats vector is the concatenation
    of the members', and each member is scored on its own slice (:meth:`scores`), not combined."""

    def __init__(self, metrics: Sequence[Metric]) -> None:
        self.metrics = list(metrics)
        ends = list(accumulate(m.num_stats for m in self.metrics))
        self.slices = [slice(end - m.num_stats, end) for end, m in zip(ends, self.metrics)]
        self.num_stats = ends[-1] if ends else 0

    def parts(self, stats: Sequence[Any]) -> List[Sequence[Any]]:
        """Each member's slice of a concatenated vector."""
        return [stats[sl] for sl in self.slices]

    def corpus_stats(self, hypotheses: Sequence[Any], references: Sequence[Sequence[str]]) -> List[List[Any]]:
        """Every member's rows (each through its own fast path), concatenated segment by segment."""
        parts = [m.corpus_stats(hypotheses, references) for m in self.metrics]
        return [sum(row, []) for row in zip(*parts)]

    def corpus_partial(self, hypotheses: Sequence[Any], references: Sequence[Sequence[str]]) -> Partial:
        """Every member's exact partial sum, concatenated."""
        return concatenate([m.corpus_partial(hypotheses, references) for m in self.metrics])


@dataclass(frozen=True)
class BundleSpec:
    """Metric specs (:class:`~evalpipe.registry.MetricSpec`) computed in one pass: picklable, built into a
    :class:`Bundle` where the work runs."""

    specs: Tuple[Any, ...]

    def build(self) -> Bundle:
        return Bundle([spec.build() for spec in self.specs])


def concatenate(parts: Sequence[Partial]) -> Partial:
    """Partial sums of the same rows' slices, side by side (a bundle's partial sum)."""
    out = Partial(sum(len(p.totals) for p in parts))
    out.totals = [v for p in parts for v in p.totals]
    out.integral = [v for p in parts for v in p.integral]
    out.rows = parts[0].rows if parts else 0
    return out
