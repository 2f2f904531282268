"""A Python client for tuners: starts ``evalpipe serve METRIC`` and talks to it over a pipe."""
from __future__ import annotations

import subprocess
import sys
from typing import Any, Dict, List, Optional, Sequence

from evalpipe.protocol.codec import ERROR_PREFIX
from evalpipe.sufficient_stats.vectors import format_stats, parse_stats


class ProtocolError(RuntimeError):
    """The server answered ``ERROR ||| ...`` or went away."""


class Client:
    """``Client("bleu", {"tokenize": "intl"})``: ``score(hyp, refs)`` -> stats, ``evaluate(stats)`` -> float.

    Use as a context manager, or call :meth:`close`.  Requests are synchronous: one line out, one in.
    """

    def __init__(self, metric: str, options: Optional[Dict[str, Any]] = None,
                 command: Optional[Sequence[str]] = None) -> None:
        if command is None:
            command = [sys.executable, "-m", "evalpipe", "serve", metric]
            for key, value in (options or {}).items():
                command += ["-o", f"{key}={value}"]
        self.process = subprocess.Popen(list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        bufsize=0)

    def request(self, line: str) -> str:
        """Send one request line and return the reply line (raises on ``ERROR`` replies)."""
        if "\n" in line or "\r" in line:
            raise ValueError("a request must be a single line (no newline characters)")
        if self.process.poll() is not None:
            raise ProtocolError(f"the server exited with code {self.process.returncode}")
        if self.process.stdin is None or self.process.stdout is None:
            raise ProtocolError("the server process has no pipes")
        self.process.stdin.write(line.encode("utf-8") + b"\n")
        self.process.stdin.flush()
        reply = self.process.stdout.readline().decode("utf-8").rstrip("\r\n")
        if not reply and self.process.poll() is not None:
            raise ProtocolError(f"the server exited with code {self.process.returncode}")
        if reply.startswith(ERROR_PREFIX):
            raise ProtocolError(reply[len(ERROR_PREFIX):])
        return reply

    def score(self, hypothesis: str, references: Sequence[str]) -> List[float]:
        """The stats vector of one segment."""
        if isinstance(references, str):
            references = [references]
        return parse_stats(self.request(" ||| ".join(["SCORE", *references, hypothesis])))

    def evaluate(self, stats: Sequence[float]) -> float:
        """The score of a (summed) stats vector."""
        return float(self.request(f"EVAL ||| {format_stats(stats)}"))

    def info(self) -> str:
        return self.request("INFO")

    def close(self) -> None:
        if self.process.stdin and not self.process.stdin.closed:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout:
            self.process.stdout.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
