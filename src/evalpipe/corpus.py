"""Reading UTF-8 text files of one segment per line, with errors that name the file and line."""
from __future__ import annotations

import os
import tempfile
from typing import IO, Iterator, List, Sequence, Tuple

from evalpipe.errors import InputError


class CorpusError(InputError):
    """Input files that cannot be scored together (undecodable, empty, or of different lengths)."""


def decode_lines(data: bytes, name: str) -> List[str]:
    """Lines of ``data`` without line ends; :class:`CorpusError` names the file and line of bad UTF-8."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    out = []
    for number, raw in enumerate(lines, 1):
        try:
            out.append(raw.decode("utf-8").rstrip("\r"))
        except UnicodeDecodeError as exc:
            raise CorpusError(f"expected UTF-8 text, got undecodable byte(s) {raw[exc.start:exc.end]!r} "
                              f"at byte {exc.start}", name, number) from None
    return out


def _read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise CorpusError(f"cannot read {path}: {exc.strerror}") from None


def read_lines(path: str) -> List[str]:
    """The lines of a UTF-8 text file; an empty file is a :class:`CorpusError`."""
    lines = decode_lines(_read_bytes(path), path)
    if not lines:
        raise CorpusError(f"{path} is empty: expected one segment per line")
    return lines


def count_lines(path: str) -> int:
    """The number of lines :func:`read_lines` would return (read in 1 MiB pieces, not decoded)."""
    count, last = 0, b"\n"
    try:
        with open(path, "rb") as handle:
            for piece in iter(lambda: handle.read(1 << 20), b""):
                count += piece.count(b"\n")
                last = piece[-1:]
    except OSError as exc:
        raise CorpusError(f"cannot read {path}: {exc.strerror}") from None
    return count + (0 if last == b"\n" else 1)


def line_blocks(path: str, size: int) -> Iterator[List[str]]:
    """The lines of ``path`` decoded as :func:`read_lines` decodes them, ``size`` at a time: a file of any
    length is read with one block in memory."""
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise CorpusError(f"cannot read {path}: {exc.strerror}") from None
    with handle:
        block: List[str] = []
        for number, raw in enumerate(handle, 1):
            try:
                block.append(raw.decode("utf-8").rstrip("\n").rstrip("\r"))
            except UnicodeDecodeError as exc:
                raise CorpusError(f"expected UTF-8 text, got undecodable byte(s) {raw[exc.start:exc.end]!r} "
                                  f"at byte {exc.start}", path, number) from None
            if len(block) == size:
                yield block
                block = []
        if block:
            yield block


def read_stream(stream: IO[bytes], name: str = "<stdin>") -> List[str]:
    lines = decode_lines(stream.read(), name)
    if not lines:
        raise CorpusError(f"{name} is empty: expected one segment per line")
    return lines


def check_same_length(named: Sequence[Tuple[str, Sequence[str]]]) -> None:
    """``named`` is ``[(name, lines), ...]``; all must have the same number of lines."""
    first_name, first = named[0]
    for name, lines in named[1:]:
        if len(lines) != len(first):
            raise CorpusError(f"line counts differ: {first_name} has {len(first)} lines, "
                              f"{name} has {len(lines)} lines")


def write_atomically(path: str, text: str, mode: int = 0o644) -> None:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file in the same folder, flushed to disk
    and renamed over ``path``: a crash leaves the old file or the new one, never a truncated one, and
    no temporary file behind."""
    folder = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
