"""The Apache Spark engine (pyspark; ``pip install 'evalpipe[spark]'``).

An input becomes an RDD of ``(index, (hypothesis, references))`` records
(:meth:`evalpipe.inputs.Input.spark_records`: in-memory inputs are parallelized, text files are
read by Spark itself, so HDFS or S3 paths never pass through the driver).  Each partition turns its
records back into an input, rebuilds the metric from its spec (the plugin is imported on the
executor) and returns its stats rows or one exact partial sum; the driver merges partial sums
without rounding, so results equal the local engine's to the last bit.

Executors need evalpipe and the metric plugins installed.  Spark's console noise is silenced (log
level ERROR, no progress bar) unless the command runs with ``-v`` (debug logging): the JVM's start-up
lines ("Using incubator modules", "Setting default log level") and the stderr of everything it starts go
to a log file named in the debug log and in any start-up error, and pyspark's import-time
``FutureWarning`` is not shown.  A missing Java or pyspark is an :class:`~evalpipe.errors.EngineError`
saying what to install.
"""
from __future__ import annotations

import logging
import os
import shutil
import sys
import tempfile
import warnings
from contextlib import contextmanager, suppress
from typing import Any, Callable, Iterable, Iterator, List, Optional

from evalpipe.engines.base import Engine, Job, chunk_partial, chunk_rows, merge
from evalpipe.errors import EngineError


def _java_available() -> bool:
    home = os.environ.get("JAVA_HOME")
    return bool(shutil.which("java") or (home and os.path.exists(os.path.join(home, "bin", "java"))))


log = logging.getLogger(__name__)


@contextmanager
def _stderr_to(path: Optional[str]) -> Iterator[None]:
    """File descriptor 2 pointed at ``path`` (appended) meanwhile, so the JVM started meanwhile keeps writing
    there; None leaves it alone."""
    if path is None:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(target, 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(target)


class SparkEngine(Engine):
    """Stats through Spark; ``master`` is ``local[2]``, ``spark://host:7077``, ``yarn`` ..."""

    name = "spark"
    reads_files = True

    def __init__(self, master: str = "local[2]", spark_context: Any = None, app_name: str = "evalpipe",
                 **settings: Any) -> None:
        self._owns_context = spark_context is None
        self.jvm_log: Optional[str] = None
        self.sc = spark_context or self._start(master, app_name)

    def _start(self, master: str, app_name: str) -> Any:
        verbose = logging.getLogger().isEnabledFor(logging.DEBUG)
        try:
            with warnings.catch_warnings():
                if not verbose:  # pyspark warns about pandas versions when imported
                    warnings.simplefilter("ignore", FutureWarning)
                from pyspark import SparkConf, SparkContext
        except ImportError:
            raise EngineError("the spark engine needs pyspark: pip install 'evalpipe[spark]'") from None
        if not _java_available():
            raise EngineError("the spark engine needs Java (17 or newer) and found none: install a JDK "
                              "(for example `apt-get install openjdk-17-jre-headless`) or set JAVA_HOME")
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        quiet = os.path.join(os.path.dirname(os.path.dirname(__file__)), "spark-log4j2.properties")
        java_opts = f"-Dlog4j2.configurationFile=file:{quiet} -Dlog4j.configurationFile=file:{quiet}"
        conf = (SparkConf().setMaster(master).setAppName(app_name)
                .set("spark.ui.enabled", "false").set("spark.ui.showConsoleProgress", "false")
                .set("spark.driver.extraJavaOptions", java_opts).set("spark.executor.extraJavaOptions", java_opts)
                .set("spark.python.worker.reuse", "true"))
        if not verbose:
            handle, self.jvm_log = tempfile.mkstemp(prefix="evalpipe-spark-", suffix=".log")
            os.close(handle)
            log.debug("Spark's own output: %s", self.jvm_log)
        try:
            with _stderr_to(self.jvm_log), warnings.catch_warnings():
                if not verbose:
                    warnings.simplefilter("ignore", FutureWarning)
                sc = SparkContext.getOrCreate(conf)
        except Exception as exc:  # py4j / JVM start-up failures
            where = f" (Spark's output: {self.jvm_log})" if self.jvm_log else ""
            raise EngineError(f"Spark did not start with master {master!r}: {type(exc).__name__}: {exc}{where}") from exc
        sc.setLogLevel("ERROR")
        return sc

    def _records(self, job: Job) -> Any:
        return job.input.spark_records(self.sc, max(self.sc.defaultParallelism, 1))

    def _map_partitions(self, job: Job, compute: Callable[[List[int], Job], Iterable[Any]]) -> Any:
        """An RDD of ``compute(indices, job of the partition's records)`` over the job's records."""
        spec, kind, nrefs = job.spec, type(job.input), job.input.nrefs

        def run(records: Iterable[Any]) -> Iterator[Any]:
            records = list(records)
            if records:
                yield from compute([i for i, _ in records], Job(spec, kind.from_segments([s for _, s in records], nrefs)))
        return job.input.spark_records(self.sc, max(self.sc.defaultParallelism, 1)).mapPartitions(run)

    def rows(self, job: Job) -> List[list]:
        return self._map_partitions(job, lambda index, part: zip(index, chunk_rows(part))).sortByKey().values().collect()

    def total(self, job: Job) -> List[Any]:
        width = job.metric().num_stats
        return merge(self._map_partitions(job, lambda index, part: [chunk_partial(part)]).collect(), width)

    def close(self) -> None:
        if self._owns_context and self.sc is not None:
            self.sc.stop()
            self.sc = None
        if self.jvm_log:  # the run is over: its log goes with it
            with suppress(OSError):
                os.unlink(self.jvm_log)
            self.jvm_log = None
