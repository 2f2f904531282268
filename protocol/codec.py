"""Parsing request lines and formatting reply lines of the SCORE/EVAL protocol (no I/O).

Requests (fields separated by ``|||``; spaces around fields and ``\\r\\n`` line ends tolerated)::

    SCORE ||| ref_1 ||| ... ||| ref_n ||| hyp     ->  stats vector, e.g. "27 25 20 14 9 5 27 26 25 24"
    EVAL ||| v_1 v_2 ...                         ->  score at full precision, e.g. "34.56..."
    EVAL ||| vector_1 ||| ... ||| vector_n       ->  n score lines, then the score of the summed vectors
    INFO                                         ->  "signature ||| field_1 field_2 ..." (extension)

Every request gets exactly one reply line, except EVAL with n >= 2 vectors (n + 1 lines; with
the pycocoevalcap dialect also n = 1, see :mod:`evalpipe.protocol.dispatch`); a request that
cannot be served gets one ``ERROR ||| message`` line.
"""
from __future__ import annotations

from typing import List, NamedTuple, Optional

from evalpipe.errors import InputError

SEPARATOR = "|||"
ERROR_PREFIX = "ERROR ||| "


class Request(NamedTuple):
    """A parsed request line: the command word and the fields after it."""

    command: str
    fields: List[str]


def decode_line(raw: bytes, source: Optional[str] = None, line: Optional[int] = None) -> str:
    """UTF-8 text of one raw line without its line end; an :class:`InputError` says where decoding failed
    (and names ``source`` and ``line`` when given)."""
    try:
        return raw.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError as exc:
        raise InputError(f"expected UTF-8 text, got undecodable byte(s) {raw[exc.start:exc.end]!r} "
                         f"at byte {exc.start}", source, line) from None


def parse_request(line: str) -> Request:
    """Split a request line into its command and stripped fields."""
    parts = line.split(SEPARATOR)
    return Request(parts[0].strip(), [p.strip() for p in parts[1:]])


def format_score(value: float) -> str:
    """A score at full precision (``repr`` of the float)."""
    return repr(float(value))


def format_error(message: str) -> str:
    """One ``ERROR ||| ...`` line; newlines in the message are folded so the reply stays one line."""
    return ERROR_PREFIX + " ".join(str(message).split())

