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
from typing import Any, Dict, List, Sequence, Tuple

from evalpipe.sufficient_stats.base import Metric, OptionError

_TERM = re.compile(r"\s*([+-]?)\s*(?:(\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+)\s*\*\s*)?([A-Za-z_][\w.:]*)\s*")


def parse_spec(spec: str) -> List[Tuple[float, str]]:
    """``[(weight, name), ...]`` for a combination spec; ``ValueError`` if it does not parse."""
    terms: List[Tuple[str, str, str]] = []
    pos = 0
    while pos < len(spec):
        m = _TERM.match(spec, pos)
        if not m or m.end() == pos or (terms and not m.group(1)):
            raise ValueError(f"cannot parse metric combination {spec!r} at position {pos}: "
                             f"expected [+|-][WEIGHT*]NAME, got {spec[pos:]!r}")
        terms.append(m.groups())
        pos = m.end()
    if not terms:
        raise ValueError("empty metric combination")
    explicit = any(w for _, w, _ in terms)
    out = []
    for sign, weight, name in terms:
        s = -1.0 if sign == "-" else 1.0
        w = float(weight) if weight else (1.0 if explicit else 1.0 / len(terms))
        out.append((s * w, name))
    return out


def is_combination(name: str) -> bool:
    """True when ``name`` is a combination spec rather than one metric's name."""
    from evalpipe.registry import list_metrics

    return any(c in name for c in "+-*") and name not in list_metrics()


class Combination(Metric):
    """A weighted sum of member metrics over concatenated stats (see the module docstring)."""

    name = "combination"

    def __init__(self, members: Sequence[Tuple[float, str, Metric]]) -> None:
        self.options = {}
        self.members = list(members)
        self.slices = []
        start = 0
        fields: List[str] = []
        for _, name, metric in self.members:
            self.slices.append(slice(start, start + metric.num_stats))
            start += metric.num_stats
            fields += [f"{name}.{f}" for f in metric.stats_fields]
        self.stats_fields = tuple(fields)
        self.higher_is_better = all(
            (w > 0) == m.higher_is_better for w, _, m in self.members)

    def stats(self, hypothesis: str, references: Sequence[str]) -> List[float]:
        """Concatenation of every member's stats for this segment."""
        out: List[float] = []
        for _, _, metric in self.members:
            out += metric.stats(hypothesis, references)
        return out

    def protocol_stats(self, fields: Sequence[str]) -> List[float]:
        """Every member's stats of one request.  With a latency member the request has the
        simultaneous form ``SOURCE_LENGTH ||| REFERENCE ||| DELAYS ||| HYPOTHESIS``."""
        out: List[float] = []
        if any(getattr(m, "is_latency", False) for _, _, m in self.members):
            if len(fields) != 4:
                raise ValueError("a quality + latency combination expects SCORE ||| SOURCE_LENGTH ||| REFERENCE ||| "
                                 f"DELAYS ||| HYPOTHESIS; got {len(fields)} field(s)")
            for _, _, metric in self.members:
                out += metric.simul_stats(fields[0], fields[1], fields[2], None, fields[3])
            return out
        for _, _, metric in self.members:
            out += metric.protocol_stats(fields)
        return out

    def item_stats(self, item: Any) -> List[float]:
        out: List[float] = []
        for _, _, metric in self.members:
            out += metric.item_stats(item)
        return out

    def score(self, stats: Sequence[float]) -> float:
        """Sum of weight * member score of its slice of ``stats``."""
        self.check_stats(stats)
        return sum(w * m.score(stats[sl]) for (w, _, m), sl in zip(self.members, self.slices))

    def signature(self) -> str:
        return " + ".join(f"{w!r}*{name}[{m.signature()}]" for w, name, m in self.members)


def route_options(names: Sequence[str], classes: Sequence[Any], options: Dict[str, Any],
                  what: str) -> List[Dict[str, Any]]:
    """Split ``NAME.KEY`` / ``KEY`` options among metrics: one options dict per metric.

    ``NAME.KEY`` goes to the metric called NAME; a bare ``KEY`` to every metric that has that
    option.  An option that reaches no metric is an :class:`OptionError` naming the metrics.
    """
    routed: List[Dict[str, Any]] = [{} for _ in names]
    for key, value in options.items():
        target, dot, opt = key.rpartition(".")
        hits = 0
        for i, (name, cls) in enumerate(zip(names, classes)):
            if (not dot and opt in cls.OPTIONS) or (dot and target == name):
                routed[i][opt] = value
                hits += 1
        if not hits:
            raise OptionError(f"option {key!r} matches no metric of {what} "
                              f"(use METRIC.KEY, METRIC one of {', '.join(names)})")
    return routed


def load_combination(spec: str, **options: Any) -> Combination:
    """Build a :class:`Combination` from a spec and ``NAME.KEY`` / ``KEY`` options."""
    from evalpipe.registry import load_class

    terms = parse_spec(spec)
    names = [name for _, name in terms]
    classes = [load_class(name) for name in names]
    routed = route_options(names, classes, options, repr(spec))
    return Combination([(w, name, cls(**opts)) for (w, name), cls, opts in zip(terms, classes, routed)])
