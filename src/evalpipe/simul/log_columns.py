"""The fields evalpipe reads from a SimulEval log, column by column, straight from the file's bytes.

:func:`columns` runs the C reader ``_log_columns`` (``src/evalpipe/simul/log_columns.c``, built at install when a
compiler is there) and otherwise :func:`python_columns`, the reference: both give the same :class:`Columns`, or
None for bytes they do not take -- then the caller parses the log with ``json`` record by record
(:func:`~evalpipe.simul.records.parse_records`), which also names what is wrong.  ``tests/test_log_columns.py``
checks the two against each other and against that path.  What is taken (the C file says it too):

* ``data``: whole lines of a log, the first being line ``first_line``; ``\\n`` ends a line; a line of spaces,
  tabs and ``\\r`` only is no record; every other line is one JSON object (strict UTF-8, no NaN or Infinity);
* ``delays`` (a list of numbers) and ``source_length`` (a number) in every record; ``prediction`` and
  ``reference`` strings or null; ``elapsed`` and ``server_delays`` lists of numbers or null; ``durations`` null;
  ``index`` an integer or null; ``source`` anything (its kind: ``"text"`` for a string, ``"speech"`` for a list
  with a ``samplerate:...`` string, else None); each at most once; the integers kept of at most 18 digits
  (the others are ``float`` as ``json`` makes them); values nested deeper than 512 levels are not taken by C;
* ``checked``: every source length finite and 0 or more, every record's delays finite and non-decreasing.

Reading a log this way is 4-5 times faster than ``json.loads`` and building the records (most of a log is the
delays: numbers that ``json`` turns into a list of objects per record, and keys this reader passes over).
"""
from __future__ import annotations

import json
import math
import re
from typing import Any, List, NamedTuple, Optional

from evalpipe.native import extension

_c = extension("evalpipe.simul._log_columns")
AVAILABLE = _c is not None


class Columns(NamedTuple):
    """One entry per record (``lines``: its line number); fields a record lacks are None."""

    lines: List[int]
    delays: List[list]
    source_lengths: List[float]
    predictions: List[Optional[str]]
    references: List[Optional[str]]
    elapsed: List[Optional[list]]
    server_delays: List[Optional[list]]
    indices: List[Optional[int]]
    kinds: List[Optional[str]]
    checked: bool


def columns(data: bytes, first_line: int = 1) -> Optional[Columns]:
    """The records of ``data`` (whole lines of a log, from line ``first_line``) as :class:`Columns`, or None."""
    found = _c.columns(data, first_line) if _c is not None else python_columns(data, first_line)
    return None if found is None else Columns._make(found)


class _Declined(Exception):
    pass


_FIELDS = ("delays", "source_length", "prediction", "reference", "elapsed", "server_delays", "durations", "index",
           "source")


def _decline(*_: Any) -> Any:
    raise _Declined


class _Object(dict):
    """A JSON object that remembers its pairs (json keeps the last of a key given twice)."""

    pairs: List[tuple]


def _object(pairs: List[tuple]) -> _Object:
    found = _Object(pairs)
    found.pairs = pairs
    return found


_SURROGATE = re.compile("[\ud800-\udfff]")


def _lone_surrogate(value: Any) -> bool:
    """Whether a string anywhere in a JSON value (keys included) holds a surrogate that no pair completed."""
    if type(value) is str:
        return _SURROGATE.search(value) is not None
    if type(value) is list:
        return any(map(_lone_surrogate, value))
    if type(value) is _Object:
        return any(_lone_surrogate(k) or _lone_surrogate(v) for k, v in value.pairs)
    return False


def _int(value: Any) -> int:
    if type(value) is not int or abs(value) >= 10 ** 18:  # (at most 18 digits)
        raise _Declined
    return value


def _numbers(value: Any) -> list:
    if type(value) is not list:
        raise _Declined
    for v in value:
        if type(v) is int:
            _int(v)
        elif type(v) is not float:
            raise _Declined
    return value


def _text(value: Any) -> Optional[str]:
    if value is not None and type(value) is not str:
        raise _Declined
    return value


def _kind(record: dict) -> Optional[str]:
    source = record.get("source")
    if type(source) is str:
        return "text"
    if type(source) is list and any(type(x) is str and x.startswith("samplerate:") for x in source):
        return "speech"
    return None


def python_columns(data: bytes, first_line: int = 1) -> Optional[tuple]:
    """The reference of the C reader: ``json.loads`` line by line, each field checked as the module says."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    out: List[list] = [[] for _ in range(9)]
    checked = True
    try:
        for number, line in enumerate(lines, first_line):
            if not line.strip(" \t\r"):
                continue
            if line.lstrip(" \t\r")[:1] != "{":
                raise _Declined
            record = json.loads(line, object_pairs_hook=_object, parse_constant=_decline)
            kept = [k for k, _ in record.pairs if k in _FIELDS]
            if len(kept) != len(set(kept)) or "delays" not in record or "source_length" not in record \
                    or _lone_surrogate(record):
                raise _Declined
            delays = _numbers(record["delays"])
            length = record["source_length"]
            if type(length) is int:
                length = float(_int(length))
            elif type(length) is not float:
                raise _Declined
            elapsed, server = (None if record.get(k) is None else _numbers(record[k]) for k in ("elapsed",
                                                                                                  "server_delays"))
            if record.get("durations") is not None:
                raise _Declined
            index = record.get("index")
            index = None if index is None else _int(index)
            as_floats = [float(d) for d in delays]
            checked = checked and math.isfinite(length) and length >= 0 and all(map(math.isfinite, as_floats)) \
                and all(a <= b for a, b in zip(as_floats, as_floats[1:]))
            for column, value in zip(out, (number, delays, length, _text(record.get("prediction")),
                                           _text(record.get("reference")), elapsed, server, index, _kind(record))):
                column.append(value)
    except (_Declined, ValueError, RecursionError):  # (json.JSONDecodeError is a ValueError)
        return None
    return (*out, checked)
