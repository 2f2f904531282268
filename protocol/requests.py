"""The wire forms of SCORE requests: protocol fields -> ``(hypothesis, references)`` for a metric.

* text metrics: ``SCORE ||| ref_1 ||| ... ||| ref_n ||| hyp`` (n >= 1);
* simultaneous-translation (latency) metrics: ``SCORE ||| SOURCE_LENGTH ||| REFERENCE ||| DELAYS
  [||| ELAPSED]`` -- the reference may be empty when the configuration does not use it; delays and
  elapsed times are space-separated numbers;
* quality + latency combinations (``bleu-0.1*al``): ``SCORE ||| SOURCE_LENGTH ||| REFERENCE |||
  DELAYS ||| HYPOTHESIS``.

Bad fields raise :class:`~evalpipe.errors.InputError` naming the field, what was expected and what came.
"""
from __future__ import annotations

from typing import Any, List, Sequence, Tuple

from evalpipe.errors import InputError
from evalpipe.sufficient_stats.segments import SimulHypothesis
from evalpipe.sufficient_stats.vectors import parse_number

SIMUL_FORM = "SOURCE_LENGTH ||| REFERENCE ||| DELAYS [||| ELAPSED]"
MIXED_FORM = "SOURCE_LENGTH ||| REFERENCE ||| DELAYS ||| HYPOTHESIS"


def numbers(text: str, what: str) -> List[float]:
    """The space-separated numbers of a field; an :class:`InputError` names the field."""
    try:
        return [parse_number(t) for t in text.split()]
    except ValueError as exc:
        raise InputError(f"{what}: {exc}") from None


def score_fields(metric: Any, fields: Sequence[str]) -> Tuple[Any, List[str]]:
    """``(hypothesis, references)`` of a SCORE request's fields for ``metric``."""
    if metric.hypothesis_kind == "text":
        if len(fields) < 2:
            raise InputError(f"SCORE expects at least one reference and a hypothesis (ref_1 ||| ... ||| hyp); "
                             f"got {len(fields)} field(s)")
        return fields[-1], list(fields[:-1])
    mixed = getattr(metric, "needs_text", False)
    if len(fields) not in ((4,) if mixed else (3, 4)):
        raise InputError(f"{metric.name}: SCORE expects {MIXED_FORM if mixed else SIMUL_FORM}; got {len(fields)} field(s)")
    source = numbers(fields[0], "SOURCE_LENGTH")
    if len(source) != 1 or source[0] < 0:
        raise InputError(f"expected SOURCE_LENGTH to be one number, 0 or more, got {fields[0]!r}")
    elapsed = numbers(fields[3], "ELAPSED") if len(fields) == 4 and not mixed else None
    text = fields[3] if mixed else None
    return SimulHypothesis(numbers(fields[2], "DELAYS"), source[0], elapsed, text), [fields[1]]
