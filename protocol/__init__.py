"""The SCORE/EVAL line protocol that MERT/MIRA/PRO tuners drive as a subprocess.

``codec`` parses and formats lines, ``requests`` turns SCORE fields into a metric's input,
``dispatch`` turns a request into a reply (none of them does I/O), ``loop`` reads, dispatches,
writes and flushes; ``client`` is a Python helper for tuners.  This package depends on
:mod:`evalpipe.sufficient_stats` (and :mod:`evalpipe.errors`) only.
"""
from evalpipe.errors import ProtocolError, ProtocolTimeout
from evalpipe.protocol.client import Client

__all__ = ["Client", "ProtocolError", "ProtocolTimeout"]
