"""Issue 15 benchmark: per-line SCORE on a real n-best stream through the pipe, against sacrebleu's
sentence path, measured in the same run.

The stream: for each of the first 300 WMT21 en-de segments (../shared/data/wmt21.news), 100 hypotheses
drawn with replacement (seeded) from the 23 real system outputs of that segment -- real text, with the
repeats a real MERT n-best list has (several systems, and several derivations, give the same string).
30,000 ``SCORE ||| reference ||| hypothesis`` lines (METEOR's order), grouped by reference as a tuner sends them.

* evalpipe: ``evalpipe serve bleu`` as a subprocess, the request file on its stdin and its stdout to a
  file; wall time of the whole process, start-up included (one flushed reply line per request);
* sacrebleu in process, per line: ``BLEU(effective_order=True).sentence_score(h, [r])`` (its sentence
  path, with the setting it recommends for it; the statistics do not depend on it) and
  ``BLEU()._extract_corpus_statistics([h], [[r]])`` (only the statistics, what SCORE returns).

Every reply is checked equal to sacrebleu's statistics.  Three runs, all printed.
``python bench/bench_nbest.py [SCALE]`` (SCALE scales the number of references).
"""
from __future__ import annotations

import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import NEWS, child_env

BIN = Path(sys.executable).parent
RUNS = 3


def stream(refs_count: int):
    ref = (NEWS / "references" / "en-de.refA.txt").read_text(encoding="utf-8").splitlines()
    systems = [p.read_text(encoding="utf-8").splitlines() for p in sorted((NEWS / "system-outputs" / "en-de").glob("*.txt"))]
    rng = random.Random(2021)
    return [(systems[rng.randrange(len(systems))][i], ref[i]) for i in range(refs_count) for _ in range(100)]


def main(scale: float = 1.0) -> None:
    if not NEWS.is_dir():
        print(f"n-best benchmark skipped: no {NEWS}")
        return
    import sacrebleu

    pairs = stream(max(10, int(300 * scale)))
    distinct = len(set(pairs))
    with tempfile.TemporaryDirectory() as tmp:
        requests = Path(tmp) / "requests.txt"
        requests.write_text("".join(f"SCORE ||| {r} ||| {h}\n" for h, r in pairs), encoding="utf-8")
        env = child_env()  # without PYTHONUNBUFFERED: every reply must be flushed by the server itself
        print(f"n-best stream: {len(pairs)} SCORE lines, {distinct} distinct (hypothesis, reference) pairs, "
              f"100 per reference")
        times = {"evalpipe serve bleu (pipe)": [], "sacrebleu sentence_score": [], "sacrebleu stats only": []}
        for _ in range(RUNS):
            out = Path(tmp) / "replies.txt"
            with open(requests, "rb") as stdin, open(out, "wb") as stdout:
                start = time.perf_counter()
                subprocess.run([str(BIN / "evalpipe"), "serve", "bleu"], stdin=stdin, stdout=stdout, env=env, check=True)
                times["evalpipe serve bleu (pipe)"].append(time.perf_counter() - start)
            bleu = sacrebleu.BLEU(effective_order=True)  # its recommended sentence-level setting
            start = time.perf_counter()
            for h, r in pairs:
                bleu.sentence_score(h, [r])
            times["sacrebleu sentence_score"].append(time.perf_counter() - start)
            bleu = sacrebleu.BLEU()
            start = time.perf_counter()
            want = [bleu._extract_corpus_statistics([h], [[r]])[0] for h, r in pairs]
            times["sacrebleu stats only"].append(time.perf_counter() - start)
        got = [[int(x) for x in line.split()] for line in out.read_text(encoding="utf-8").splitlines()]
        same = got == [[int(x) for x in w] for w in want]
        for name, values in times.items():
            per = min(values) / len(pairs) * 1e6
            print(f"  {name:<28} {', '.join(f'{v:.2f}' for v in values)} s  [best {per:.1f} us/line]")
        ours = min(times["evalpipe serve bleu (pipe)"])
        print(f"  -> {min(times['sacrebleu sentence_score']) / ours:.1f}x sacrebleu's sentence_score, "
              f"{min(times['sacrebleu stats only']) / ours:.1f}x its statistics alone; replies equal sacrebleu's "
              f"statistics: {same} (target >= 10x)")


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
