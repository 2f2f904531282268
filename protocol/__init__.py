"""The SCORE/EVAL line protocol that MERT/MIRA/PRO tuners drive as a subprocess.

``codec`` parses and formats lines (no I/O), ``dispatch`` turns a request into a reply (no I/O),
``loop`` reads, dispatches, writes and flushes; ``client`` is a Python helper for tuners.
"""
from evalpipe.protocol.client import Client, ProtocolError

__all__ = ["Client", "ProtocolError"]
