"""Arithmetic and text form of sufficient-statistics vectors.

Sums are exact and independent of order: a column of integers is summed as Python integers, a
column holding any float with :func:`math.fsum` (the correctly rounded sum of the exact values),
so every engine and every partitioning of a corpus gives the same total to the last bit.

Text form: integers (and integral floats) are written without a decimal point, other floats with
``repr``, so ``parse_stats(format_stats(v)) == v`` exactly.
"""
from __future__ import annotations

import math
import re
from typing import Iterable, List, Optional, Sequence, Union

Number = Union[int, float]

_INT = re.compile(r"[+-]?\d+\Z")


def _column_sum(column: Sequence[Number]) -> Number:
    if all(type(v) is int for v in column):
        return sum(column)
    total = math.fsum(column)
    return int(total) if total.is_integer() and all(float(v).is_integer() for v in column) else total


def sum_stats(rows: Iterable[Sequence[Number]], width: Optional[int] = None) -> List[Number]:
    """Column-wise exact sum of stats rows; ``width`` gives the length when ``rows`` is empty.

    Raises ``ValueError`` if a row's length differs from the others (or from ``width``).
    """
    rows = list(rows)
    if not rows:
        if width is None:
            raise ValueError("cannot sum an empty list of stats without knowing the vector length")
        return [0] * width
    n = len(rows[0]) if width is None else width
    for i, row in enumerate(rows):
        if len(row) != n:
            raise ValueError(f"stats row {i + 1} has {len(row)} values, expected {n}")
    return [_column_sum(col) for col in zip(*rows)]


def add_stats(a: Sequence[Number], b: Sequence[Number]) -> List[Number]:
    """Sum of two partial totals (used to combine partitions); see :func:`sum_stats`."""
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


def format_stats(stats: Sequence[Number]) -> str:
    """Space-separated text form of a stats vector (see the module docstring)."""
    return " ".join(format_number(v) for v in stats)


def parse_number(token: str) -> Number:
    """Parse one statistic: an integer or a finite float; ``ValueError`` names the token."""
    if _INT.match(token):
        return int(token)
    try:
        value = float(token)
    except ValueError:
        raise ValueError(f"expected a number, got {token!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"expected a finite number, got {token!r}")
    return value


def parse_stats(text: str) -> List[Number]:
    """Parse a space-separated stats vector written by :func:`format_stats` (or by a client)."""
    return [parse_number(tok) for tok in text.split()]
