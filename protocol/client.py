"""A Python client for tuners: starts ``evalpipe serve METRIC`` and talks to it over a pipe.

Requests are synchronous: one line out, one line in.  With ``timeout=SECONDS`` a reply that does not
come in time raises :class:`~evalpipe.errors.ProtocolTimeout` (a ``TimeoutError``) naming the
request, and the server is stopped (its later replies could no longer be matched to requests).  A
server that died raises :class:`~evalpipe.errors.ProtocolError` with its exit code.
"""
from __future__ import annotations

import os
import selectors
import shlex
import subprocess
import sys
import threading
from contextlib import suppress
import time
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from evalpipe.errors import ProtocolError, ProtocolTimeout
from evalpipe.protocol.codec import ERROR_PREFIX
from evalpipe.sufficient_stats.vectors import format_stats, parse_stats


def _shown(line: str) -> str:
    return repr(line if len(line) <= 80 else line[:77] + "...")


def _score_line(hypothesis: str, references: Sequence[str]) -> str:
    return " ||| ".join(["SCORE", *([references] if isinstance(references, str) else references), hypothesis])


def _one_line(line: str) -> str:
    if "\n" in line or "\r" in line:
        raise ValueError("a request must be a single line (no newline characters)")
    return line


class Client:
    """``Client("bleu", {"tokenize": "intl"}, timeout=30)``: ``score(hyp, refs)`` -> stats,
    ``evaluate(stats)`` -> float.  Use as a context manager, or call :meth:`close`."""

    def __init__(self, metric: str, options: Optional[Dict[str, Any]] = None,
                 command: Optional[Sequence[str]] = None, timeout: Optional[float] = None) -> None:
        if command is None:
            command = [sys.executable, "-m", "evalpipe", "serve", metric]
            for key, value in (options or {}).items():
                command += ["-o", f"{key}={value}"]
        if timeout is not None and timeout <= 0:
            raise ValueError(f"timeout must be positive seconds or None, got {timeout!r}")
        self.timeout = timeout
        try:
            self.process = subprocess.Popen(list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        except OSError as exc:
            raise ProtocolError(f"cannot start the scorer {shlex.join(command)!r}: {exc.strerror or exc}") from None
        self._buffer = b""
        self._broken: Optional[str] = None

    def _died(self, request: str) -> ProtocolError:
        code = self.process.wait()
        return ProtocolError(f"the server exited with code {code} before answering {_shown(request)}")

    def _read_line(self, request: str) -> bytes:
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        fd = self.process.stdout.fileno()
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and (left <= 0 or not selector.select(left)):
                    self._broken = f"an earlier request timed out after {self.timeout} s"
                    self.process.kill()
                    raise ProtocolTimeout(f"no reply within {self.timeout} s to {_shown(request)}; "
                                          f"the server was stopped")
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise self._died(request)
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def request(self, line: str) -> str:
        """Send one request line and return the reply line (raises on ``ERROR`` replies)."""
        _one_line(line)
        if self._broken:
            raise ProtocolError(f"this client cannot be used any more: {self._broken}")
        if self.process.poll() is not None:
            raise self._died(line)
        try:
            self.process.stdin.write(line.encode("utf-8") + b"\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            raise self._died(line) from None
        return self._reply(line)

    def score(self, hypothesis: str, references: Sequence[str]) -> List[float]:
        """The stats vector of one segment."""
        return parse_stats(self.request(_score_line(hypothesis, references)))

    def evaluate(self, stats: Sequence[float]) -> float:
        """The score of a (summed) stats vector."""
        return float(self.request(f"EVAL ||| {format_stats(stats)}"))

    def evaluate_many(self, vectors: Sequence[Sequence[float]]) -> Tuple[List[float], float]:
        """The score of each vector and of their sum, in one request (n >= 2 vectors answer n + 1
        lines in every dialect, METEOR 1.5's too; a single vector is sent twice and its own score is the aggregate)."""
        vectors = [list(v) for v in vectors]
        if not vectors:
            raise ValueError("evaluate_many needs at least one vector")
        sent = vectors if len(vectors) > 1 else vectors * 2
        request = "EVAL ||| " + " ||| ".join(format_stats(v) for v in sent)
        first = self.request(request)  # raises on ERROR
        lines = [first] + [self._reply(request) for _ in range(len(sent))]
        scores = [float(x) for x in lines]
        return scores[:len(vectors)], scores[-1] if len(vectors) > 1 else scores[0]

    def score_many(self, pairs: Iterable[Tuple[str, Sequence[str]]]) -> List[List[float]]:
        """Stats vectors of many ``(hypothesis, references)`` pairs, pipelined: a thread writes the
        requests while this one reads the replies (a tuner's n-best list in one pass)."""
        lines = [_one_line(_score_line(h, r)) for h, r in pairs]

        def write() -> None:
            with suppress(OSError):  # the server died: the reading side reports it, with its exit code
                for start in range(0, len(lines), 256):
                    self.process.stdin.write("".join(x + "\n" for x in lines[start:start + 256]).encode("utf-8"))
                self.process.stdin.flush()

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        try:
            return [parse_stats(self._reply(line)) for line in lines]
        finally:
            writer.join()

    def _reply(self, request: str) -> str:
        """The next reply line to ``request``; an ``ERROR`` reply raises :class:`ProtocolError`."""
        reply = self._read_line(request).decode("utf-8").rstrip("\r")
        if reply.startswith(ERROR_PREFIX):
            raise ProtocolError(reply[len(ERROR_PREFIX):])
        return reply

    def info(self) -> str:
        return self.request("INFO")

    def close(self) -> None:
        if self.process.stdin and not self.process.stdin.closed:
            with suppress(BrokenPipeError):
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
