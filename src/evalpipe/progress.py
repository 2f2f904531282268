"""Progress of a long run on stderr, shown only to a person watching: when stderr is a terminal and the run has
taken more than ``EVALPIPE_PROGRESS_AFTER`` seconds (5 unless set), as one line rewritten in place, e.g.
``meta-eval matrix: pair 3/45, draws 2000/10000 (7 s)``, and ended with a line end.

A command opens it with :func:`shown`; the code doing the work says where it is with :func:`step`, level by level
(setting a level clears the levels set after it).  Nothing is written to stdout, and nothing at all where stderr
is a file or a pipe, so results and logs stay as they were.  Imports nothing of evalpipe (every layer may call it).
"""
from __future__ import annotations

import contextvars
import os
import sys
import time
from contextlib import contextmanager
from typing import Dict, Iterator, Optional, TextIO, Tuple

_CURRENT: contextvars.ContextVar = contextvars.ContextVar("evalpipe_progress", default=None)


def delay() -> float:
    """Seconds of a run before its progress shows (``EVALPIPE_PROGRESS_AFTER``, default 5)."""
    try:
        return max(0.0, float(os.environ.get("EVALPIPE_PROGRESS_AFTER", "5")))
    except ValueError:
        return 5.0


class Progress:
    """The progress line of one command (see the module docstring)."""

    def __init__(self, label: str, stream: TextIO, after: float, every: float = 0.25) -> None:
        self.label, self.stream, self.after, self.every = label, stream, after, every
        self.start = time.monotonic()
        self.levels: Dict[str, Tuple[int, int]] = {}
        self.written = -1.0  # when the line was last written (monotonic), -1: never

    def step(self, level: str, done: int, total: int) -> None:
        if level in self.levels:
            names = list(self.levels)
            for name in names[names.index(level) + 1:]:
                del self.levels[name]
        self.levels[level] = (done, total)
        now = time.monotonic()
        if now - self.start >= self.after and now - self.written >= self.every:
            parts = ", ".join(f"{name} {d:,}/{t:,}" for name, (d, t) in self.levels.items())
            self.stream.write(f"\r{self.label}: {parts} ({now - self.start:.0f} s)\033[K")
            self.stream.flush()
            self.written = now

    def close(self) -> None:
        if self.written >= 0:
            self.stream.write("\n")
            self.stream.flush()


@contextmanager
def shown(label: str, stream: Optional[TextIO] = None) -> Iterator[Optional[Progress]]:
    """The progress of the run inside, labelled ``label``, on ``stream`` (stderr) if it is a terminal."""
    stream = stream or sys.stderr
    try:
        watched = stream.isatty()
    except (AttributeError, ValueError):
        watched = False
    progress = Progress(label, stream, delay()) if watched else None
    token = _CURRENT.set(progress)
    try:
        yield progress
    finally:
        _CURRENT.reset(token)
        if progress is not None:
            progress.close()


def step(level: str, done: int, total: int) -> None:
    """Where the current run is at ``level`` (``task``, ``pair``, ``draws``): ``done`` of ``total``."""
    progress = _CURRENT.get()
    if progress is not None:
        progress.step(level, done, total)
