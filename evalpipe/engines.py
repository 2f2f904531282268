"""Engines: where per-segment stats are computed and summed.

Stats are additive, so every corpus computation is a map (stats per segment) and a reduce (exact
vector sum, :mod:`evalpipe.sufficient_stats.vectors`).  The engine is a choice, not a rewrite:

* ``local`` -- this process;
* ``pool`` -- a process pool of ``workers`` processes on contiguous chunks;
* ``spark`` -- Apache Spark through pyspark (:mod:`evalpipe.spark_engine`, extra ``evalpipe[spark]``).

Metrics are rebuilt from their name and options where the work runs (they need not be
picklable), and only stats vectors travel back.  Integer stats sum exactly; float stats are
accumulated in exact fixed point per chunk or partition and merged without rounding, so every
engine and every worker count gives the same numbers to the last bit.
"""
from __future__ import annotations

import multiprocessing as mp
from typing import Any, Dict, List, Sequence, Tuple

from evalpipe.sufficient_stats.vectors import Partial, partial_sum

ENGINES = ("local", "pool", "spark")

_METRICS: Dict[Tuple[str, str], Any] = {}


class EngineError(RuntimeError):
    """An engine that cannot run here (missing pyspark or Java, bad master URL, ...)."""


def metric_for(name: str, options: Dict[str, Any]) -> Any:
    """The metric ``name`` with ``options``, built once per process (used by workers and executors)."""
    key = (name, repr(sorted(options.items())))
    if key not in _METRICS:
        from evalpipe.registry import load_metric

        _METRICS[key] = load_metric(name, **options)
    return _METRICS[key]


def segment_rows(metric: Any, hyps: Sequence[Any], refs: Sequence[Sequence[str]]) -> List[list]:
    """Stats rows of ``hyps`` against reference streams ``refs`` (all in memory).  With no
    reference streams, ``hyps`` are instance records (SimulEval logs) scored by ``item_stats``."""
    if not refs:
        return [metric.item_stats(item) for item in hyps]
    return metric.corpus_stats(hyps, refs)


def _chunk_rows(args: tuple) -> List[list]:
    name, options, hyps, refs = args
    return segment_rows(metric_for(name, options), hyps, refs)


def _chunk_partial(args: tuple) -> Partial:
    name, options, hyps, refs = args
    metric = metric_for(name, options)
    return partial_sum(segment_rows(metric, hyps, refs), metric.num_stats)


class LocalEngine:
    """Everything in this process."""

    name = "local"

    def rows(self, metric: Any, name: str, options: Dict[str, Any], hyps: Sequence[str],
             refs: Sequence[Sequence[str]]) -> List[list]:
        return segment_rows(metric, hyps, refs)

    def total(self, metric: Any, name: str, options: Dict[str, Any], hyps: Sequence[str],
              refs: Sequence[Sequence[str]]) -> List[Any]:
        return partial_sum(segment_rows(metric, hyps, refs), metric.num_stats).finish()

    def close(self) -> None:
        pass


class PoolEngine(LocalEngine):
    """A pool of ``workers`` processes; each gets contiguous chunks and builds its own metric."""

    name = "pool"

    def __init__(self, workers: int = 2, chunk_size: int = 0) -> None:
        if workers < 1:
            raise EngineError(f"the pool engine needs at least 1 worker, got {workers}")
        self.workers = workers
        self.chunk_size = chunk_size
        self._pool = None

    def _get_pool(self):
        if self._pool is None:
            methods = mp.get_all_start_methods()
            ctx = mp.get_context("fork" if "fork" in methods else methods[0])
            self._pool = ctx.Pool(self.workers)
        return self._pool

    def _chunks(self, name, options, hyps, refs):
        n = len(hyps)
        size = self.chunk_size or max(1, min(20000, -(-n // (self.workers * 4))))
        return [(name, options, list(hyps[i:i + size]), [list(r[i:i + size]) for r in refs])
                for i in range(0, n, size)]

    def rows(self, metric, name, options, hyps, refs):
        if self.workers == 1 or len(hyps) < 2 * self.workers:
            return segment_rows(metric, hyps, refs)
        out: List[list] = []
        for part in self._get_pool().imap(_chunk_rows, self._chunks(name, options, hyps, refs)):
            out.extend(part)
        self._observe(metric, hyps, refs)
        return out

    def total(self, metric, name, options, hyps, refs):
        if self.workers == 1 or len(hyps) < 2 * self.workers:
            return super().total(metric, name, options, hyps, refs)
        total = Partial(metric.num_stats)
        for part in self._get_pool().imap_unordered(_chunk_partial, self._chunks(name, options, hyps, refs)):
            total = total.merge(part)
        self._observe(metric, hyps, refs)
        return total.finish()

    @staticmethod
    def _observe(metric, hyps, refs) -> None:
        # The driver's metric object sees one segment too, so what it records about its input
        # (the reference count in its signature) is what it would have recorded scoring locally.
        if hyps:
            metric.item_stats(hyps[0]) if not refs else metric.stats(hyps[0], [r[0] for r in refs])

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool.join()
            self._pool = None


def make_engine(name: str = "local", workers: int = 1, spark_master: str = "local[2]") -> Any:
    """An engine by name; ``spark`` imports pyspark only here."""
    if name == "local":
        return PoolEngine(workers) if workers > 1 else LocalEngine()
    if name == "pool":
        return PoolEngine(max(workers, 2) if workers == 1 else workers)
    if name == "spark":
        from evalpipe.spark_engine import SparkEngine

        return SparkEngine(master=spark_master)
    raise EngineError(f"unknown engine {name!r}; expected one of {', '.join(ENGINES)}")
