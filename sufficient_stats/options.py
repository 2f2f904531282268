"""Metric options: typed keyword arguments validated in a metric's constructor.

An :class:`Option` converts command-line strings to its type and raises
:class:`evalpipe.errors.OptionError` naming the option, what was expected and what came.
"""
from __future__ import annotations

import math
from typing import Any, NamedTuple, Optional, Tuple

from evalpipe.errors import OptionError

__all__ = ["Option", "OptionError"]


_BOOLEANS = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}


def _parse_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _BOOLEANS:
        return _BOOLEANS[value.strip().lower()]
    raise ValueError(f"expected a boolean (true/false/yes/no/1/0), got {value!r}")


class Option(NamedTuple):
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
    #: other names of a choice, as users of another tool know it (``simuleval`` -> ``omnisteval``)
    aliases: Optional[Tuple[Tuple[str, str], ...]] = None

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
                out = dict(self.aliases or ()).get(str(value), str(value))
        except (TypeError, ValueError) as exc:
            raise OptionError(f"option {name!r}: expected a {self.kind.__name__}, got {value!r}") from exc
        if self.choices is not None and out not in self.choices:
            raise OptionError(f"option {name!r}: expected one of {', '.join(map(str, self.choices))}; got {value!r}")
        if self.minimum is not None and out < self.minimum:
            raise OptionError(f"option {name!r}: expected a value >= {self.minimum}, got {value!r}")
        return out
