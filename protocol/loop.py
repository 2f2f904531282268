"""The serving loop: read the request lines that have arrived, dispatch each, write their replies, flush.

Takes binary file objects (``sys.stdin.buffer`` / ``sys.stdout.buffer`` or ``io.BytesIO``) so
undecodable bytes become an error reply rather than a crash.  Input is read in pieces of whatever has
arrived (``read1``): every request in a piece is answered and the replies are written and flushed
together before the next read -- so the loop never waits for input while a reply is unflushed (a
client that sends one line and waits gets its answer), and a client that streams many lines at once
does not pay one write per line.  End of input, or a reader that closed the pipe, ends the loop
quietly.  With ``on_error="exit"`` the first request that cannot be served ends the loop instead of
being answered: :class:`RequestFailed` carries its error (for stderr) after everything answered before
it was flushed -- a tuner that would turn ``ERROR`` into zero statistics stops.  A line longer than
``max_line_bytes`` (16 MiB by default) is an error reply, read and dropped in pieces, never held whole.
"""
from __future__ import annotations

from typing import Any, BinaryIO, Dict, Iterator, List, Optional, Union

from evalpipe.errors import InputError
from evalpipe.protocol.codec import ERROR_PREFIX, format_error
from evalpipe.protocol.dispatch import Dispatcher
from evalpipe.sufficient_stats.metric import Metric


class RequestFailed(InputError):
    """A request that could not be served, under ``on_error="exit"``."""


MAX_LINE_BYTES = 16 << 20
READ_BYTES = 1 << 16  # at most this much input is read (and answered) at a time


def _arrivals(instream: BinaryIO, limit: int) -> Iterator[List[Union[bytes, int]]]:
    """For each read, the request lines it completed: a line of at most ``limit`` bytes as its bytes
    (without the line end), a longer one as its size (an int), its bytes dropped as they came (memory
    stays bounded by ``limit`` plus one read).  A last line without a line end counts."""
    read = getattr(instream, "read1", instream.read)
    head: List[bytes] = []  # the pieces of the unfinished line
    held = 0  # their length
    dropped = 0  # > 0: the unfinished line is over the limit; bytes of it seen so far
    while True:
        chunk = read(READ_BYTES)
        if not chunk:
            if dropped or held:
                yield [dropped or b"".join(head)]
            return
        lines: List[Union[bytes, int]] = chunk.split(b"\n")  # type: ignore[assignment]
        tail = lines.pop()
        if lines:
            if max(map(len, lines)) > limit:  # type: ignore[arg-type]
                lines = [line if len(line) <= limit else len(line) + 1 for line in lines]  # type: ignore[arg-type]
            if dropped or held:  # the first line finishes the unfinished one
                first = lines[0]
                size = dropped + held + (first - 1 if isinstance(first, int) else len(first))
                lines[0] = size + 1 if dropped or size > limit else b"".join(head) + first  # type: ignore[operator]
                head, held, dropped = [], 0, 0
        if tail:
            if dropped or held + len(tail) > limit:
                dropped += held + len(tail)
                head, held = [], 0
            else:
                head.append(tail)
                held += len(tail)
        if lines:
            yield lines


def serve(metric: Metric, instream: BinaryIO, outstream: BinaryIO, dialect: str = "meteor",
          strict_stats: bool = False, on_error: str = "reply", scale: float = 1.0,
          max_line_bytes: int = MAX_LINE_BYTES, forms: Optional[Dict[str, Any]] = None,
          verbs: Optional[Dict[str, Any]] = None) -> int:
    """Serve requests from ``instream`` until it ends; return the number of requests served.  A request
    line longer than ``max_line_bytes`` gets an error reply without being held in memory.  ``forms``:
    extra SCORE forms, ``verbs`` extra requests (:class:`~evalpipe.protocol.dispatch.Dispatcher`)."""
    if on_error not in ("reply", "exit"):
        raise InputError(f"expected on_error reply or exit, got {on_error!r}")
    dispatcher = Dispatcher(metric, dialect, strict_stats, scale, forms, verbs)
    handle = dispatcher.handle
    served = 0
    for arrived in _arrivals(instream, max_line_bytes):
        replies: List[str] = []
        dispatcher.prefetch(arrived)
        for number, raw in enumerate(arrived, served + 1):
            if type(raw) is int:
                reply = [format_error(f"expected a request line of at most {max_line_bytes} bytes, got {raw} bytes")]
            else:
                reply = handle(raw)
            if on_error == "exit" and reply[0].startswith(ERROR_PREFIX):
                _send(outstream, replies)
                raise RequestFailed(f"request {number} could not be served: {reply[0][len(ERROR_PREFIX):]}")
            replies += reply
        if not _send(outstream, replies):
            break
        served += len(arrived)
    return served


def _send(outstream: BinaryIO, replies: List[str]) -> bool:
    """Write and flush reply lines; False when the reader has closed the pipe."""
    try:
        if replies:
            outstream.write(("\n".join(replies) + "\n").encode("utf-8"))
        outstream.flush()
    except BrokenPipeError:
        return False
    return True
