"""Issue 6 benchmark: permutation significance between two metrics, evalpipe vs MTME's own code.

Needs an MT Metrics Eval checkout: ``MTME_PATH=/path/to/mt-metrics-eval python bench/bench_meta.py``
(its code is imported from there; nothing of it is in this repository).  Cases, 1000 resamples each:
system-level Pearson (BLEU-refA vs COMET-refA against MQM, WMT21 en-de) and segment-level item-wise
Kendall acc23 (sentence BLEU vs chrF against MQM, first N segments).  Prints MTME's time, evalpipe's
MTME-exact mode (same p-value) and fast mode, and the chance level of pairwise accuracy.
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))


def main(scale: float = 1.0) -> None:
    from common import import_mtme

    if not import_mtme("meta-eval benchmark"):
        return
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
    """Item-wise tests through the command line against MTME's own code: on the WMT21 TED talks (en-de MQM,
    14 systems x 529 items; sentence BLEU and chrF written into a temporary MTME-layout copy by ``evalpipe
    meta-eval add-metric``) and on a synthetic 15-system x 500-item set (the size of issue 26's reproduction:
    MQM-like human scores, two noisy continuous metrics, so that the calibrated epsilons leave many pair
    outcomes differing).  MTME's ``PermutationSigDiff`` (Kendall tau-b) and ``PairwisePermutationSigDiff``
    (acc23, calibrated epsilons) in process against ``evalpipe meta-eval compare`` as a command, wall time
    start-up included, three runs each, every ratio shown."""
    import subprocess
    import tempfile

    from common import NEWS, child_env

    evalpipe = str(Path(sys.executable).parent / "evalpipe")
    with tempfile.TemporaryDirectory() as tmp:
        ted = NEWS.parent / "wmt21.tedtalks"
        sets = []
        if ted.is_dir():
            root = Path(tmp) / "wmt21.tedtalks"
            root.mkdir()
            for item in ted.iterdir():
                (root / item.name).symlink_to(item)
            for metric, name in (("bleu", "BLEU"), ("chrf", "chrF")):
                extra = ["-o", "effective_order=true"] if metric == "bleu" else []
                subprocess.run([evalpipe, "meta-eval", "add-metric", "--root", tmp, "--test-set", root.name, "-l",
                                "en-de", "--name", name, "--force", metric, *extra], check=True, capture_output=True,
                               env=child_env())
            sets.append(("TED talks en-de MQM", root.name, ("BLEU-refA", "chrF-refA")))
        else:
            print(f"TED meta-eval benchmark skipped: no {ted}")
        sets.append(("synthetic MQM-like", _synthetic_set(Path(tmp) / "synthetic", 15, 500), ("A-refA", "B-refA")))
        from evalpipe.meta.evalset import EvalSet

        for title, name, (first, second) in sets:
            evs = EvalSet(tmp, name, "en-de")
            gold_seg, seg = evs.Scores("seg", "mqm"), {m: evs.Scores("seg", m) for m in (first, second)}
            systems = [s for s in evs.human_sys_names("mqm", "seg") if all(s in t for t in seg.values())]
            gold = [v for s in systems for v in gold_seg[s]]
            m1, m2 = ([v for s in systems for v in seg[m][s]] for m in (first, second))
            c1, c2 = stats.Correlation(len(systems), gold, m1), stats.Correlation(len(systems), gold, m2)
            print(f"{title}, {len(systems)} systems x {len(gold) // len(systems)} items, item-wise, k={k}")
            for label, mtme_call, cli, target in (
                    ("Kendall tau-b permutation", lambda: stats.PermutationSigDiff(
                        c1, c2, stats.KendallVariants, "item", k, variant="b"),
                     ["--statistic", "kendall", "--variant", "b"], 100),
                    ("acc23 pair-swapping permutation (WMT23)", lambda: stats.PairwisePermutationSigDiff(
                        c1, c2, "acc23", "item", k), ["--statistic", "accuracy", "--test", "pairwise"], 150)):
                np.random.seed(1)
                start = time.perf_counter()
                theirs = mtme_call()
                t_mtme = time.perf_counter() - start
                shown = []
                for mode in ("mtme", "fast"):
                    cmd = [evalpipe, "meta-eval", "compare", "--root", tmp, "--test-set", name, "-l", "en-de",
                           "--level", "seg", "--average", "item", "-k", str(k), "--seed", "1", "--mode", mode,
                           "-f", "json", *cli, first, second]
                    times = []
                    for _ in range(1 if mode == "mtme" else 3):  # every run of the fast mode is listed
                        start = time.perf_counter()
                        done = subprocess.run(cmd, capture_output=True, text=True, env=child_env(), check=True)
                        times.append(time.perf_counter() - start)
                    p = json.loads(done.stdout)["p_value"]
                    shown.append(f"evalpipe --mode {mode} p={p:.4f} " + ", ".join(
                        f"{t:.2f}s ({t_mtme / t:.0f}x)" for t in times))
                print(f"  {label:<40} MTME {t_mtme:6.2f}s p={theirs[0]:.4f} | " + " | ".join(shown)
                      + f"  (CLI wall time; target >= {target}x in the default fast mode, every run)")


def _synthetic_set(root: Path, systems: int, items: int) -> str:
    """An MTME-layout set: MQM-like segment scores (0 for 45% of segments, else minus a sum of 1 to 4
    error weights of 1 or 5), and metrics A and B = human score + Gaussian noise (sd 3.2 and 3), seed 7."""
    rng = np.random.default_rng(7)
    (root / "sources").mkdir(parents=True)
    (root / "sources" / "en-de.txt").write_text("".join(f"source {i}\n" for i in range(items)))
    names = [f"sys{s:02d}" for s in range(systems)]
    gold = {s: [0.0 if rng.random() < 0.45 else -float(rng.choice([1, 5], size=rng.integers(1, 5)).sum())
                for _ in range(items)] for s in names}
    (root / "human-scores").mkdir()
    (root / "human-scores" / "en-de.mqm.seg.score").write_text(
        "".join(f"{s} {v}\n" for s in names for v in gold[s]))
    (root / "metric-scores" / "en-de").mkdir(parents=True)
    for metric, noise in (("A", 3.2), ("B", 3.0)):
        (root / "metric-scores" / "en-de" / f"{metric}-refA.seg.score").write_text(
            "".join(f"{s} {v + rng.normal(0, noise)!r}\n" for s in names for v in gold[s]))
    return root.name


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
