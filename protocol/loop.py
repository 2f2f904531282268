"""The serving loop: read a line, dispatch it, write its reply lines, flush.

Takes binary file objects (``sys.stdin.buffer`` / ``sys.stdout.buffer`` or ``io.BytesIO``) so
undecodable bytes become an error reply rather than a crash.  End of input, or a reader that
closed the pipe, ends the loop quietly.  With ``on_error="exit"`` the first request that cannot be
served ends the loop instead of being answered: :class:`RequestFailed` carries its error (for
stderr) after everything answered before it was flushed -- a tuner that would turn ``ERROR`` into
zero statistics stops.
"""
from __future__ import annotations

from typing import BinaryIO

from evalpipe.errors import InputError
from evalpipe.protocol.codec import ERROR_PREFIX
from evalpipe.protocol.dispatch import Dispatcher
from evalpipe.sufficient_stats.metric import Metric


class RequestFailed(InputError):
    """A request that could not be served, under ``on_error="exit"``."""


def serve(metric: Metric, instream: BinaryIO, outstream: BinaryIO, dialect: str = "meteor",
          strict_stats: bool = False, on_error: str = "reply", scale: float = 1.0) -> int:
    """Serve requests from ``instream`` until it ends; return the number of requests served."""
    if on_error not in ("reply", "exit"):
        raise InputError(f"expected on_error reply or exit, got {on_error!r}")
    dispatcher = Dispatcher(metric, dialect, strict_stats, scale)
    served = 0
    for number, raw in enumerate(iter(instream.readline, b""), 1):
        reply = dispatcher.handle(raw)
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
