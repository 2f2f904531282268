"""The pool engine: a pool of worker processes on contiguous chunks of the input.

Each task carries its chunk and the job's spec; a worker builds the metric once.  Specs that cannot
be pickled (a user evaluator holding a lambda) still work for jobs given before the pool starts:
the pool is forked after they are registered, so workers inherit them.
"""
from __future__ import annotations

import multiprocessing as mp
from typing import Any, Dict, List

from evalpipe.engines.base import Engine, Job, chunk_partial, chunk_rows, merge
from evalpipe.errors import EngineError

_INHERITED: Dict[int, Any] = {}  # specs registered before the pool forked, by id


def _run(task: tuple) -> Any:
    key, spec, chunk, want_rows = task
    job = Job(spec if spec is not None else _INHERITED[key], chunk)
    return chunk_rows(job) if want_rows else chunk_partial(job)


class PoolEngine(Engine):
    """``workers`` processes; chunks of at most ``chunk_size`` segments (0: about 4 per worker)."""

    name = "pool"

    def __init__(self, workers: int = 2, chunk_size: int = 0, **settings: Any) -> None:
        if workers < 1:
            raise EngineError(f"the pool engine needs at least 1 worker, got {workers}")
        self.workers, self.chunk_size = workers, chunk_size
        self._pool = None
        self._inherited: List[int] = []

    def _tasks(self, job: Job, want_rows: bool) -> List[tuple]:
        n = len(job.input)
        size = self.chunk_size or max(1, min(20000, -(-n // (self.workers * 4))))
        key, spec = id(job.spec), job.spec
        if self._pool is None:
            _INHERITED[key], spec = job.spec, None
            self._inherited.append(key)
            methods = mp.get_all_start_methods()
            self._pool = mp.get_context("fork" if "fork" in methods else methods[0]).Pool(self.workers)
        elif _INHERITED.get(key) is job.spec:
            spec = None
        return [(key, spec, chunk, want_rows) for chunk in job.input.split(-(-n // size))]

    def _local(self, job: Job) -> bool:
        return self.workers == 1 or len(job.input) < 2 * self.workers

    def rows(self, job: Job) -> List[list]:
        if self._local(job):
            return chunk_rows(job)
        out: List[list] = []
        for part in self._pool_map(job, True):
            out.extend(part)
        return out

    def total(self, job: Job) -> List[Any]:
        if self._local(job):
            return chunk_partial(job).finish()
        return merge(self._pool_map(job, False), job.metric().num_stats)

    def _pool_map(self, job: Job, want_rows: bool) -> Any:
        tasks = self._tasks(job, want_rows)
        return self._pool.imap(_run, tasks) if want_rows else self._pool.imap_unordered(_run, tasks)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool.join()
            self._pool = None
        for key in self._inherited:
            _INHERITED.pop(key, None)
        self._inherited = []
