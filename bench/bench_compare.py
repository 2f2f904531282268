"""``evalpipe compare`` against compare-mt 0.2.10's command line, same run: the 23 WMT21 en-de systems of
../shared/data against reference A, compare-mt's default analyses (scores, word accuracy by frequency, the three
sentence buckets, n-grams and examples of the first two systems).

Each command is a fresh process (start-up included), timed ``repeat`` times; the target is evalpipe >= 10x
faster.  Beside the times: whether the two texts agree line for line outside the n-gram lists (whose equal-share
ties compare-mt orders by string hashing) and the undefined cells (compare-mt's 0, evalpipe's ``-``).
``python bench/bench_compare.py`` prints every timing, the best of each, and their ratio.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from common import NEWS


def _timed(command, env):
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    return time.perf_counter() - start, done.stdout


def _comparable(text: str) -> list:
    """The lines outside the n-gram section, each undefined cell read as compare-mt's 0."""
    out, inside = [], False
    for line in text.splitlines():
        if line.startswith("********************** "):
            inside = line.startswith("********************** N-gram")
        if not inside and line != "Reading frequency from the reference":
            out.append("\t".join("0.0000" if cell == "-" else cell for cell in line.split("\t")))
    return out


def main(scale: float = 1.0, repeat: int = 3) -> None:
    if not NEWS.is_dir():
        print(f"  skipped: the real data is not at {NEWS}")
        return
    bindir = Path(sys.executable).parent
    if not (bindir / "compare-mt").exists():
        print("  skipped: compare-mt (test extra) is not installed beside this Python")
        return
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED")}
    systems = sorted(str(p) for p in (NEWS / "system-outputs" / "en-de").glob("*.txt"))
    ref = str(NEWS / "references" / "en-de.refA.txt")
    labels = ",".join(f"sys{i + 1}" for i in range(len(systems)))
    times = {"compare-mt": [], "evalpipe": []}
    same = True
    for _ in range(repeat):
        t_theirs, theirs = _timed([str(bindir / "compare-mt"), ref, *systems], env)
        t_ours, ours = _timed([str(bindir / "evalpipe"), "compare", "-r", ref, *systems, "--labels", labels], env)
        times["compare-mt"].append(t_theirs)
        times["evalpipe"].append(t_ours)
        same = same and _comparable(ours) == _comparable(theirs)
    shown = {k: ", ".join(f"{t:.2f}" for t in v) + f" [{min(v):.2f}]" for k, v in times.items()}
    print(f"  compare {len(systems)} systems, default analyses: compare-mt {shown['compare-mt']} s  evalpipe "
          f"{shown['evalpipe']} s  ->  {min(times['compare-mt']) / min(times['evalpipe']):.1f}x (target 10x)  "
          f"same numbers: {same}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
