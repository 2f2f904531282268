"""Issue 5 benchmark: BLEU over N segment pairs on every engine, against sacrebleu's corpus_score.

Prints throughput of ``local``, ``pool`` (2 workers) and ``spark`` (``local[2]``), Spark's fixed
start-up cost, and how time grows from N/10 to N segments (N = 1,000,000 at scale 1).
Targets: pool >= 1.8x local; Spark within 1.5x of pool at N.
"""
from __future__ import annotations

import sys
import time

import sacrebleu

from common import unique_pairs
from evalpipe.engines import Job, make_engine
from evalpipe.inputs import TextPairs
from evalpipe.registry import MetricSpec


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def run_sizes(n_big: int):
    hyps_all, refs_all = unique_pairs(n_big)
    sizes = [n_big // 10, n_big]
    spec = MetricSpec.of("bleu")
    metric = spec.build()
    start = time.perf_counter()
    try:
        spark = make_engine("spark", spark_master="local[2]")
        spark_start = time.perf_counter() - start
    except Exception as exc:  # pyspark or Java missing: report and go on
        print(f"spark engine unavailable: {exc}")
        spark, spark_start = None, None
    pool, local = make_engine("pool", 2), make_engine("local")
    results = {}
    for n in sizes:
        hyps, refs = hyps_all[:n], [refs_all[:n]]
        job = Job(spec, TextPairs(hyps, refs))
        t_sacre, sacre_score = timed(lambda: sacrebleu.BLEU().corpus_score(hyps, refs).score)
        t_local, local_total = timed(lambda: local.total(job))
        t_pool, pool_total = timed(lambda: pool.total(job))
        row = {"sacrebleu": t_sacre, "local": t_local, "pool": t_pool}
        same = metric.score(local_total) == sacre_score and pool_total == local_total
        if spark is not None:
            t_spark, spark_total = timed(lambda: spark.total(job))
            row["spark"] = t_spark
            same = same and spark_total == local_total
        results[n] = row
        print(f"{n:>9} segments: " + "  ".join(f"{k} {v:7.2f}s ({n / v / 1000:6.1f}k seg/s)" for k, v in row.items())
              + f"  identical scores: {same}")
    pool.close()
    big = results[sizes[1]]
    print(f"pool (2 workers) vs local at {sizes[1]}: {big['local'] / big['pool']:.2f}x  (target >= 1.8x)")
    print(f"local vs sacrebleu corpus_score at {sizes[1]}: {big['sacrebleu'] / big['local']:.2f}x;"
          f"  pool vs sacrebleu: {big['sacrebleu'] / big['pool']:.2f}x")
    if spark is not None:
        print(f"spark start-up (fixed cost): {spark_start:.1f}s;  spark / pool at {sizes[1]}: "
              f"{big['spark'] / big['pool']:.2f}x  (target <= 1.5x)")
        spark.close()
    for k in big:
        small = results[sizes[0]][k]
        print(f"time growth {sizes[0]} -> {sizes[1]} ({k}): {big[k] / small:.1f}x for 10x the data")


def main(scale: float = 1.0):
    run_sizes(max(20000, int(1_000_000 * scale)))


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
