"""Issue 6 benchmark: permutation significance between two metrics, evalpipe vs MTME's own code.

Needs an MT Metrics Eval checkout: ``MTME_PATH=/path/to/mt-metrics-eval python bench/bench_meta.py``
(its code is imported from there; nothing of it is in this repository).  Cases, 1000 resamples each:
system-level Pearson (BLEU-refA vs COMET-refA against MQM, WMT21 en-de) and segment-level item-wise
Kendall acc23 (sentence BLEU vs chrF against MQM, first N segments).  Prints MTME's time, evalpipe's
MTME-exact mode (same p-value) and fast mode, and the chance level of pairwise accuracy.
"""
from __future__ import annotations

import os
import sys
import time
import types
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))


def main(scale: float = 1.0) -> None:
    mtme = os.environ.get("MTME_PATH")
    if not mtme:
        print("meta-eval benchmark skipped: set MTME_PATH to an MT Metrics Eval checkout")
        return
    sys.path.insert(0, mtme)
    for missing in ("apache_beam", "dacite"):
        sys.modules.setdefault(missing, types.ModuleType(missing))
    import scipy.stats
    from mt_metrics_eval import stats

    import meta_cases
    from evalpipe.meta.correlation import chance_accuracy
    from evalpipe.meta.significance import permutation_test

    meta_cases.SEG_ITEMS = max(50, int(300 * scale))
    cases = meta_cases.build_cases()
    sys_case = cases["permutation"][0]
    seg_case = dict(cases["permutation"][2], k=1000)
    for label, case, fn, extra in (("sys-level Pearson", sys_case, scipy.stats.pearsonr, {}),
                                   (f"seg-level item-wise Kendall acc23 ({meta_cases.SEG_ITEMS} items)", seg_case,
                                    stats.KendallVariants, {"variant": "acc23"})):
        c1 = stats.Correlation(case["num_sys"], case["gold"], case["metric1"])
        c2 = stats.Correlation(case["num_sys"], case["gold"], case["metric2"])
        np.random.seed(case["seed"])
        start = time.perf_counter()
        theirs = stats.PermutationSigDiff(c1, c2, fn, case["average_by"], 1000, **extra)
        t_mtme = time.perf_counter() - start
        runs = {}
        for mode in ("mtme", "fast"):
            start = time.perf_counter()
            result = permutation_test(case["gold"], case["metric1"], case["metric2"], case["num_sys"],
                                      case["average_by"], case["statistic"], k=1000, seed=case["seed"], mode=mode,
                                      **extra)
            runs[mode] = (time.perf_counter() - start, result)
        (t_exact, exact), (t_fast, fast) = runs["mtme"], runs["fast"]
        print(f"{label:<52} MTME {t_mtme:7.2f}s p={theirs[0]:.4f} | evalpipe mtme-exact {t_exact:6.2f}s "
              f"p={exact['p_value']:.4f} ({t_mtme / t_exact:5.1f}x) | fast {t_fast:6.3f}s p={fast['p_value']:.4f} "
              f"({t_mtme / t_fast:6.1f}x, target >= 100x)")
    gold = [g for g in cases["correlations"][0]["gold"]]
    print(f"chance level of system-level pairwise accuracy (MQM, {len(gold)} systems): {chance_accuracy(gold):.3f}")


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
