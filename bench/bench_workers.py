"""Issue 33 benchmark: every core without a flag, on real WMT21 en-de data from ../shared/data.

* 115,230 pairs (the 23 en-de systems five times, one file pair), BLEU + chrF through ``score-corpus``: no flag,
  ``--workers 1``, ``--workers 2`` (and every core, where there are more), each ``RUNS`` times; the outputs must
  be identical.  Target: no flag within 10 % of the best ``--workers N``.
* The demos: ``score-corpus`` on 200 segments of one system and on the shipped 10 x 300 demo, no flag against
  ``--workers 1``.  Target: never slower (a run that stays in one process pays nothing for the default).
* The crossover: 1,002 to 20,040 segments, one process against two workers (what ``AUTO_MIN_WORK`` is set from).
* ``evalpipe sacrebleu -m bleu chrf`` on the 115,230 pairs, no flag against one core (``taskset -c 0``: the
  drop-in takes sacrebleu's arguments only, so the process's CPU affinity is its worker count).
* ``mbr`` over the 23 systems (1,002 segments x 23 candidates, chrF): no flag against ``--workers 1``.
* The serial fraction, from a one-line run (start-up), and 115,230 pairs on one and two workers:
  T(n, N) = c0 + N (c_s + c_p / n); the prediction for 16 workers on 115,230 and 1,152,300 pairs.

Run: ``python bench/bench_workers.py [SCALE]`` (SCALE < 1 uses fewer copies of the systems).
"""
from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "wmt21.news"
RUNS = 3


def evalpipe() -> str:
    return str(Path(sys.executable).parent / "evalpipe")


def timed(cmd, **kw):
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, check=True, **kw)
    return time.perf_counter() - start, done.stdout


def files(tmp: Path, copies: int):
    systems = sorted((SHARED / "system-outputs" / "en-de").glob("*.txt"))
    ref = (SHARED / "references" / "en-de.refA.txt").read_text(encoding="utf-8")
    hyp, refs = tmp / f"hyp{copies}", tmp / f"ref{copies}"
    with open(hyp, "w", encoding="utf-8") as h, open(refs, "w", encoding="utf-8") as r:
        for _ in range(copies):
            for path in systems:
                h.write(path.read_text(encoding="utf-8"))
                r.write(ref)
    return hyp, refs, sum(1 for _ in open(hyp, encoding="utf-8"))


def score(ref, hyp, *flags):
    return timed([evalpipe(), "score-corpus", "-q", "-m", "bleu", "chrf", "-r", str(ref), str(hyp), *flags])


def series(label, runs):
    times = [t for t, _ in runs]
    print(f"{label:<52} " + " ".join(f"{t:6.2f}" for t in times) + f"   median {statistics.median(times):6.2f} s")
    return statistics.median(times), {out for _, out in runs}


