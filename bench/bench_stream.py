"""Issue 15 memory target: ``score-corpus`` on a huge system file with nothing resampled streams it.

N segment pairs (10,000,000 at scale 1) of real WMT21 en-de text (the benchmark's 100,000 unique pairs,
each line made unique by its number), one BLEU run of ``score-corpus`` in one process: peak resident
memory of the child (``ru_maxrss``; target < 1 GiB) and throughput.  That streamed scores equal the
read-whole path's and sacrebleu's is tested in ``tests/test_score_corpus.py``.
"""
from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import child_env, unique_pairs


def command():
    script = Path(sys.executable).parent / "score-corpus"
    return [str(script)] if script.exists() else [sys.executable, "-m", "evalpipe", "score-corpus"]


def main(scale: float = 1.0) -> None:
    n = max(100_000, int(10_000_000 * scale))
    hyps, refs = unique_pairs(100_000)
    with tempfile.TemporaryDirectory() as tmp:
        hyp, ref = Path(tmp, "big.hyp"), Path(tmp, "big.ref")
        with open(hyp, "w", encoding="utf-8") as h, open(ref, "w", encoding="utf-8") as r:
            for start in range(0, n, len(hyps)):
                count = min(len(hyps), n - start)
                h.write("".join(f"{hyps[i]} {start + i}\n" for i in range(count)))
                r.write("".join(f"{refs[i]} {start + i}\n" for i in range(count)))
        size = hyp.stat().st_size + ref.stat().st_size
        start = time.perf_counter()
        out = subprocess.run(command() + ["-q", "-f", "json", "-r", str(ref), str(hyp)], capture_output=True,
                             text=True, env=child_env(), check=True).stdout
        elapsed = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux; the only child
    score = json.loads(out)["results"][0]["score"]
    print(f"{f'score-corpus, {n} lines ({size / 2**30:.2f} GiB of text), BLEU, streamed':<58} {elapsed:7.1f} s "
          f"({n / elapsed:6.0f} lines/s)  peak RSS {peak / 1024:5.0f} MiB (target < 1024)  BLEU {score:.4f}")


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
