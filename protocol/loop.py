"""The serving loop: read a line, dispatch it, write its reply lines, flush.

Takes binary file objects (``sys.stdin.buffer`` / ``sys.stdout.buffer`` or ``io.BytesIO``) so
undecodable bytes become an error reply rather than a crash.  End of input, or a reader that
closed the pipe, ends the loop quietly.  With ``on_error="exit"`` the first request that cannot be
served ends the loop instead of being answered: :class:`RequestFailed` carries its error (for
stderr) after everything answered before it was flushed -- a tuner that would turn ``ERROR`` into
zero statistics stops.  A line longer than ``max_line_bytes`` (16 MiB by default) is an error reply,
read and dropped in pieces, never held whole.
"""
from __future__ import annotations

from typing import Any, BinaryIO, Dict, Iterator, Optional, Tuple

from evalpipe.errors import InputError
from evalpipe.protocol.codec import ERROR_PREFIX, format_error
from evalpipe.protocol.dispatch import Dispatcher
from evalpipe.sufficient_stats.metric import Metric


class RequestFailed(InputError):
    """A request that could not be served, under ``on_error="exit"``."""


MAX_LINE_BYTES = 16 << 20


def _lines(instream: BinaryIO, limit: int) -> Iterator[Tuple[bytes, int]]:
    """``(line, 0)`` for each line of at most ``limit`` bytes, ``(b"", size)`` for a longer one, whose
    bytes are read and dropped in pieces (memory stays bounded by ``limit``)."""
    while True:
        line = instream.readline(limit + 1)
        if not line:
            return
        if len(line) <= limit or line.endswith(b"\n"):
            yield line, 0
            continue
        size, line = len(line), b""
        while True:
            piece = instream.readline(1 << 20)
            size += len(piece)
            if not piece or piece.endswith(b"\n"):
                break
        yield b"", size


def serve(metric: Metric, instream: BinaryIO, outstream: BinaryIO, dialect: str = "meteor",
          strict_stats: bool = False, on_error: str = "reply", scale: float = 1.0,
          max_line_bytes: int = MAX_LINE_BYTES, forms: Optional[Dict[str, Any]] = None) -> int:
    """Serve requests from ``instream`` until it ends; return the number of requests served.  A request
    line longer than ``max_line_bytes`` gets an error reply without being held in memory.  ``forms``:
    extra SCORE forms (:class:`~evalpipe.protocol.dispatch.Dispatcher`)."""
    if on_error not in ("reply", "exit"):
        raise InputError(f"expected on_error reply or exit, got {on_error!r}")
    dispatcher = Dispatcher(metric, dialect, strict_stats, scale, forms)
    served = 0
    for number, (raw, oversize) in enumerate(_lines(instream, max_line_bytes), 1):
        reply = dispatcher.handle(raw) if not oversize else [
            format_error(f"expected a request line of at most {max_line_bytes} bytes, got {oversize} bytes")]
        if on_error == "exit" and reply[0].startswith(ERROR_PREFIX):
            outstream.flush()
            raise RequestFailed(f"request {number} could not be served: {reply[0][len(ERROR_PREFIX):]}")
        try:
            outstream.write("".join(line + "\n" for line in reply).encode("utf-8"))
            outstream.flush()
        except BrokenPipeError:
            break
        served += 1
    return served
