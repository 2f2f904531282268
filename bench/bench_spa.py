"""Issue 34 benchmark: SPA's significance matrix for 10 metrics on WMT21 en-de, evalpipe against MTME's own code.

Needs an MT Metrics Eval checkout: ``MTME_PATH=/path/to/mt-metrics-eval python bench/bench_spa.py [K] [RUNS]``
(imported from there; nothing of it is in this repository).  Segment-level MQM of ../shared/data's wmt21.news en-de
(the tests/data subset without it), every system with MQM scores, and 10 sentence-level metrics computed here by
evalpipe against reference A (chrF, chrF++, chrF beta 1, chrF char order 4, BLEU with effective order, BLEU intl
tokenization, BLEU floor smoothing, TER, WER, token F1; TER and WER negated: SPA ranks higher-is-better scores).
MTME: ``data.CompareMetricsWithPairwiseConfidenceError`` with K trials, early stopping in blocks of 100 (its tasks'
setting) after ``numpy.random.seed(1)``; evalpipe: ``evalpipe.meta.spa.significance_matrix`` in mtme mode (the same
p-values: checked) and in the default fast mode.  Every run is printed; the ratio is MTME's time over evalpipe's.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SHARED = ROOT.parent / "shared" / "data"
METRICS = [("chrf", {}, 1), ("chrf", {"word_order": 2}, 1), ("chrf", {"beta": 1}, 1), ("chrf", {"char_order": 4}, 1),
           ("bleu", {"effective_order": True}, 1), ("bleu", {"effective_order": True, "tokenize": "intl"}, 1),
           ("bleu", {"smooth_method": "floor"}, 1), ("ter", {}, -1), ("wer", {}, -1), ("token_f1", {}, 1)]


def data():
    from evalpipe import load_metric
    from evalpipe.meta.evalset import EvalSet

    root = SHARED if (SHARED / "wmt21.news").is_dir() else ROOT / "tests" / "data"
    evs = EvalSet(str(root), "wmt21.news", "en-de")
    gold_seg = evs.Scores("seg", "mqm")
    systems = sorted(s for s in gold_seg if s in evs.sys_outputs and s not in evs.refs)
    refs = evs.refs["refA"]
    n = min(len(refs), min(len(gold_seg[s]) for s in systems))
    gold = [v for s in systems for v in gold_seg[s][:n]]
    metrics = {}
    for name, options, sign in METRICS:
        metric = load_metric(name, **options)
        label = name + "".join(f",{k}={v}" for k, v in options.items())
        metrics[label] = [sign * metric.score(metric.stats(h, [r])) for s in systems
                          for h, r in zip(evs.sys_outputs[s][:n], refs)]
    return len(systems), n, gold, metrics


def main(k: int = 100, runs: int = 1) -> None:
    from common import import_mtme

    if not import_mtme("bench_spa"):
        return
    import numpy as np
    from mt_metrics_eval import data as mtme_data
    from mt_metrics_eval import stats

    from evalpipe.meta.spa import significance_matrix

    num_sys, n, gold, metrics = data()
    rated = sum(g is not None for g in gold) // num_sys
    print(f"SPA significance matrix: {len(metrics)} metrics, {num_sys} systems x {n} segments ({rated} rated), "
          f"k = {k}, blocks of 100 (seconds)")
    corrs = {m: stats.Correlation(num_sys, gold, v) for m, v in metrics.items()}
    for run in range(1, runs + 1):
        np.random.seed(1)
        start = time.perf_counter()
        ranks, matrix, _, _ = mtme_data.CompareMetricsWithPairwiseConfidenceError(
            corrs, k, stats.PermutationSigDiffParams(100, 0.02, 0.5), 0.05)
        t_mtme = time.perf_counter() - start
        start = time.perf_counter()
        exact = significance_matrix(gold, metrics, num_sys, k=k, seed=1, mode="mtme", block_size=100)
        t_exact = time.perf_counter() - start
        start = time.perf_counter()
        fast = significance_matrix(gold, metrics, num_sys, k=k, seed=1, mode="fast", block_size=100)
        t_fast = time.perf_counter() - start
        same = exact["matrix"] == matrix.tolist() and exact["metrics"] == list(ranks)
        print(f"run {run}: MTME {t_mtme:.1f}  evalpipe mtme mode {t_exact:.2f} ({t_mtme / t_exact:.0f}x; matrix equal "
              f"{same})  fast mode {t_fast:.2f} ({t_mtme / t_fast:.0f}x; target >= 100x; ranks "
              f"{'equal' if fast['ranks'] == exact['ranks'] else 'differ: ' + str(fast['ranks'])})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100, int(sys.argv[2]) if len(sys.argv) > 2 else 1)
