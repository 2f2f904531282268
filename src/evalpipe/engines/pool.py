"""The pool engine: a pool of worker processes on contiguous chunks of the input.

Each task carries its chunk and the job's spec; a worker builds the metric once.  Specs that cannot
be pickled (a user evaluator holding a lambda) still work for jobs given before the pool starts:
the pool is forked after they are registered, so workers inherit them.

A worker that dies (killed, out of memory, a plugin calling ``os._exit``) never hangs the job: the
pool breaks, every unfinished chunk fails, and :class:`~evalpipe.errors.EngineError` names the chunks
that had started and not finished (each worker reports the chunk it starts) with their segment ranges.
No partial total is returned.
"""
from __future__ import annotations

import multiprocessing as mp
from itertools import accumulate, chain
from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor, as_completed, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Dict, Iterator, List, Optional

from evalpipe.engines.base import Engine, Job, chunk_partial, chunk_rows, merge
from evalpipe.errors import EngineError

_INHERITED: Dict[int, Any] = {}  # specs registered before the pool forked, by id
_STARTED: Optional[Any] = None  # in a worker: where it reports the chunk it starts


def _init(started: Any) -> None:
    global _STARTED
    _STARTED = started


def _run(task: tuple) -> Any:
    key, spec, chunk, want_rows, index = task
    if _STARTED is not None:
        _STARTED.put(index)
    job = Job(spec if spec is not None else _INHERITED[key], chunk)
    return chunk_rows(job) if want_rows else chunk_partial(job)


class PoolEngine(Engine):
    """``workers`` processes; chunks of at most ``chunk_size`` segments (0: about 4 per worker)."""

    name = "pool"

    def __init__(self, workers: int = 2, chunk_size: int = 0, **settings: Any) -> None:
        if workers < 1:
            raise EngineError(f"the pool engine needs at least 1 worker, got {workers}")
        self.workers, self.chunk_size = workers, chunk_size
        self._pool: Optional[ProcessPoolExecutor] = None
        self._started: Any = None
        self._broken = ""
        self._inherited: List[int] = []

    def _tasks(self, job: Job, want_rows: bool) -> List[tuple]:
        n = len(job.input)
        size = self.chunk_size or max(1, min(20000, -(-n // (self.workers * 4))))
        key, spec = id(job.spec), job.spec
        if self._pool is None:
            _INHERITED[key], spec = job.spec, None
            self._inherited.append(key)
            methods = mp.get_all_start_methods()
            context = mp.get_context("fork" if "fork" in methods else methods[0])
            self._started = context.SimpleQueue()
            self._pool = ProcessPoolExecutor(self.workers, mp_context=context, initializer=_init,
                                             initargs=(self._started,))
        elif _INHERITED.get(key) is job.spec:
            spec = None
        return [(key, spec, chunk, want_rows, i) for i, chunk in enumerate(job.input.split(-(-n // size)))]

    def _local(self, job: Job) -> bool:
        return self.workers == 1 or len(job.input) < 2 * self.workers

    def rows(self, job: Job) -> List[list]:
        if self._local(job):
            return chunk_rows(job)
        return list(chain.from_iterable(self._pool_map(job, True)))

    def total(self, job: Job) -> List[Any]:
        if self._local(job):
            return chunk_partial(job).finish()
        return merge(self._pool_map(job, False), job.metric().num_stats)

    def _pool_map(self, job: Job, want_rows: bool) -> Iterator[Any]:
        if self._pool is None and self._broken:
            raise EngineError(f"the pool engine cannot run more jobs: {self._broken}")
        tasks = self._tasks(job, want_rows)
        futures = [self._pool.submit(_run, task) for task in tasks]
        try:
            for future in (futures if want_rows else as_completed(futures)):
                yield future.result()
        except BrokenProcessPool:
            raise self._died(futures, tasks) from None
        finally:
            for future in futures:
                future.cancel()

    def _died(self, futures: List[Any], tasks: List[tuple]) -> EngineError:
        wait(futures, return_when=FIRST_EXCEPTION)
        started = set()
        while not self._started.empty():
            started.add(self._started.get())
        finished = {i for i, f in enumerate(futures) if f.done() and not f.cancelled() and f.exception() is None}
        offsets = [0, *accumulate(len(task[2]) for task in tasks)]
        suspects = sorted(started - finished) or sorted(set(range(len(tasks))) - finished)
        shown = ", ".join(f"{i + 1} (segments {offsets[i] + 1}-{offsets[i + 1]})" for i in suspects)
        self._broken = f"a worker process died while scoring chunk(s) {shown} of {len(tasks)}"
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._pool = None
        return EngineError(f"{self._broken}; no score was computed")

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        for key in self._inherited:
            _INHERITED.pop(key, None)
        self._inherited = []
