"""The engine interface: where a job's stats are computed and summed.

A :class:`Job` is a metric spec and an input (:mod:`evalpipe.inputs`).  An engine implements two
methods over jobs -- :meth:`Engine.rows` (every segment's stats row, in order, for resampling and
sentence scores) and :meth:`Engine.total` (the exact column sums) -- and never looks at what kind of
input it got: inputs split themselves into chunks and compute their rows where the work runs, and
specs rebuild their metric there (:meth:`evalpipe.registry.MetricSpec.build`), so only stats travel.
Integer stats sum exactly; float stats are accumulated in exact fixed point per chunk or partition
and merged without rounding (:class:`evalpipe.sufficient_stats.vectors.Partial`), so every engine and
worker count gives the same numbers to the last bit.

A new engine (Ray, Dask, ...) is one module with a subclass of :class:`Engine` and one line in the
``evalpipe.engines`` entry-point group.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, List, Sequence

from evalpipe.inputs import Input
from evalpipe.sufficient_stats.vectors import Partial


@dataclass(frozen=True)
class Job:
    """One metric over one input.  ``spec`` is a :class:`~evalpipe.registry.MetricSpec` (or any
    picklable object whose ``build()`` returns something with ``num_stats`` that an input can score)."""

    spec: Any
    input: Input

    def metric(self) -> Any:
        return self.spec.build()


_THREADS = 1


def kernel_threads() -> int:
    """How many threads the chunk being computed in this process may run its GIL-free C kernels on (the MBR
    n-gram utilities): what the engine computing it gave -- its workers when every one of them is idle, 1 in a
    pool worker or a Spark task, whose engine already spreads the chunks over the cores."""
    return _THREADS


def chunk_rows(job: Job, threads: int = 1) -> List[list]:
    """The stats rows of a job, computed here (in a worker, an executor, or this process), its kernels on up to
    ``threads`` threads (:func:`kernel_threads`)."""
    global _THREADS
    before, _THREADS = _THREADS, max(1, threads)
    try:
        return job.input.rows(job.metric())
    finally:
        _THREADS = before


def chunk_partial(job: Job) -> Partial:
    """The exact partial sum of a job's rows, computed here."""
    return job.input.partial(job.metric())


class Engine(ABC):
    """Base of the engines (see the module docstring).  Use as a context manager or call ``close``."""

    name = "engine"
    #: True for an engine that reads text files itself (it is then given :class:`~evalpipe.inputs.TextFiles`)
    reads_files = False

    def __init__(self, **settings: Any) -> None:
        """Engines are built as ``cls(workers=N, **settings)`` and ignore the settings they do not use."""

    @abstractmethod
    def rows(self, job: Job) -> List[list]:
        """Every segment's stats row, in input order."""

    @abstractmethod
    def total(self, job: Job) -> List[Any]:
        """The exact sum of every segment's stats row."""

    def run(self, jobs: Sequence[Job], want_rows: bool, done: Callable[[int], None] = lambda i: None) -> List[Any]:
        """Every job's rows (``want_rows``) or total, in order; ``done(i)`` as job ``i`` finishes.  An
        engine that can work on several jobs at once (the pool) overrides this to hand them out together."""
        out = []
        for i, job in enumerate(jobs):
            out.append(self.rows(job) if want_rows else self.total(job))
            done(i)
        return out

    def close(self) -> None:
        """Release workers or contexts the engine started."""

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def merge(partials: Any, width: int) -> List[Any]:
    """The exact total of partial sums, in any order."""
    total = Partial(width)
    for part in partials:
        total = total.merge(part)
    return total.finish()
