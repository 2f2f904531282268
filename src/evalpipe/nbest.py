"""Moses n-best lists, the one reader of ``evalpipe tune`` and ``evalpipe mbr``.

A line is ``id ||| hypothesis ||| features [||| total ...]``: the fields are split at every ``|||`` whatever the
spacing around it and each is stripped, so ``0|||a b|||f= 1|||1`` and ``0 ||| a b ||| f= 1 ||| 1`` are the same
line, and ``0 ||| ||| f= 1 ||| 1`` is an empty hypothesis.  Ids are Moses's 0-based segment numbers: every id
from 0 to the largest needs at least one line (a gap, or a list starting at 1, is an error naming the id); the
lines of one id are kept in file order and need not be together.  Blank lines are skipped.  Errors name the
file and line.  Features are read by the tuner (:func:`evalpipe.tune.nbest.parse_features`), not here.
"""
from __future__ import annotations

from typing import List, NamedTuple, Sequence

from evalpipe.corpus import read_lines
from evalpipe.errors import InputError


class Entry(NamedTuple):
    """One n-best line: its segment id, hypothesis, features field and (1-based) line number."""

    segment: int
    hypothesis: str
    features: str
    line: int


def parse(lines: Sequence[str], source: str = "<n-best>") -> List[List[Entry]]:
    """The entries of every segment 0, 1, ..., in order (see the module docstring)."""
    groups: dict = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split("|||")]
        if len(fields) < 3:
            raise InputError(f"expected 'id ||| hypothesis ||| features [||| total]' (Moses n-best), got "
                             f"{len(fields)} field(s): {line[:80]!r}", source, number)
        try:
            ident = int(fields[0])
        except ValueError:
            raise InputError(f"expected an integer segment id, got {fields[0][:40]!r}", source, number) from None
        if ident < 0:
            raise InputError(f"expected a 0-based segment id, got {ident}", source, number)
        groups.setdefault(ident, []).append(Entry(ident, fields[1], fields[2], number))
    if not groups:
        raise InputError("holds no n-best lines", source)
    missing = next((i for i in range(max(groups) + 1) if i not in groups), None)
    if missing is not None:
        first = min(groups)
        raise InputError(f"segment id {missing} has no lines: ids are 0-based segment numbers (Moses's), every id from "
                         f"0 to {max(groups)} needs a line" + (f"; this list starts at {first}" if first else ""),
                         source)
    return [groups[i] for i in range(len(groups))]


def read(path: str) -> List[List[Entry]]:
    """:func:`parse` of a file."""
    return parse(read_lines(path, allow_empty=True), path)
