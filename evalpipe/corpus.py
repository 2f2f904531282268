"""Reading parallel text files with errors that name the file, the line and what was expected."""
from __future__ import annotations

from typing import IO, List, Sequence


class CorpusError(ValueError):
    """Input files that cannot be scored together (undecodable, empty, or of different lengths)."""


def decode_lines(data: bytes, name: str) -> List[str]:
    """Lines of ``data`` without line ends; ``CorpusError`` names the file and line of bad UTF-8."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    out = []
    for number, raw in enumerate(lines, 1):
        try:
            out.append(raw.decode("utf-8").rstrip("\r"))
        except UnicodeDecodeError as exc:
            raise CorpusError(f"{name}, line {number}: expected UTF-8 text, got undecodable byte(s) "
                              f"{raw[exc.start:exc.end]!r} at byte {exc.start}") from None
    return out


def read_lines(path: str) -> List[str]:
    """The lines of a UTF-8 text file; an empty file is a ``CorpusError``."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise CorpusError(f"cannot read {path}: {exc.strerror}") from None
    lines = decode_lines(data, path)
    if not lines:
        raise CorpusError(f"{path} is empty: expected one segment per line")
    return lines


def read_stream(stream: IO[bytes], name: str = "<stdin>") -> List[str]:
    lines = decode_lines(stream.read(), name)
    if not lines:
        raise CorpusError(f"{name} is empty: expected one segment per line")
    return lines


def check_same_length(named: Sequence[tuple]) -> None:
    """``named`` is ``[(name, lines), ...]``; all must have the same number of lines."""
    first_name, first = named[0]
    for name, lines in named[1:]:
        if len(lines) != len(first):
            raise CorpusError(f"line counts differ: {first_name} has {len(first)} lines, "
                              f"{name} has {len(lines)} lines")
