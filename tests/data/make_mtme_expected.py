"""Record MT Metrics Eval's own numbers for tests/test_meta_eval.py.

Run:  python tests/data/make_mtme_expected.py --mtme PATH_TO_MTME_CHECKOUT
(PATH is a checkout of github.com/google-research/mt-metrics-eval; its code is imported from there,
never copied here.)  It reads ../shared/data/wmt21.news (en-de), builds the same packed vectors the
test builds (same system order), computes sentence-level chrF with evalpipe for the segment-level
cases, and writes tests/data/mtme_expected.json with MTME's correlations, permutation p-values
(``numpy.random.seed`` before each test, as an MTME user does), pair-swapping permutation p-values
(``PairwisePermutationSigDiff``, tie-calibrated epsilons unless the case gives them) and a significance
matrix with ranks.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from meta_cases import SEG_ITEMS, build_cases  # noqa: E402


def mtme_arguments(parser: argparse.ArgumentParser) -> argparse.Namespace:
    """``--mtme PATH`` (and ``--commit``) parsed, and MTME made importable from PATH (its data.py imports
    apache_beam and dacite for features not used here: empty stand-ins where they are missing)."""
    parser.add_argument("--mtme", required=True, help="path to an MT Metrics Eval checkout")
    parser.add_argument("--commit", default=None, help="the checkout's commit, recorded in the output")
    args = parser.parse_args()
    sys.path.insert(0, args.mtme)
    import types

    for missing in ("apache_beam", "dacite"):
        try:
            __import__(missing)
        except ImportError:
            sys.modules[missing] = types.ModuleType(missing)
    return args


def main() -> None:
    args = mtme_arguments(argparse.ArgumentParser())
    import scipy.stats
    from mt_metrics_eval import data as mtme_data
    from mt_metrics_eval import stats

    cases = build_cases()
    out = {"mtme_commit": args.commit,
           "seg_items": SEG_ITEMS, "correlations": [], "permutation": [], "matrix": None}
    for case in cases["correlations"]:
        corr = stats.Correlation(case["num_sys"], case["gold"], case["metric"])
        ab = case["average_by"]
        st = case["statistic"]
        if st == "pearson":
            value = corr.Pearson(ab)[0]
        elif st == "spearman":
            value = corr.Spearman(ab)[0]
        elif st == "accuracy":
            value = corr.KendallVariants(ab, variant="acc23")[0]
        elif case.get("epsilon", 0.0) or case["variant"] != "b":
            value = corr.KendallVariants(ab, variant=case["variant"], epsilon=case.get("epsilon", 0.0))[0]
        else:
            value = corr.Kendall(ab)[0]
        out["correlations"].append({"id": case["id"], "value": float(value)})
    out["tie_calibration"] = []
    for case in cases["tie_calibration"]:
        tau, eps, _ = stats.KendallWithTiesOpt(case["gold"], case["metric"], case["variant"], case["num_sys"],
                                               case["average_by"], sample_rate=1.0)
        out["tie_calibration"].append({"id": case["id"], "tau": float(tau), "epsilon": float(eps)})
    for case in cases["permutation"]:
        c1 = stats.Correlation(case["num_sys"], case["gold"], case["metric1"])
        c2 = stats.Correlation(case["num_sys"], case["gold"], case["metric2"])
        fn = scipy.stats.pearsonr if case["statistic"] == "pearson" else stats.KendallVariants
        extra = {"variant": case["variant"]} if case["statistic"] == "kendall" else {}
        np.random.seed(case["seed"])
        p, delta, used, _ = stats.PermutationSigDiff(c1, c2, fn, case["average_by"], case["k"], **extra)
        out["permutation"].append({"id": case["id"], "p_value": float(p), "delta": float(delta), "trials": int(used)})
    out["pairwise"] = []
    for case in cases["pairwise"]:
        c1 = stats.Correlation(case["num_sys"], case["gold"], case["metric1"])
        c2 = stats.Correlation(case["num_sys"], case["gold"], case["metric2"])
        np.random.seed(case["seed"])
        p, delta, used, _ = stats.PairwisePermutationSigDiff(c1, c2, case["variant"], case["average_by"], case["k"],
                                                             epsilon1=case.get("epsilon1"),
                                                             epsilon2=case.get("epsilon2"))
        out["pairwise"].append({"id": case["id"], "p_value": float(p), "delta": float(delta), "trials": int(used)})
    m = cases["matrix"]
    corrs = {name: stats.Correlation(m["num_sys"], m["gold"], vec) for name, vec in m["metrics"].items()}
    values = {name: c.Pearson("none")[0] for name, c in corrs.items()}
    order = sorted(values, key=lambda n: -values[n])
    n = len(order)
    sig = np.zeros((n, n))
    np.random.seed(m["seed"])
    for i in range(n):
        for j in range(i + 1, n):
            sig[i, j] = stats.PermutationSigDiff(corrs[order[j]], corrs[order[i]], scipy.stats.pearsonr, "none",
                                                 m["k"])[0]
    out["matrix"] = {"order": order, "matrix": sig.tolist(), "ranks": mtme_data.AssignRanks(sig, 0.05)}
    (HERE / "mtme_expected.json").write_text(json.dumps(out, indent=1))
    print(f"wrote {HERE / 'mtme_expected.json'}")


if __name__ == "__main__":
    main()
