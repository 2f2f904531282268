"""Issue 36 benchmark, WER: the 23 WMT21 en-de systems against refA (23,046 real pairs from ../shared/data).

* in process: evalpipe's ``wer`` corpus score against jiwer 4.0.0's ``jiwer.wer`` on the same lists (target >= 10x),
  and against SimulEval's way (editdistance per pair on ``str.split``) with ``normalize=raw``;
* through the command line: ``score-corpus -m wer`` on the 23 files, start-up included, against jiwer in process
  (target: faster).

Both sides are imported (and evalpipe's metrics built) before the timing.  Every run is printed; the scores must
be equal.  ``python bench/bench_wer.py [RUNS]``.
"""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "wmt21.news"


def main(runs: int = 3) -> None:
    if not SHARED.exists():
        print("bench_wer: ../shared/data is not there; skipped")
        return
    try:
        import editdistance
        import jiwer
    except ImportError as exc:
        print(f"bench_wer: {exc.name} is not installed (pip install jiwer==4.0.0 editdistance); skipped")
        return
    from evalpipe import load_metric

    files = sorted((SHARED / "system-outputs" / "en-de").glob("*.txt"))
    ref = (SHARED / "references" / "en-de.refA.txt").read_text(encoding="utf-8").splitlines()
    hyps = [line for f in files for line in f.read_text(encoding="utf-8").splitlines()]
    refs = ref * len(files)
    cli = [str(Path(sys.executable).parent / "score-corpus"), "-q", "-m", "wer", "-r",
           str(SHARED / "references" / "en-de.refA.txt"), *map(str, files)]
    wer, raw_wer = load_metric("wer"), load_metric("wer", normalize="raw")  # imports paid here, as jiwer's above
    print(f"{len(hyps):,} pairs, {len(files)} systems (seconds; every run)")
    for run in range(1, runs + 1):
        t = time.perf_counter()
        theirs = 100 * jiwer.wer(refs, hyps)
        t_jiwer = time.perf_counter() - t
        t = time.perf_counter()
        ours = wer.corpus_score(hyps, [refs])
        t_ours = time.perf_counter() - t
        t = time.perf_counter()
        simul = 100 * sum(editdistance.eval(h.split(), r.split()) for h, r in zip(hyps, refs)) / sum(
            len(r.split()) for r in refs)
        t_simul = time.perf_counter() - t
        t = time.perf_counter()
        raw = raw_wer.corpus_score(hyps, [refs])
        t_raw = time.perf_counter() - t
        t = time.perf_counter()
        subprocess.run(cli, check=True, capture_output=True)
        t_cli = time.perf_counter() - t
        print(f"run {run}: jiwer {t_jiwer:.3f}  evalpipe {t_ours:.3f} ({t_jiwer / t_ours:.1f}x, equal "
              f"{abs(ours - theirs) < 1e-9})  |  SimulEval's editdistance {t_simul:.3f}  evalpipe raw {t_raw:.3f} "
              f"({t_simul / t_raw:.1f}x, equal {abs(raw - simul) < 1e-9})  |  score-corpus CLI {t_cli:.3f} "
              f"({t_jiwer / t_cli:.1f}x jiwer in process)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
