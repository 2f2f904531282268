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
    workers_scaling(max(1, round(5 * scale)))


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)


def workers_scaling(copies: int = 5, repeats: int = 3) -> None:
    """Issue 27: the 23 real en-de system files concatenated ``copies`` times (115,230 pairs at 5), BLEU and
    chrF through ``score-corpus``: no engine flag, ``--workers 1`` and ``--workers 2``, each ``repeats`` times
    (every run printed).  Target: ``--workers 2`` >= 1.7x ``--workers 1``; the default no slower than any
    engine with one worker.  The serial fraction ``s`` is what Amdahl's law gives from the two medians
    (``s = 2 / speed-up - 1``: pool overheads count as serial, so it is an upper bound) and from the run
    of the same command on one system file's 1,002 pairs (start-up, reading and output: a lower bound);
    the speed-up on 16 workers predicted from each is ``1 / (s + (1 - s) / 16)``."""
    import json
    import statistics
    import subprocess
    import tempfile

    from common import NEWS

    if not NEWS.is_dir():
        print("workers scaling: needs ../shared/data (real WMT21 en-de system outputs); skipped")
        return
    systems = sorted((NEWS / "system-outputs" / "en-de").glob("*.txt"))
    ref = (NEWS / "references" / "en-de.refA.txt").read_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        hyp_path, ref_path = f"{tmp}/hyp.txt", f"{tmp}/ref.txt"
        with open(hyp_path, "wb") as hyp_out, open(ref_path, "wb") as ref_out:
            for _ in range(copies):
                for path in systems:
                    hyp_out.write(path.read_bytes())
                    ref_out.write(ref)
        n = sum(1 for _ in open(hyp_path, "rb"))
        base = [sys.executable, "-m", "evalpipe", "score-corpus", "-q", "-f", "json", "-m", "bleu", "chrf"]
        runs = {"default": [], "--workers 1": ["--workers", "1"], "--workers 2": ["--workers", "2"],
                "--engine pool --workers 2": ["--engine", "pool", "--workers", "2"]}
        times, outputs = {k: [] for k in runs}, {}
        for _ in range(repeats):
            for name, extra in runs.items():
                start = time.perf_counter()
                out = subprocess.run(base + extra + ["-r", ref_path, hyp_path], capture_output=True, check=True).stdout
                times[name].append(time.perf_counter() - start)
                outputs[name] = json.loads(out)["results"]
        small = []
        for _ in range(repeats):
            start = time.perf_counter()
            subprocess.run(base + ["-r", str(NEWS / "references" / "en-de.refA.txt"), str(systems[0])],
                           capture_output=True, check=True)
            small.append(time.perf_counter() - start)
    for name, ts in times.items():
        print(f"{n} pairs, BLEU+chrF, {name:<26} " + " ".join(f"{t:.2f}" for t in ts) + " s")
    med = {k: statistics.median(v) for k, v in times.items()}
    speedup = med["--workers 1"] / med["--workers 2"]
    each = [a / b for a, b in zip(times["--workers 1"], times["--workers 2"])]
    print(f"--workers 2 vs --workers 1: " + " ".join(f"{x:.2f}x" for x in each) + f" (median {speedup:.2f}x; "
          f"target >= 1.7x); default vs --workers 1: {med['--workers 1'] / med['default']:.2f}x "
          f"(target >= 1.0x); identical results: {len({json.dumps(v) for v in outputs.values()}) == 1}")
    upper = max(0.0, 2 / speedup - 1)
    lower = statistics.median(small) / med["--workers 1"]
    for label, s in (("Amdahl from the two medians", upper), ("start-up + one 1,002-pair file", lower)):
        print(f"serial fraction ({label}): {s:.3f}; predicted speed-up on 16 workers {1 / (s + (1 - s) / 16):.1f}x")
