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


@pytest.mark.parametrize("ending,last", [(b"\n", b"\n"), (b"\r\n", b"\r\n"), (b"\n", b"")])
def test_text_file_chunks_read_their_byte_ranges_as_the_whole_file_reads(tmp_path, ending, last):
    """A pool's chunks of text files carry byte ranges (TextFiles.split scans each file once): every chunk
    holds exactly the lines the whole read gives there, for CRLF files, a last line without its end, empty
    lines and multi-byte characters; all metrics in one pass through a pool equal the local engine."""
    from evalpipe.sufficient_stats.combine import BundleSpec

    hyps = [f"Grüße {i} ✓" if i % 5 != 1 else "" for i in range(101)]
    refs = [f"Grüße {i} aus Köln" for i in range(101)]
    (tmp_path / "h").write_bytes(ending.join(h.encode() for h in hyps) + last)
    (tmp_path / "r").write_bytes(b"\n".join(r.encode() for r in refs))
    files = TextFiles(str(tmp_path / "h"), [str(tmp_path / "r")])
    whole = files.read()
    for parts in (1, 2, 7, 101):
        chunks = files.split(parts)
        assert [h for c in chunks for h in c.read().hypotheses] == list(whole.hypotheses)
        assert [r for c in chunks for r in c.read().references[0]] == whole.references[0]
        assert sum(len(c) for c in chunks) == len(whole) == 101
    spec = BundleSpec((MetricSpec.of("bleu"), MetricSpec.of("chrf"), MetricSpec.of("ter")))
    with PoolEngine(2, chunk_size=9) as pool:
        assert pool.run([Job(spec, files), Job(spec, whole)], False) == [LocalEngine().total(Job(spec, whole))] * 2
        assert pool.rows(Job(spec, files)) == LocalEngine().rows(Job(spec, whole))


def test_text_file_chunks_name_the_bad_line_and_the_files_that_differ(tmp_path):
    (tmp_path / "r").write_text("a\n" * 40)
    (tmp_path / "h").write_bytes(b"a\n" * 30 + b"b\xff\n" + b"a\n" * 9)
    (tmp_path / "short").write_text("a\n" * 39)
    with PoolEngine(2, chunk_size=8) as pool:
        with pytest.raises(Exception, match=r"h, line 31"):
            pool.total(job_files := Job(MetricSpec.of("bleu"), TextFiles(str(tmp_path / "h"), [str(tmp_path / "r")])))
        with pytest.raises(Exception, match=r"short has 39 lines.*r has 40 lines"):
            pool.total(Job(MetricSpec.of("bleu"), TextFiles(str(tmp_path / "short"), [str(tmp_path / "r")])))
    assert job_files.input.nrefs == 1
