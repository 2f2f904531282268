"""The serving loop: read a line, dispatch it, write exactly one reply line, flush.

Takes binary file objects (``sys.stdin.buffer`` / ``sys.stdout.buffer`` or ``io.BytesIO``) so
undecodable bytes become an error reply rather than a crash.  End of input, or a reader that
closed the pipe, ends the loop quietly.
"""
from __future__ import annotations

from typing import BinaryIO

from evalpipe.protocol.dispatch import Dispatcher
from evalpipe.sufficient_stats.metric import Metric


def serve(metric: Metric, instream: BinaryIO, outstream: BinaryIO) -> int:
    """Serve requests from ``instream`` until it ends; return the number of requests served."""
    dispatcher = Dispatcher(metric)
    served = 0
    for raw in iter(instream.readline, b""):
        reply = dispatcher.handle(raw)
        try:
            outstream.write(reply.encode("utf-8") + b"\n")
            outstream.flush()
        except BrokenPipeError:
            break
        served += 1
    return served
