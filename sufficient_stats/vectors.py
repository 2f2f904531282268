"""Arithmetic and text form of sufficient-statistics vectors.

Sums are exact and independent of order and partitioning.  Integer columns are summed as Python
integers.  A column holding any float is accumulated exactly as a fixed-point integer (every
finite double is an integer multiple of 2**-1074) and rounded once at the end, so the result is
the correctly rounded sum of the exact values -- the same as :func:`math.fsum` -- whatever the
order or the way the rows were split among workers, partitions or machines.

``partial_sum`` / ``merge_partials`` / ``finish_partial`` expose that accumulator so engines can
sum partitions separately and combine them with no rounding in between.

Text form: integers (and integral floats) are written without a decimal point, other floats with
``repr``, so ``parse_stats(format_stats(v)) == v`` exactly.
"""
from __future__ import annotations

import math
import re
import sys
from fractions import Fraction
from typing import TYPE_CHECKING, Iterable, List, Optional, Sequence, Tuple, Union

from evalpipe.errors import StatsError

if TYPE_CHECKING:
    import numpy as np

Number = Union[int, float]
_INT = re.compile(r"[+-]?\d+\Z")
_FRACTION_BITS = 1074  # 2**-1074 is the smallest positive double


class Partial:
    """An exact running total of stats rows: per column a fixed-point integer (units of 2**-1074, integer
    columns too) and whether every value was integral (the total is then returned as an ``int``)."""

    __slots__ = ("totals", "integral", "rows")

    def __init__(self, width: int) -> None:
        self.totals = [0] * width
        self.integral = [True] * width
        self.rows = 0

    def merge(self, other: "Partial") -> "Partial":
        if len(other.totals) != len(self.totals):
            raise StatsError(f"cannot merge partial sums of {len(self.totals)} and {len(other.totals)} values")
        out = Partial(len(self.totals))
        out.totals = [a + b for a, b in zip(self.totals, other.totals)]
        out.integral = [a and b for a, b in zip(self.integral, other.integral)]
        out.rows = self.rows + other.rows
        return out

    def finish(self) -> List[Number]:
        return [total >> _FRACTION_BITS if integral else float(Fraction(total, 1 << _FRACTION_BITS))
                for total, integral in zip(self.totals, self.integral)]


def _exact_floats(values: np.ndarray, where: str) -> Tuple[int, bool]:
    """(fixed-point integer total, every value integral) of float64 values, with numpy: each value is
    m * 2**e with m a 53-bit integer (``frexp``); the high and low 26-bit halves of the m are summed per
    exponent with ``bincount`` (sums of at most 2**25 halves stay below 2**53, so float64 adds them
    exactly), and only one Python shift and add per distinct exponent remains."""
    import numpy as np  # imported when first needed: a command that never sums floats starts faster

    if not np.isfinite(values).all():
        raise StatsError(f"stats {where}: expected finite numbers, got {values[~np.isfinite(values)][0]}")
    integral = bool((values == np.floor(values)).all())
    mantissa, exponent = np.frexp(values)
    m = (mantissa * 2.0 ** 53).astype(np.int64)
    exponent = exponent.astype(np.int64)
    low_exponent = int(exponent.min()) - 53 if len(values) else 0
    bins = exponent - 53 - low_exponent
    total = 0
    for start in range(0, len(values), 1 << 25):
        part, sl = bins[start:start + (1 << 25)], m[start:start + (1 << 25)]
        high = np.bincount(part, weights=(sl >> 26).astype(np.float64))
        low = np.bincount(part, weights=(sl & ((1 << 26) - 1)).astype(np.float64))
        for k in np.flatnonzero((high != 0) | (low != 0)).tolist():
            shift = k + low_exponent + _FRACTION_BITS  # negative only for subnormals, whose m is divisible by 2**-shift
            value = (int(high[k]) << 26) + int(low[k])
            total += value << shift if shift >= 0 else value >> -shift
    return total, integral