def main(scale: float = 1.0) -> None:
    if not SHARED.exists():
        print("bench_workers: ../shared/data is not there; skipped")
        return
    from evalpipe.engines import AUTO_MIN_WORK, available_cores

    cores = available_cores()
    print(f"cores this process may use: {cores}; AUTO_MIN_WORK {AUTO_MIN_WORK}")
    tmp = Path(tempfile.mkdtemp(prefix="bench-workers-"))
    try:
        copies = max(1, round(5 * scale))
        hyp, ref, n = files(tmp, copies)
        print(f"### {n:,} pairs, BLEU + chrF, score-corpus (every run, seconds)")
        counts = sorted({1, 2, cores})
        medians, outputs = {}, set()
        medians["no flag"], out = series("no flag", [score(ref, hyp) for _ in range(RUNS)])
        outputs |= out
        for w in counts:
            medians[w], out = series(f"--workers {w}", [score(ref, hyp, "--workers", str(w)) for _ in range(RUNS)])
            outputs |= out
        best = min(v for k, v in medians.items() if k != "no flag")
        print(f"no flag / best --workers N: {medians['no flag'] / best:.3f} (target <= 1.10); "
              f"outputs identical: {len(outputs) == 1}")

        print("### the demos: no flag against --workers 1 (every run, seconds)")
        demo = Path(__import__("evalpipe").__file__).parent / "demo" / "wmt21-ende"
        small_h, small_r = tmp / "h200", tmp / "r200"
        small_h.write_text("".join((demo / "systems" / "Online-W.de").read_text(encoding="utf-8").splitlines(True)[:200]))
        small_r.write_text("".join((demo / "ref.de").read_text(encoding="utf-8").splitlines(True)[:200]))
        for label, args in (("200 segments", [str(small_r), str(small_h)]),
                            ("shipped demo, 10 x 300", [str(demo / "ref.de"), *map(str, sorted((demo / "systems").glob("*.de")))])):
            runs = {"": [], "--workers 1": []}
            for k in range(2 * RUNS):  # interleaved, the order alternating: drift and order effects hit both
                for flag in (list(runs) if k % 2 else list(runs)[::-1]):
                    runs[flag].append(timed([evalpipe(), "score-corpus", "-q", "-m", "bleu", "chrf", "-r", args[0],
                                             *args[1:], *flag.split()]))
            a, _ = series(f"{label}: no flag", runs[""])
            b, _ = series(f"{label}: --workers 1", runs["--workers 1"])
            print(f"{label}: no flag / --workers 1 = {a / b:.3f}")

        print("### crossover: one process against two workers (median of 3, seconds)")
        for k in (1, 2, 4, 5, 8, 20):
            h, r = tmp / f"ch{k}", tmp / f"cr{k}"
            lines_h = (SHARED / "system-outputs" / "en-de" / "Online-W.txt").read_text(encoding="utf-8") * k
            h.write_text(lines_h, encoding="utf-8")
            r.write_text((SHARED / "references" / "en-de.refA.txt").read_text(encoding="utf-8") * k, encoding="utf-8")
            one = statistics.median(score(r, h, "--workers", "1")[0] for _ in range(3))
            two = statistics.median(score(r, h, "--workers", "2")[0] for _ in range(3))
            auto = statistics.median(score(r, h)[0] for _ in range(3))
            print(f"{1002 * k:>7} segments: --workers 1 {one:5.2f}  --workers 2 {two:5.2f}  no flag {auto:5.2f}")

        print(f"### evalpipe sacrebleu -m bleu chrf, {n:,} pairs (every run, seconds)")
        sb = [evalpipe(), "sacrebleu", str(ref), "-i", str(hyp), "-m", "bleu", "chrf"]
        a, out_a = series("no flag (every core)", [timed(sb) for _ in range(RUNS)])
        if shutil.which("taskset"):
            b, out_b = series("one core (taskset -c 0)", [timed(["taskset", "-c", "0", *sb]) for _ in range(RUNS)])
            print(f"one core / every core: {b / a:.2f}x; identical output: {out_a == out_b}")

        print("### mbr, 1,002 segments x 23 systems, chrF (every run, seconds)")
        systems = [str(p) for p in sorted((SHARED / "system-outputs" / "en-de").glob("*.txt"))]
        a, out_a = series("no flag", [timed([evalpipe(), "mbr", *systems]) for _ in range(RUNS)])
        b, out_b = series("--workers 1", [timed([evalpipe(), "mbr", "--workers", "1", *systems]) for _ in range(RUNS)])
        print(f"--workers 1 / no flag: {b / a:.2f}x; identical choices: {out_a == out_b}")

        print("### serial fraction and what more cores should give")
        one_line_h, one_line_r = tmp / "h1", tmp / "r1"
        one_line_h.write_text("a\n")
        one_line_r.write_text("a\n")
        c0 = statistics.median(score(one_line_r, one_line_h, "--workers", "1")[0] for _ in range(RUNS))
        t1, t2 = medians[1], medians[2]
        cp = 2 * (t1 - t2) / n
        cs = (t1 - c0) / n - cp
        print(f"start-up c0 {c0:.2f} s; per pair: serial {cs * 1e6:.2f} us, parallel {cp * 1e6:.2f} us; "
              f"serial share of the one-worker time {(c0 + cs * n) / t1:.0%}")
        for pairs in (n, 10 * n):
            one = c0 + pairs * (cs + cp)
            sixteen = c0 + pairs * (cs + cp / 16)
            print(f"{pairs:>10,} pairs: 1 worker {one:6.2f} s, 16 workers {sixteen:6.2f} s predicted "
                  f"({one / sixteen:.1f}x)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
