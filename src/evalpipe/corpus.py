"""Reading UTF-8 text files of one segment per line, with errors that name the file and line."""
from __future__ import annotations

import io
import os
from contextlib import suppress
from itertools import islice
from typing import IO, Any, BinaryIO, Iterable, Iterator, List, Sequence, Tuple, Union

from evalpipe.errors import InputError
from evalpipe.protocol.codec import decode_line


class CorpusError(InputError):
    """Input files that cannot be scored together (undecodable, empty, or of different lengths)."""


def open_binary(path: str) -> BinaryIO:
    """``path`` opened for reading bytes; a :class:`CorpusError` says why it cannot be."""
    try:
        return open(path, "rb")
    except OSError as exc:
        raise CorpusError(f"cannot read {path}: {exc.strerror}") from None


def decoded(lines: Iterable[bytes], name: str) -> Iterator[str]:
    """Each line of ``lines`` (bytes, line end or not) as text without its line end; bad UTF-8 is an
    :class:`~evalpipe.errors.InputError` naming ``name`` and the line."""
    for number, raw in enumerate(lines, 1):
        yield decode_line(raw, name, number)


def read_lines(path: str, allow_empty: bool = False) -> List[str]:
    """The lines of a UTF-8 text file; an empty file is a :class:`CorpusError` unless ``allow_empty``."""
    with open_binary(path) as handle:
        return read_stream(handle, path, allow_empty)


def read_stream(stream: IO[bytes], name: str = "<stdin>", allow_empty: bool = False) -> List[str]:
    """The lines of a binary stream, decoded as :func:`read_lines` decodes a file's."""
    lines = decode_block(stream.readlines(), name, 1)
    if not lines and not allow_empty:
        raise CorpusError(f"{name} is empty: expected one segment per line")
    return lines


def decode_block(raw: List[bytes], name: str, first: int) -> List[str]:
    """``[decode_line(r) for r in raw]`` (``raw[0]`` is line ``first`` of ``name``) in one decode of the
    joined bytes: a line end (0x0A) is never part of a UTF-8 sequence, so the joined text decodes
    exactly when every line does, into the same characters; a failure is located line by line."""
    try:
        text = b"".join(raw).decode("utf-8")
    except UnicodeDecodeError:
        return [decode_line(line, name, number) for number, line in enumerate(raw, first)]
    return split_text(text)


def split_text(text: str) -> List[str]:
    """The lines of decoded text as :func:`read_lines` gives them (``\\n`` ends a line, a ``\\r`` before it
    goes, a last line may lack its end)."""
    lines = text.split("\n")
    if lines[-1] == "":  # the last line ended in a line end (or there was none): split leaves an empty piece
        lines.pop()
    return [line.rstrip("\r") for line in lines] if "\r" in text else lines


def line_starts(path: str) -> Any:
    """The byte offset where each line of ``path`` starts, and the file's size after them (a numpy int64
    array of ``count_lines(path) + 1`` values; read in 1 MiB pieces, not decoded)."""
    import numpy as np  # imported when first needed: reading a whole file never needs it

    found, size = [np.zeros(1, np.int64)], 0
    with open_binary(path) as handle:
        for piece in iter(lambda: handle.read(1 << 20), b""):
            found.append(np.flatnonzero(np.frombuffer(piece, np.uint8) == 10).astype(np.int64) + (size + 1))
            size += len(piece)
    starts = np.concatenate(found)
    return starts if starts[-1] == size else np.append(starts, size)


def read_span(path: str, begin: int, end: int, first: int) -> List[str]:
    """The lines in bytes ``begin:end`` of ``path`` (whole lines, the first being line ``first``), decoded as
    :func:`read_lines` decodes them."""
    with open_binary(path) as handle:
        handle.seek(begin)
        data = handle.read(end - begin)
    return decode_lines(data, path, first)


def decode_lines(data: bytes, name: str, first: int = 1) -> List[str]:
    """The lines of ``data`` (line ``first`` of ``name`` on) as :func:`read_lines` decodes them: in one decode, a
    failure located line by line."""
    try:
        return split_text(data.decode("utf-8"))
    except UnicodeDecodeError:
        return decode_block(io.BytesIO(data).readlines(), name, first)


