"""The Apache Spark engine (pyspark; ``pip install 'evalpipe[spark]'``).

Segments are distributed as (hypothesis, references) records -- from in-memory lists, or read by
Spark itself from text files (local paths, ``hdfs://``, ``s3a://`` ...) so a corpus never passes
through the driver.  Each partition builds the metric from its name and options (the plugin is
imported on the executor) and returns either its stats rows (for resampling) or one exact partial
sum; the driver merges partial sums without rounding (:class:`evalpipe.sufficient_stats.vectors.Partial`),
so results equal the local engine's to the last bit.

Executors need evalpipe and the metric plugins installed.  Spark's console noise is silenced
(log level ERROR, no progress bar); a missing Java or pyspark gives an :class:`EngineError` saying
what to install.  Text read by Spark is split on ``\\n``, ``\\r`` or ``\\r\\n`` by Hadoop's line
reader, and undecodable bytes become U+FFFD (the local engine rejects them instead).
"""
from __future__ import annotations

import logging
import os
import shutil
import sys
from typing import Any, Dict, Iterable, Iterator, List, Sequence, Tuple

from evalpipe.engines import EngineError, metric_for
from evalpipe.sufficient_stats.vectors import Partial, partial_sum

log = logging.getLogger(__name__)


def _java_available() -> bool:
    home = os.environ.get("JAVA_HOME")
    return bool(shutil.which("java") or (home and os.path.exists(os.path.join(home, "bin", "java"))))


def _batch_rows(metric: Any, records: List[Tuple[int, Tuple[str, Tuple[str, ...]]]]) -> List[list]:
    """Stats rows of a partition's records, through the metric's vectorized ``corpus_stats``
    when every record has the same number of references."""
    if len({len(refs) for _, (_, refs) in records}) != 1:
        return [metric.stats(hyp, list(refs)) for _, (hyp, refs) in records]
    hyps = [hyp for _, (hyp, _) in records]
    streams = [list(stream) for stream in zip(*(refs for _, (_, refs) in records))]
    return metric.corpus_stats(hyps, streams)


def _partition_rows(name: str, options: Dict[str, Any]):
    def run(records: Iterable[Tuple[int, Tuple[str, Tuple[str, ...]]]]) -> Iterator[Tuple[int, list]]:
        records = list(records)
        if records:
            yield from zip((index for index, _ in records), _batch_rows(metric_for(name, options), records))
    return run


def _partition_partial(name: str, options: Dict[str, Any]):
    def run(records: Iterable[Tuple[int, Tuple[str, Tuple[str, ...]]]]) -> Iterator[Partial]:
        metric = metric_for(name, options)
        records = list(records)
        yield partial_sum(_batch_rows(metric, records) if records else [], metric.num_stats)
    return run


class TextFiles:
    """A hypothesis file and reference files that Spark reads itself (paths or URIs)."""

    def __init__(self, hypothesis: str, references: Sequence[str]) -> None:
        self.hypothesis = hypothesis
        self.references = list(references)


