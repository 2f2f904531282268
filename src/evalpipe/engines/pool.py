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

from concurrent.futures import as_completed  # (the package imports its process pool only when asked for it)
from itertools import accumulate, chain
from typing import Any, Callable, Dict, List, Optional, Sequence

from evalpipe.engines.base import Engine, Job, chunk_partial, chunk_rows, merge
from evalpipe.errors import EngineError, EngineUsageError

_INHERITED: Dict[int, Any] = {}  # specs registered before the pool forked, by id
_STARTED: Optional[Any] = None  # in a worker: where it reports the chunk it starts


def _init(started: Any) -> None:
    """A worker's start: where it reports chunks; and one thread for the numerical libraries it uses (torch's
    least squares in MBR, BLAS), since the pool already spreads the work over the cores -- several threads a
    worker oversubscribe them, and a torch thread pool inherited through fork serializes on its locks."""
    import os
    import sys

    global _STARTED
    _STARTED = started
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[name] = "1"
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)


def _run(task: tuple) -> Any:
    key, spec, chunk, want_rows, index = task
    if _STARTED is not None:
        _STARTED.put(index)
    job = Job(spec if spec is not None else _INHERITED[key], chunk)
    return chunk_rows(job) if want_rows else chunk_partial(job)


def _first_failure(futures: List[Any], failed: int) -> BaseException:
    """The error of the first chunk, in input order, that failed: chunks finish in any order, and the error a user
    sees (the first bad line of a file) must not depend on which worker was faster.  The chunks before
    ``failed`` are waited for; the later ones are not needed."""
    from concurrent.futures import wait

    wait(futures[:failed])
    for future in futures[:failed + 1]:
        if not future.cancelled() and future.exception() is not None:
            return future.exception()
    return futures[failed].exception()


class PoolEngine(Engine):
    """``workers`` processes; chunks of at most ``chunk_size`` segments (0: about 4 per worker).  A run whose
    jobs hold less than ``min_work`` work in all (:meth:`evalpipe.inputs.Input.work`) is computed in this
    process, without starting the workers (the automatic default, :func:`evalpipe.engines.make_engine`)."""

    name = "pool"

    def __init__(self, workers: int = 2, chunk_size: int = 0, min_work: int = 0, **settings: Any) -> None:
        if workers < 1:
            raise EngineUsageError(f"the pool engine needs at least 1 worker, got {workers}")
        self.workers, self.chunk_size, self.min_work = workers, chunk_size, min_work
        self._pool: Optional[Any] = None  # a ProcessPoolExecutor once started
        self._started: Any = None
        self._broken = ""
        self._inherited: List[int] = []

    def _spec(self, job: Job) -> tuple:
        """``(key, spec)`` for a task: the spec travels unless the workers inherited it at the fork."""
        key, spec = id(job.spec), job.spec
        if self._pool is None:
            _INHERITED[key], spec = job.spec, None
            self._inherited.append(key)
        elif _INHERITED.get(key) is job.spec:
            spec = None
        return key, spec

    def _start(self) -> None:
        if self._pool is None and self._broken:
            raise EngineError(f"the pool engine cannot run more jobs: {self._broken}")
        if self._pool is None:  # multiprocessing is imported here: a run that stays in this process never pays it
            import multiprocessing as mp
            from concurrent.futures import ProcessPoolExecutor

            methods = mp.get_all_start_methods()
            context = mp.get_context("fork" if "fork" in methods else methods[0])
            self._started = context.SimpleQueue()
            self._pool = ProcessPoolExecutor(self.workers, mp_context=context, initializer=_init,
                                             initargs=(self._started,))

    def _chunks(self, job: Job) -> List[Any]:
        n = len(job.input)
        size = self.chunk_size or max(1, min(20000, -(-n // (self.workers * 4))))
        return job.input.split(-(-n // size))

    def _local(self, job: Job) -> bool:
        return self.workers == 1 or len(job.input) < 2 * self.workers

    def rows(self, job: Job) -> List[list]:
        return self.run([job], True)[0]

    def total(self, job: Job) -> List[Any]:
        return self.run([job], False)[0]

    def run(self, jobs: Sequence[Job], want_rows: bool, done: Callable[[int], None] = lambda i: None) -> List[Any]:
        """Every job's chunks handed to the workers at once (small jobs are computed here meanwhile); each
        job's result as soon as its last chunk is back."""
        out: List[Any] = [None] * len(jobs)
        small = self.min_work and sum(job.input.work() for job in jobs) < self.min_work
        remote = [] if small else [i for i, job in enumerate(jobs) if not self._local(job)]
        tasks: List[tuple] = []
        owner: List[int] = []  # the job of each task
        if remote:
            keys = {id(jobs[i].spec): self._spec(jobs[i]) for i in remote}
            self._start()
            for i in remote:
                key, spec = keys[id(jobs[i].spec)]
                for chunk in self._chunks(jobs[i]):
                    tasks.append((key, spec, chunk, want_rows, len(tasks)))
                    owner.append(i)
        futures = [self._pool.submit(_run, task) for task in tasks] if tasks else []
        broken: Any = ()  # catches nothing when no worker runs
        if tasks:
            from concurrent.futures.process import BrokenProcessPool as broken
        try:
            for i, job in enumerate(jobs):
                if i not in remote:
                    out[i] = chunk_rows(job, 1 if tasks else self.workers) if want_rows else chunk_partial(job).finish()
                    done(i)
            parts: Dict[int, List[Any]] = {i: [None] * owner.count(i) for i in remote}
            first = {i: owner.index(i) for i in remote}
            left = {i: len(parts[i]) for i in remote}
            place = {id(f): t for t, f in enumerate(futures)}
            for future in as_completed(futures):
                t = place[id(future)]
                i = owner[t]
                if future.exception() is not None:
                    raise _first_failure(futures, t)
                parts[i][t - first[i]] = future.result()
                left[i] -= 1
                if not left[i]:
                    out[i] = list(chain.from_iterable(parts[i])) if want_rows else \
                        merge(parts[i], len(parts[i][0].totals))
                    parts[i] = []
                    done(i)
        except broken:
            raise self._died(futures, tasks) from None
        finally:
            for future in futures:
                future.cancel()
        return out

    def _died(self, futures: List[Any], tasks: List[tuple]) -> EngineError:
        from concurrent.futures import FIRST_EXCEPTION, wait

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
