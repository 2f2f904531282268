"""Record MT Metrics Eval's MQM scores of the real TED ratings for tests/test_mqm_scores.py.

Run:  python tests/data/make_mqm_expected.py --mtme PATH_TO_MTME_CHECKOUT --commit COMMIT
(PATH is a checkout of github.com/google-research/mt-metrics-eval; its converter is run from there, never copied
here; it needs absl-py.)  For each of ../shared/data/mqm-ratings/ted/mqm_ted_{ende,zhen}.tsv it runs

    python -m mt_metrics_eval.converters.score_mqm --input RATINGS --output OUT

with MTME's default weights and force_contiguous, and writes its output lines (``system doc doc_id score
rater=score ...``) to tests/data/mqm_expected/score_mqm.PAIR.tsv.gz, with the command and commit in README.md
beside them.
"""
from __future__ import annotations

import argparse
import gzip
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
RATINGS = HERE.parents[1].parent / "shared" / "data" / "mqm-ratings" / "ted"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mtme", required=True, help="path to an MT Metrics Eval checkout")
    parser.add_argument("--commit", required=True, help="the checkout's commit, recorded beside the output")
    args = parser.parse_args()
    out_dir = HERE / "mqm_expected"
    out_dir.mkdir(exist_ok=True)
    notes = ["# score_mqm.py's output on the real TED MQM ratings", "",
             f"MTME commit {args.commit}; written by tests/data/make_mqm_expected.py. Each file is the output of", ""]
    for pair in ("ende", "zhen"):
        ratings = RATINGS / f"mqm_ted_{pair}.tsv"
        with tempfile.TemporaryDirectory() as tmp:
            output = os.path.join(tmp, "out.tsv")
            command = [sys.executable, "-m", "mt_metrics_eval.converters.score_mqm", f"--input={ratings}",
                       f"--output={output}"]
            subprocess.run(command, check=True, cwd=args.mtme, env={**os.environ, "PYTHONPATH": args.mtme})
            data = Path(output).read_bytes()
        with gzip.GzipFile(out_dir / f"score_mqm.{pair}.tsv.gz", "wb", mtime=0) as handle:
            handle.write(data)
        lines = data.count(b"\n")
        notes.append(f"    python -m mt_metrics_eval.converters.score_mqm --input=../shared/data/mqm-ratings/ted/"
                     f"mqm_ted_{pair}.tsv --output=OUT   ->  score_mqm.{pair}.tsv.gz ({lines} lines)")
    notes += ["", "(run from the checkout's root, default flags: MTME's weights, force_contiguous).", ""]
    (out_dir / "README.md").write_text("\n".join(notes), encoding="utf-8")


if __name__ == "__main__":
    main()
