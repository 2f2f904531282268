"""Issue 36 benchmark, short-form simultaneous evaluation through the command lines, start-up included.

20,000 sentences (at scale 1) from the real wait-k logs of ../shared/data/simul (repeated with unique indices;
the copies in tests/data without ../shared), as SimulEval log files:

* ``omnisteval shortform`` (0.1.10; BLEU, chrF, YAAL, AL, LAAL, AP, DAL, the degeneracy check) against
  ``evalpipe simul score`` on the same log and references (target >= 10x; the scores.tsv must be equal);
* ``simuleval --score-only`` (1.1.4; its BLEU and the scorers NumChunks, RTF, StartOffset, EndOffset, AL) against
  ``evalpipe score-corpus --instances -m bleu num_chunks rtf start_offset end_offset al`` (target >= 10x).

Subprocesses run without PYTHONUNBUFFERED and PYTHONDONTWRITEBYTECODE (bench/common.py).  Every run is printed.
``python bench/bench_shortform.py [SCALE] [RUNS]``; ``EVALPIPE_BIN=/path/to/venv/bin/evalpipe`` measures another
install of evalpipe (a plain ``pip install .``, as a new user has it) against the anchors of this environment.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, child_env

SHARED = ROOT.parent / "shared" / "data" / "simul" / "iwslt17-dev2010.de-en" / "derived"
LOGS = SHARED if SHARED.is_dir() else ROOT / "tests" / "data" / "simul" / "iwslt17-dev2010.de-en" / "derived"
BIN = Path(sys.executable).parent


def _timed(args, **kw):
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, env=child_env(), **kw)
    if done.returncode:
        raise SystemExit(f"{args[0]} failed: {done.stderr[-500:]}")
    return time.perf_counter() - start, done


def main(scale: float = 1.0, runs: int = 3) -> None:
    missing = [name for name in ("omnisteval", "simuleval") if not (BIN / name).exists()]
    if missing:
        print(f"bench_shortform: {', '.join(missing)} not installed (the test extra); skipped")
        return
    n = max(100, int(20000 * scale))
    base = [json.loads(x) for p in sorted(LOGS.glob("wait*.instances.jsonl")) for x in open(p, encoding="utf-8")]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "se").mkdir()
        log, ref = folder / "se" / "instances.log", folder / "ref.txt"
        records = [dict(base[i % len(base)], index=i) for i in range(n)]
        log.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        ref.write_text("".join(r["reference"].strip() + "\n" for r in records), encoding="utf-8")
        (folder / "se" / "config.yaml").write_text("source_type: text\ntarget_type: text\n", encoding="utf-8")
        omni = [str(BIN / "omnisteval"), "shortform", "--hypothesis_file", str(log), "--ref_sentences_file", str(ref),
                "--word_level", "--output_folder", str(folder / "omni")]
        evalpipe = os.environ.get("EVALPIPE_BIN") or str(BIN / "evalpipe")
        ours = [evalpipe, "simul", "score", str(log), "-r", str(ref), "-f", "tsv", "-w", "4"]
        simuleval = [str(BIN / "simuleval"), "--score-only", "--output", str(folder / "se"), "--quality-metrics",
                     "BLEU", "--latency-metrics", "NumChunks", "RTF", "StartOffset", "EndOffset", "AL"]
        corpus = [evalpipe, "score-corpus", "-q", "--instances", str(log), "-m", "bleu", "num_chunks",
                  "rtf", "start_offset", "end_offset", "al", "-f", "json"]
        _timed(ours)  # byte-compiles evalpipe's modules once (pip did the anchors' at install)
        print(f"{n:,} sentences, SimulEval logs (seconds, start-up included; every run); evalpipe: {evalpipe}")
        for run in range(1, runs + 1):
            t_omni, _ = _timed(omni)
            t_ours, done = _timed(ours)
            equal = done.stdout == (folder / "omni" / "scores.tsv").read_text(encoding="utf-8")
            t_se, _ = _timed(simuleval)
            t_corpus, _ = _timed(corpus)
            print(f"run {run}: omnisteval shortform {t_omni:.2f}  evalpipe simul score {t_ours:.2f} "
                  f"({t_omni / t_ours:.1f}x, scores.tsv equal {equal}; target >= 10x)  |  simuleval --score-only "
                  f"{t_se:.2f}  evalpipe score-corpus --instances {t_corpus:.2f} ({t_se / t_corpus:.1f}x; target >= 10x)")


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0, int(sys.argv[2]) if len(sys.argv) > 2 else 3)
