"""Engines give identical results: local, a process pool, and Spark in local mode (marked ``spark``)."""
from __future__ import annotations

import json
import math
import random

import pytest
from click.testing import CliRunner

from evalpipe import load_metric
from evalpipe.cli.score_corpus import score_corpus
from evalpipe.engines import EngineError, Job, make_engine
from evalpipe.engines.local import LocalEngine
from evalpipe.engines.pool import PoolEngine
from evalpipe.inputs import TextFiles, TextPairs
from evalpipe.registry import MetricSpec
from evalpipe.sufficient_stats.vectors import partial_sum, sum_stats


def job(name, hyps, refs):
    return Job(MetricSpec.of(name), TextPairs(hyps, refs))


def test_float_sums_are_exact_and_order_independent():
    rng = random.Random(3)
    values = [rng.uniform(-1, 1) * 10 ** rng.randint(-12, 12) for _ in range(20000)]
    rows = [[v, 1] for v in values]
    total = sum_stats(rows)
    assert total[0] == math.fsum(values) and total[1] == 20000
    shuffled = rows[:]
    rng.shuffle(shuffled)
    parts = [partial_sum(shuffled[i:i + 777]) for i in range(0, len(shuffled), 777)]
    merged = parts[0]
    for part in parts[1:]:
        merged = merged.merge(part)
    assert merged.finish() == total


@pytest.mark.parametrize("name", ["bleu", "ter", "token_f1"])
def test_pool_equals_local(news, name):
    refs = [r[:150] for r in news["en-de.refs"][:2]]
    hyps = next(iter(news["en-de.systems"].values()))[:150]
    local_rows = LocalEngine().rows(job(name, hyps, refs))
    with PoolEngine(2, chunk_size=16) as pool:
        assert pool.rows(job(name, hyps, refs)) == local_rows
        assert pool.total(job(name, hyps, refs)) == sum_stats(local_rows)


def test_unknown_engine():
    with pytest.raises(EngineError, match="expected one of local, pool, spark"):
        make_engine("dask")


def test_missing_java_is_a_clear_error(monkeypatch):
    pytest.importorskip("pyspark")
    import evalpipe.engines.spark as se

    monkeypatch.setattr(se, "_java_available", lambda: False)
    with pytest.raises(EngineError, match="needs Java"):
        se.SparkEngine(master="local[1]")


@pytest.fixture(scope="module")
def spark():
    pytest.importorskip("pyspark")
    from evalpipe.engines.spark import SparkEngine

    engine = SparkEngine(master="local[2]")
    yield engine
    engine.close()


@pytest.mark.spark
def test_spark_equals_local_in_memory(spark, news):
    refs = [r[:200] for r in news["en-de.refs"][:2]]
    hyps = next(iter(news["en-de.systems"].values()))[:200]
    for name in ("bleu", "chrf", "ter"):
        local = LocalEngine().rows(job(name, hyps, refs))
        assert spark.rows(job(name, hyps, refs)) == local
        assert spark.total(job(name, hyps, refs)) == sum_stats(local)


@pytest.mark.spark
def test_spark_reads_files_itself(spark, news):
    p = news["paths"]
    hyps = [line.rstrip("\n") for line in open(p["ende_sys"][0], encoding="utf-8")]
    refs = [[line.rstrip("\n") for line in open(p["ende_ref"], encoding="utf-8")]]
    files = Job(MetricSpec.of("bleu"), TextFiles(p["ende_sys"][0], [p["ende_ref"]]))
    assert spark.total(files) == LocalEngine().total(job("bleu", hyps, refs))
    assert spark.rows(files) == LocalEngine().rows(files) == PoolEngine(2).rows(files)


@pytest.mark.spark
def test_spark_line_count_mismatch(spark, news, tmp_path):
    short = tmp_path / "short.txt"
    short.write_text("a\nb\n")
    with pytest.raises(ValueError, match="line counts differ"):
        spark.total(Job(MetricSpec.of("bleu"), TextFiles(str(short), [news["paths"]["ende_ref"]])))


@pytest.mark.spark
def test_score_corpus_spark_engine_equals_local(news, spark):
    p = news["paths"]
    args = ["-r", p["ende_ref"], "-m", "bleu", "-m", "ter", "-f", "json", "-q", p["ende_sys"][0]]
    local = json.loads(CliRunner().invoke(score_corpus, args).stdout)
    result = CliRunner().invoke(score_corpus, args + ["--engine", "spark", "--spark-master", "local[2]"])
    assert result.exit_code == 0, result.output
    spark_doc = json.loads(result.stdout)
    assert spark_doc["results"] == local["results"]
    # issue 26: Spark reported "segments": null; every field but the version-free header is the local one
    assert spark_doc["segments"] == local["segments"] == len(news["en-de.refs"][0])
    assert {k: v for k, v in spark_doc.items()} == local
