"""Issue 3 benchmark: score-corpus end to end against the sacrebleu CLI on the same files.

* 2 systems x 3,000 segments, BLEU + chrF: ``score-corpus`` vs ``sacrebleu`` (target >= 3x), and
  what ``--paired-bs`` adds to evalpipe's own time (target < 10 %);
* N segment pairs (1,000,000 at scale 1), BLEU, ``--workers 2`` vs the sacrebleu CLI (target >= 5x),
  with identical scores.
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import child_env, unique_pairs


def run(cmd):
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=child_env(), check=True).stdout
    return time.perf_counter() - start, out


def write(path: Path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def two_systems(tmp: Path):
    hyps, refs = unique_pairs(6000)
    write(tmp / "ref.txt", refs[:3000])
    write(tmp / "a.txt", hyps[:3000])
    write(tmp / "b.txt", hyps[3000:6000])
    ref, a, b = (str(tmp / f) for f in ("ref.txt", "a.txt", "b.txt"))
    ours = [sys.executable, "-m", "evalpipe", "score-corpus", "-q", "-r", ref, "-m", "bleu", "-m", "chrf", "-f", "json", a, b]
    sacre = [sys.executable, "-m", "sacrebleu", ref, "-i", a, b, "-m", "bleu", "chrf", "-f", "text"]
    t_ours = t_bs = t_sacre = float("inf")
    for _ in range(3):  # interleaved, best of three each: this machine's timings are noisy
        t_ours = min(t_ours, run(ours)[0])
        t_bs = min(t_bs, run(ours + ["--paired-bs"])[0])
        t_sacre = min(t_sacre, run(sacre)[0])
    print(f"{'2 systems x 3000 segs, BLEU+chrF, end to end (s)':<58} evalpipe {t_ours:7.2f}  sacrebleu CLI {t_sacre:7.2f}"
          f"  ratio {t_sacre / t_ours:5.2f}x  (target >= 3x)")
    print(f"{'  --paired-bs (1000 resamples) adds':<58} {100 * (t_bs - t_ours) / t_ours:6.1f} % of evalpipe's time"
          f"  ({t_bs:.2f} s)  (target < 10 %)")


def big(tmp: Path, n: int):
    hyps, refs = unique_pairs(n)
    write(tmp / "big.ref", refs)
    write(tmp / "big.hyp", hyps)
    ref, hyp = str(tmp / "big.ref"), str(tmp / "big.hyp")
    t_ours, out = run([sys.executable, "-m", "evalpipe", "score-corpus", "-q", "-r", ref, "--workers", "2", "-f", "json", hyp])
    t_sacre, sout = run([sys.executable, "-m", "sacrebleu", ref, "-i", hyp, "-m", "bleu", "-w", "16"])
    ours = json.loads(out)["results"][0]["score"]
    theirs = json.loads(sout)["score"]
    print(f"{f'{n} segment pairs, BLEU, --workers 2 (s)':<58} evalpipe {t_ours:7.2f}  sacrebleu CLI {t_sacre:7.2f}"
          f"  ratio {t_sacre / t_ours:5.2f}x  (target >= 5x)  identical: {round(ours, 16) == theirs}")


def main(scale: float = 1.0):
    with tempfile.TemporaryDirectory() as tmp:
        two_systems(Path(tmp))
        big(Path(tmp), max(10000, int(1_000_000 * scale)))


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
