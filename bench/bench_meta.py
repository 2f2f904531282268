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
    ted_cli(stats, k=1000)


def ted_cli(stats, k: int = 1000) -> None:
    """Item-wise tests on the WMT21 TED talks (en-de MQM, 14 systems x 529 items; sentence BLEU and chrF
    written into a temporary MTME-layout copy by ``evalpipe meta-eval add-metric``): MTME's own
    ``PermutationSigDiff`` (Kendall tau-b) and ``PairwisePermutationSigDiff`` (acc23, calibrated epsilons)
    in process against ``evalpipe meta-eval compare`` as a command, wall time included."""
    import json
    import subprocess
    import tempfile

    from common import NEWS, child_env

    ted = NEWS.parent / "wmt21.tedtalks"
    if not ted.is_dir():
        print(f"TED meta-eval benchmark skipped: no {ted}")
        return
    evalpipe = str(Path(sys.executable).parent / "evalpipe")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "wmt21.tedtalks"
        root.mkdir()
        for item in ted.iterdir():
            (root / item.name).symlink_to(item)
        for metric, name in (("bleu", "BLEU"), ("chrf", "chrF")):
            extra = ["-o", "effective_order=true"] if metric == "bleu" else []
            subprocess.run([evalpipe, "meta-eval", "add-metric", "--root", tmp, "--test-set", root.name, "-l",
                            "en-de", "--name", name, metric, *extra], check=True, capture_output=True, env=child_env())
        from evalpipe.meta.evalset import EvalSet

        evs = EvalSet(tmp, root.name, "en-de")
        gold_seg, seg = evs.Scores("seg", "mqm"), {m: evs.Scores("seg", m) for m in ("BLEU-refA", "chrF-refA")}
        systems = [s for s in evs.human_sys_names("mqm", "seg") if all(s in t for t in seg.values())]
        gold = [v for s in systems for v in gold_seg[s]]
        m1, m2 = ([v for s in systems for v in seg[m][s]] for m in ("BLEU-refA", "chrF-refA"))
        c1, c2 = stats.Correlation(len(systems), gold, m1), stats.Correlation(len(systems), gold, m2)
        print(f"TED talks en-de MQM, {len(systems)} systems x {len(gold) // len(systems)} items, item-wise, k={k}")
        for label, mtme_call, cli in (
                ("Kendall tau-b permutation", lambda: stats.PermutationSigDiff(c1, c2, stats.KendallVariants, "item", k,
                                                                              variant="b"),
                 ["--statistic", "kendall", "--variant", "b"]),
                ("acc23 pair-swapping permutation (WMT23)", lambda: stats.PairwisePermutationSigDiff(
                    c1, c2, "acc23", "item", k), ["--statistic", "accuracy", "--test", "pairwise"])):
            np.random.seed(1)
            start = time.perf_counter()
            theirs = mtme_call()
            t_mtme = time.perf_counter() - start
            shown = []
            for mode in ("mtme", "fast"):
                cmd = [evalpipe, "meta-eval", "compare", "--root", tmp, "--test-set", root.name, "-l", "en-de",
                       "--level", "seg", "--average", "item", "-k", str(k), "--seed", "1", "--mode", mode, "-f", "json",
                       *cli, "BLEU-refA", "chrF-refA"]
                times = []
                for _ in range(1 if mode == "mtme" else 3):  # the fast mode is short: best of three, all shown
                    start = time.perf_counter()
                    done = subprocess.run(cmd, capture_output=True, text=True, env=child_env(), check=True)
                    times.append(time.perf_counter() - start)
                p, t = json.loads(done.stdout)["p_value"], min(times)
                shown.append(f"evalpipe --mode {mode} {', '.join(f'{x:.2f}' for x in times)}s p={p:.4f} "
                             f"({t_mtme / t:6.1f}x)")
            print(f"  {label:<40} MTME {t_mtme:7.2f}s p={theirs[0]:.4f} | " + " | ".join(shown)
                  + "  (CLI wall time; target >= 100x in the default fast mode)")


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