class SparkEngine:
    """Stats through Spark; ``master`` is ``local[2]``, ``spark://host:7077``, ``yarn`` ..."""

    name = "spark"

    def __init__(self, master: str = "local[2]", spark_context: Any = None, app_name: str = "evalpipe") -> None:
        self._owns_context = spark_context is None
        self.sc = spark_context or self._start(master, app_name)

    @staticmethod
    def _start(master: str, app_name: str) -> Any:
        try:
            from pyspark import SparkConf, SparkContext
        except ImportError:
            raise EngineError("the spark engine needs pyspark: pip install 'evalpipe[spark]'") from None
        if not _java_available():
            raise EngineError("the spark engine needs Java (17 or newer) and found none: install a JDK "
                              "(for example `apt-get install openjdk-17-jre-headless`) or set JAVA_HOME")
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        quiet = os.path.join(os.path.dirname(__file__), "spark-log4j2.properties")
        java_opts = f"-Dlog4j2.configurationFile=file:{quiet} -Dlog4j.configurationFile=file:{quiet}"
        conf = (SparkConf().setMaster(master).setAppName(app_name)
                .set("spark.ui.enabled", "false").set("spark.ui.showConsoleProgress", "false")
                .set("spark.driver.extraJavaOptions", java_opts).set("spark.executor.extraJavaOptions", java_opts)
                .set("spark.python.worker.reuse", "true"))
        try:
            sc = SparkContext.getOrCreate(conf)
        except Exception as exc:  # py4j / JVM start-up failures
            raise EngineError(f"Spark did not start with master {master!r}: {type(exc).__name__}: {exc}") from exc
        sc.setLogLevel("ERROR")
        return sc

    # -- inputs ---------------------------------------------------------------------------------
    def _records(self, hyps: Any, refs: Sequence[Sequence[str]]):
        """An RDD of (index, (hyp, refs)) from in-memory lists or a :class:`TextFiles`."""
        if isinstance(hyps, TextFiles):
            return self._records_from_files(hyps)
        data = list(zip(range(len(hyps)), zip(hyps, zip(*refs))))
        slices = max(self.sc.defaultParallelism, min(len(data) // 20000, 1000), 1)
        return self.sc.parallelize(data, slices)

    def _records_from_files(self, files: TextFiles):
        def indexed(path: str):
            return self.sc.textFile(path).zipWithIndex().map(lambda pair: (pair[1], pair[0]))

        hyp = indexed(files.hypothesis)
        counts = {files.hypothesis: hyp.count()}
        joined = hyp.mapValues(lambda h: (h, ()))
        for path in files.references:
            ref = indexed(path)
            counts[path] = ref.count()
            joined = joined.join(ref).mapValues(lambda pair: (pair[0][0], pair[0][1] + (pair[1],)))
        if len(set(counts.values())) != 1:
            shown = ", ".join(f"{p} has {n} lines" for p, n in counts.items())
            raise ValueError(f"line counts differ: {shown}")
        return joined

    # -- the engine interface -------------------------------------------------------------------
    def rows(self, metric: Any, name: str, options: Dict[str, Any], hyps: Any,
             refs: Sequence[Sequence[str]] = ()) -> List[list]:
        records = self._records(hyps, refs)
        out = records.mapPartitions(_partition_rows(name, options)).sortByKey().values().collect()
        self._observe(metric, hyps, refs)
        return out

    def total(self, metric: Any, name: str, options: Dict[str, Any], hyps: Any,
              refs: Sequence[Sequence[str]] = ()) -> List[Any]:
        records = self._records(hyps, refs)
        partials = records.mapPartitions(_partition_partial(name, options)).collect()
        total = Partial(metric.num_stats)
        for part in partials:
            total = total.merge(part)
        self._observe(metric, hyps, refs)
        return total.finish()

    def map_partials(self, data: Sequence[Any], item_stats: Any, width: int, slices: int = 0) -> Partial:
        """Exact sum of ``item_stats(item)`` over ``data`` (used by the sentence-evaluator API)."""
        def run(items: Iterable[Any]) -> Iterator[Partial]:
            yield partial_sum([item_stats(x) for x in items], width)

        rdd = self.sc.parallelize(list(data), slices or self.sc.defaultParallelism)
        total = Partial(width)
        for part in rdd.mapPartitions(run).collect():
            total = total.merge(part)
        return total

    def _observe(self, metric: Any, hyps: Any, refs: Sequence[Sequence[str]]) -> None:
        if isinstance(hyps, TextFiles):
            metric.stats("", [""] * len(hyps.references))
        elif len(hyps):
            metric.stats(hyps[0], [r[0] for r in refs])

    def close(self) -> None:
        if self._owns_context and self.sc is not None:
            self.sc.stop()
            self.sc = None
