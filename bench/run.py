"""Run every benchmark: ``python bench/run.py [SCALE]`` (SCALE 1 = the sizes the issues name).

Each line prints evalpipe's figure, the anchor's measured in the same run, and their ratio.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_bounds  # noqa: E402
import bench_comet  # noqa: E402
import bench_compare  # noqa: E402
import bench_corpus  # noqa: E402
import bench_engines  # noqa: E402
import bench_longform  # noqa: E402
import bench_mbr  # noqa: E402
import bench_mbr_decoders  # noqa: E402
import bench_meta  # noqa: E402
import bench_nbest  # noqa: E402
import bench_protocol  # noqa: E402
import bench_realdata  # noqa: E402
import bench_report  # noqa: E402
import bench_sacrebleu_cli  # noqa: E402
import bench_shortform  # noqa: E402
import bench_spa  # noqa: E402
import bench_tasks  # noqa: E402
import bench_simul  # noqa: E402
import bench_stream  # noqa: E402
import bench_tune  # noqa: E402
import bench_wer  # noqa: E402
import bench_workers  # noqa: E402


def main() -> None:
    scale = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    print(f"# evalpipe benchmarks, scale {scale}")
    print("## protocol and metric plugins (issue 2)")
    bench_protocol.main(scale)
    print("## score-corpus (issue 3)")
    bench_corpus.main(scale)
    print("## real data against sacrebleu and sacrebleu-mojo (issue 15)")
    bench_realdata.main(scale)
    print("## evalpipe sacrebleu against sacrebleu's command line (issue 25)")
    bench_sacrebleu_cli.main(scale)
    print("## a real n-best stream through the pipe (issue 15)")
    bench_nbest.main(scale)
    print("## huge files, streamed (issue 15)")
    bench_stream.main(scale)
    print("## simultaneous translation (issue 4)")
    bench_simul.main(scale)
    print("## long-form streams against simulstream and OmniSTEval (issue 13)")
    bench_longform.main(scale)
    print("## engines (issue 5)")
    bench_engines.main(scale)
    print("## tuner (issue 12)")
    bench_tune.main(scale)
    print("## reports (issue 14)")
    bench_report.main(scale)
    print("## resource bounds (issue 16; the fuzz harness is bench/fuzz.py)")
    bench_bounds.main(scale)
    print("## meta-evaluation (issue 6; needs MTME_PATH)")
    bench_meta.main(scale)
    print("## SPA's significance matrix, 10 metrics (issue 34; needs MTME_PATH)")
    bench_spa.main(max(100, int(100 * scale)))
    print("## the WMT24 task set through the command line (issue 34; needs MTME_PATH)")
    bench_tasks.main(max(100, int(100 * scale)))
    print("## every core without a flag (issue 33)")
    bench_workers.main(scale)
    print("## WER against jiwer and SimulEval's scorer (issue 36)")
    bench_wer.main(3)
    print("## short-form simultaneous evaluation against OmniSTEval and SimulEval (issue 36)")
    bench_shortform.main(scale)
    print("## COMET models against unbabel-comet and mbrs (issue 35)")
    bench_comet.main(scale)
    print("## minimum Bayes risk decoding (issue 28)")
    bench_mbr.main(max(1, round(3 * scale)))
    print("## MBR decoders against mbrs 0.1.8's and fastchrf (issue 44)")
    bench_mbr_decoders.main(max(1, round(2 * scale)))
    print("## compare: N systems against compare-mt 0.2.10")
    bench_compare.main(scale)


if __name__ == "__main__":
    main()