def partial_of_columns(columns: Sequence[Union[int, np.ndarray]], rows: int) -> Partial:
    """The exact partial sum of ``rows`` stats rows given column-wise: an int is an integer column's
    total, an array a float column's values (the vectorised plugins' path; no rows are built)."""
    import numpy as np

    partial = Partial(len(columns))
    partial.rows = rows
    for i, column in enumerate(columns):
        if isinstance(column, np.ndarray):
            partial.totals[i], partial.integral[i] = _exact_floats(column.astype(np.float64, copy=False),
                                                                    f"column {i + 1}")
        else:
            partial.totals[i] = int(column) << _FRACTION_BITS
    return partial


def _exact_column(column: Sequence[Number], where: str) -> Tuple[int, bool]:
    """(fixed-point integer total, every value integral) of a column holding floats."""
    if len(column) > 64:
        import numpy as np

        ints = [v for v in column if type(v) is int]
        floats, integral = _exact_floats(np.asarray([v for v in column if type(v) is not int], dtype=np.float64),
                                         where) if len(ints) < len(column) else (0, True)
        return (sum(ints) << _FRACTION_BITS) + floats, integral
    total = 0
    integral = True
    for v in column:
        if type(v) is int:
            total += v << _FRACTION_BITS
            continue
        v = float(v)
        if not math.isfinite(v):
            raise StatsError(f"stats {where}: expected finite numbers, got {v}")
        n, d = v.as_integer_ratio()
        total += n << (_FRACTION_BITS - d.bit_length() + 1)
        integral = integral and d == 1
    return total, integral


def partial_sum(rows: Iterable[Sequence[Number]], width: Optional[int] = None) -> Partial:
    """The exact running total of ``rows`` (``width``: the vector length, taken from the first row if None)."""
    rows = rows if isinstance(rows, list) else list(rows)
    if not rows:
        if width is None:
            raise StatsError("cannot sum an empty list of stats without knowing the vector length")
        return Partial(width)
    n = len(rows[0]) if width is None else width
    lengths = set(map(len, rows))
    if lengths != {n}:
        bad = next(i for i, row in enumerate(rows) if len(row) != n)
        raise StatsError(f"stats row {bad + 1} has {len(rows[bad])} values, expected {n}")
    partial = Partial(n)
    partial.rows = len(rows)
    for i, column in enumerate(zip(*rows)):
        types = set(map(type, column))
        np = sys.modules.get("numpy")  # without numpy imported, no value is a numpy scalar
        if np is not None and any(issubclass(t, np.generic) for t in types):  # from vectorised plugins
            column = [v.item() if isinstance(v, np.generic) else v for v in column]
            types = set(map(type, column))
        if types == {int}:
            partial.totals[i] = sum(column) << _FRACTION_BITS
        else:
            partial.totals[i], partial.integral[i] = _exact_column(column, f"column {i + 1}")
    return partial


def sum_stats(rows: Iterable[Sequence[Number]], width: Optional[int] = None) -> List[Number]:
    """Column-wise exact sum of stats rows; ``width`` gives the length when ``rows`` may be empty.

    Raises :class:`~evalpipe.errors.StatsError` (a ``ValueError``) if a row's length differs from the others (or from ``width``).
    """
    return partial_sum(rows, width).finish()


def add_stats(a: Sequence[Number], b: Sequence[Number]) -> List[Number]:
    """Sum of two vectors (see :func:`sum_stats`)."""
    return sum_stats([a, b])


def format_number(value: Number) -> str:
    """Text form of one statistic that reads back to the same value."""
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int):
        return str(value)
    value = float(value)
    if value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(value)


_INTS = {int}


def format_stats(stats: Sequence[Number]) -> str:
    """Space-separated text form of a stats vector (see the module docstring)."""
    if set(map(type, stats)) == _INTS:  # the common case (counts), without the per-value checks
        return " ".join(map(str, stats))
    return " ".join(format_number(v) for v in stats)


def parse_number(token: str) -> Number:
    """Parse one statistic: an integer or a finite float; ``ValueError`` names the token."""
    if _INT.match(token):
        return int(token)
    try:
        value = float(token)
    except ValueError:
        raise StatsError(f"expected a number, got {token!r}") from None
    if not math.isfinite(value):
        raise StatsError(f"expected a finite number, got {token!r}")
    return value


def parse_stats(text: str) -> List[Number]:
    """Parse a space-separated stats vector written by :func:`format_stats` (or by a client)."""
    return [parse_number(tok) for tok in text.split()]