def count_lines(path: str) -> int:
    """The number of lines :func:`read_lines` would return (read in 1 MiB pieces, not decoded)."""
    count, last = 0, b"\n"
    with open_binary(path) as handle:
        for piece in iter(lambda: handle.read(1 << 20), b""):
            count += piece.count(b"\n")
            last = piece[-1:]
    return count + (0 if last == b"\n" else 1)


def line_blocks(path: str, size: int) -> Iterator[List[str]]:
    """The lines of ``path`` decoded as :func:`read_lines` decodes them, ``size`` at a time: a file of any
    length is read with one block in memory."""
    with open_binary(path) as handle:
        first = 1
        while True:
            raw = list(islice(handle, size))
            if not raw:
                return
            yield decode_block(raw, path, first)
            first += len(raw)


def check_same_length(named: Sequence[Tuple[str, Sequence[str]]]) -> None:
    """``named`` is ``[(name, lines), ...]``; all must have the same number of lines."""
    first_name, first = named[0]
    for name, lines in named[1:]:
        if len(lines) != len(first):
            raise CorpusError(f"line counts differ: {first_name} has {len(first)} lines, "
                              f"{name} has {len(lines)} lines")


def refuse_overwrite(paths: Sequence[str], force: bool = False) -> None:
    """Before a command writes files under names it chooses into a data folder (an MTME test set): an existing one
    is an :class:`InputError` naming it, unless ``force`` -- checked for every path before any is written, so a
    refused run writes nothing."""
    if not force:
        for path in paths:
            if os.path.exists(path):
                raise InputError("exists already; give --force to replace it", path)


def _write_in_place(path: str, text: Union[str, bytes]) -> None:
    """``text`` written into the device or pipe ``path``; a write that fails (``/dev/full``) names it."""
    try:
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        with os.fdopen(handle, "wb") as out:
            out.write(text if isinstance(text, bytes) else text.encode("utf-8"))
            out.flush()
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror or exc}", path) from None


def write_atomically(path: str, text: Union[str, bytes], mode: int = 0o644) -> None:
    """Write ``text`` (UTF-8; or bytes as they are) to ``path`` through a temporary file in the same folder, flushed to disk
    and renamed over ``path``: a crash leaves the old file or the new one, never a truncated one, and
    no temporary file behind.  Missing folders on the way are created; a path that cannot be written
    is an :class:`InputError` naming it.

    A path that is no regular file (``/dev/stdout``, ``/dev/full``, a named pipe; anything under ``/dev`` or
    ``/proc``) is written in place, as a shell's ``>`` writes it: never replaced by a file.  A symbolic link to a
    file keeps its link: the file it points to is replaced."""
    absolute = os.path.abspath(path)
    if absolute.startswith(("/dev/", "/proc/")) or (os.path.exists(absolute) and not os.path.isfile(absolute)
                                                     and not os.path.isdir(absolute)):
        _write_in_place(path, text)
        return
    path = os.path.realpath(path) if os.path.islink(path) else path
    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the folder {folder}: {exc.strerror or exc}", path) from None
    if os.path.isdir(path):
        raise InputError("cannot write a file here: it is a folder", path)
    try:
        import tempfile  # (imported when a file is written: reading never needs it)

        handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror or exc}", path) from None
    try:
        with (os.fdopen(handle, "wb") if isinstance(text, bytes) else os.fdopen(handle, "w", encoding="utf-8")) as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(temporary)
        raise


def training_texts(paths: Sequence[str]) -> List[str]:
    """The lines of the ``--text`` files a tiny model's tokenizer trains on; a file that cannot be read is an
    InputError naming it."""
    texts: List[str] = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                texts += f.read().splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(str(exc), path) from None
    return texts


def demo_texts() -> List[str]:
    """The lines of the shipped WMT21 en-de demo's source and reference (what the tiny models' tokenizers learn)."""
    from importlib import resources

    folder = resources.files("evalpipe").joinpath("demo", "wmt21-ende")
    return [line for name in ("src.en", "ref.de") for line in folder.joinpath(name).read_text("utf-8").splitlines()]
