"""Issue 14 benchmark: what the HTML report adds to scoring, on the 23 real WMT21 en-de systems.

``score-corpus`` over the 23 system files of ../shared/data/wmt21.news en-de (1,002 segments; the three
human references among them, reference A too, scored against reference A as the issue counts them),
BLEU + chrF, scored as the report needs it (95 % bootstrap intervals and every pair of systems compared:
``--confidence --all-pairs``), with and without ``--report``; end to end, best of three, interleaved.
Target: the report adds under 20 % to the scoring time.  Skipped without the shared data or matplotlib.
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import NEWS, child_env


def run(cmd) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, capture_output=True, text=True, env=child_env(), check=True)
    return time.perf_counter() - start


def main(scale: float = 1.0) -> None:
    systems = sorted(str(p) for p in (NEWS / "system-outputs" / "en-de").glob("*.txt"))
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("report benchmark skipped: pip install 'evalpipe[report]'")
        return
    if not systems:
        print(f"report benchmark skipped: no system outputs under {NEWS}")
        return
    ref = str(NEWS / "references" / "en-de.refA.txt")
    base = [sys.executable, "-m", "evalpipe", "score-corpus", "-q", "-r", ref, "-m", "bleu", "-m", "chrf",
            "--confidence", "--all-pairs", "-f", "json", *systems]
    with tempfile.TemporaryDirectory() as tmp:
        report = str(Path(tmp) / "report.html")
        plain = with_report = float("inf")
        for _ in range(3):
            plain = min(plain, run(base))
            with_report = min(with_report, run(base + ["--report", report]))
        size = Path(report).stat().st_size
    print(f"{f'{len(systems)} systems x 1002 segs, BLEU+chrF, CIs + all pairs (s)':<58} scoring {plain:6.2f}"
          f"  with --report {with_report:6.2f}  report adds {100 * (with_report - plain) / plain:5.1f} %"
          f"  ({size / 1024:.0f} KiB)  (target < 20 %)")


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
