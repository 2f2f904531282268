"""Issue 25 benchmark: ``evalpipe sacrebleu ARGV`` against ``sacrebleu ARGV`` (2.6's console script), same run.

The 23 WMT21 en-de system files of ../shared/data against reference A, several argv: every run of
each command is a fresh process (start-up included), timed three times; the stdout of the two must be
byte-identical in every run.  ``python bench/bench_sacrebleu_cli.py`` prints every timing, the best of
each, and their ratio.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from common import NEWS

ARGVS = (["-m", "bleu"], ["-m", "bleu", "chrf"], ["-m", "bleu", "chrf", "-f", "text", "-w", "2"],
         ["-m", "chrf", "--chrf-word-order", "2"])


def _timed(command, cwd, env):
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, env=env, check=True)
    return time.perf_counter() - start, done.stdout


def main(scale: float = 1.0, repeat: int = 3) -> None:
    if not NEWS.is_dir():
        print(f"  skipped: the real data is not at {NEWS}")
        return
    bindir = Path(sys.executable).parent
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # as pip installed them
    systems = sorted(f"system-outputs/en-de/{p.name}" for p in (NEWS / "system-outputs" / "en-de").glob("*.txt"))
    for extra in ARGVS:
        argv = ["references/en-de.refA.txt", "-i", *systems, *extra]
        times = {"sacrebleu": [], "evalpipe": []}
        same = True
        for _ in range(repeat):
            t_theirs, theirs = _timed([str(bindir / "sacrebleu"), *argv], NEWS, env)
            t_ours, ours = _timed([str(bindir / "evalpipe"), "sacrebleu", *argv], NEWS, env)
            times["sacrebleu"].append(t_theirs)
            times["evalpipe"].append(t_ours)
            same = same and ours == theirs
        shown = {k: ", ".join(f"{t:.2f}" for t in v) + f" [{min(v):.2f}]" for k, v in times.items()}
        print(f"  sacrebleu -i 23 systems {' '.join(extra):<34} sacrebleu {shown['sacrebleu']}  "
              f"evalpipe {shown['evalpipe']}  ->  {min(times['sacrebleu']) / min(times['evalpipe']):.1f}x  "
              f"byte-identical: {same}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
