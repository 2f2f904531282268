"""Issue 2 benchmark: per-segment SCORE throughput and the cost of the pipe, against sacrebleu.

* bleu stats per segment, 25-token segments, unique references: evalpipe ``stats()`` vs
  sacrebleu's own per-segment stats path (``BLEU._extract_corpus_statistics([hyp], [[ref]])``,
  what ``sentence_score`` runs before scoring) -- target >= 3x;
* n-best stream, 100 hypotheses per reference -- target >= 5x, stretch 10x;
* synchronous round trip through a real pipe to ``evalpipe serve bleu``: (round trip - in-process
  stats time) / round trip of a bare Python echo process, in the same run -- target <= 2;
* chrf and ter stats throughput against sacrebleu's per-segment path.
"""
from __future__ import annotations

import subprocess
import sys
import time

import sacrebleu

from common import best_of, child_env, nbest, report, unique_pairs
from evalpipe import load_metric

ECHO = "import sys\nfor line in sys.stdin.buffer:\n    sys.stdout.buffer.write(line)\n    sys.stdout.buffer.flush()\n"


def per_segment(name, sacre_cls, hyps, refs, target=""):
    def ours():
        metric = load_metric(name)
        for h, r in zip(hyps, refs):
            metric.stats(h, [r])

    def anchor():
        metric = sacre_cls()
        for h, r in zip(hyps, refs):
            metric._extract_corpus_statistics([h], [[r]])

    t_ours, t_anchor = best_of(ours), best_of(anchor)
    n = len(hyps)
    print(report(f"{name} SCORE, unique refs ({n} segs, us/seg)", t_ours / n * 1e6, t_anchor / n * 1e6, "us", target))


def nbest_stream(lists):
    n = sum(len(h) for _, h in lists)

    def ours():
        metric = load_metric("bleu")
        for ref, hyps in lists:
            for h in hyps:
                metric.stats(h, [ref])

    def anchor():
        metric = sacrebleu.BLEU()
        for ref, hyps in lists:
            for h in hyps:
                metric._extract_corpus_statistics([h], [[ref]])

    t_ours, t_anchor = best_of(ours), best_of(anchor)
    print(report(f"bleu SCORE, n-best 100/ref ({n} segs, us/seg)", t_ours / n * 1e6, t_anchor / n * 1e6, "us",
                 ">= 5x, stretch 10x"))


def round_trips(cmd, lines):
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=child_env(), bufsize=0)
    proc.stdin.write(b"SCORE ||| warm up ||| warm up\n")
    proc.stdout.readline()
    start = time.perf_counter()
    for line in lines:
        proc.stdin.write(line)
        proc.stdout.readline()
    elapsed = time.perf_counter() - start
    proc.stdin.close()
    proc.wait()
    return elapsed / len(lines)


def pipe_overhead(hyps, refs):
    lines = [f"SCORE ||| {r} ||| {h}\n".encode() for h, r in zip(hyps, refs)]
    def in_process():
        metric = load_metric("bleu")  # fresh each time: the reference cache gives no advantage
        for h, r in zip(hyps, refs):
            metric.stats(h, [r])

    t_stats = best_of(in_process) / len(hyps)
    t_serve = min(round_trips([sys.executable, "-m", "evalpipe", "serve", "bleu"], lines) for _ in range(3))
    t_echo = min(round_trips([sys.executable, "-c", ECHO], lines) for _ in range(3))
    added = (t_serve - t_stats) / t_echo
    print(f"{'pipe round trip (us): serve / in-process stats / echo':<58} {t_serve*1e6:8.1f} / {t_stats*1e6:8.1f} / "
          f"{t_echo*1e6:8.1f}   protocol adds {added:4.2f} echo round trips  (target <= 2)")


def main(scale: float = 1.0):
    n = max(200, int(5000 * scale))
    hyps, refs = unique_pairs(n)
    per_segment("bleu", sacrebleu.BLEU, hyps, refs, ">= 3x")
    nbest_stream(nbest(max(5, int(50 * scale))))
    pipe_overhead(hyps[: max(200, n // 5)], refs[: max(200, n // 5)])
    per_segment("chrf", sacrebleu.CHRF, hyps[: n // 2], refs[: n // 2])
    per_segment("ter", sacrebleu.TER, hyps[: n // 10], refs[: n // 10])


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
