"""The SCORE/EVAL line protocol that MERT/MIRA/PRO tuners drive as a subprocess.

``codec`` parses and formats lines, ``requests`` turns SCORE fields into a metric's input,
``dispatch`` turns a request into a reply (none of them does I/O), ``loop`` reads, dispatches,
writes and flushes; ``client`` is a Python helper for tuners.  This package depends on
:mod:`evalpipe.sufficient_stats` (and :mod:`evalpipe.errors`) only.
"""
from typing import Any

from evalpipe.errors import ProtocolError, ProtocolTimeout

__all__ = ["Client", "ProtocolError", "ProtocolTimeout"]


def __getattr__(name: str) -> Any:
    """``Client``, imported when asked for: the server side (``evalpipe serve``) starts without the
    client's subprocess machinery."""
    if name == "Client":
        from evalpipe.protocol.client import Client

        return Client
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
