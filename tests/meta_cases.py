"""The meta-evaluation cases shared by tests/test_meta_eval.py and tests/data/make_mtme_expected.py:
packed human / metric vectors from the real WMT21 en-de data, in a fixed system order."""
from __future__ import annotations

from conftest import NEWS
from evalpipe import load_metric
from evalpipe.meta.evalset import EvalSet

SEG_ITEMS = 150  # segment-level cases use the first items, to keep MTME's loops short


def build_cases():
    evs = EvalSet(str(NEWS.parent), NEWS.name, "en-de")
    gold_sys = evs.Scores("sys", "mqm")
    gold_seg = evs.Scores("seg", "mqm")
    systems = sorted(s for s in evs.human_sys_names("mqm", "sys") if s in evs.sys_outputs)
    sys_metrics = {m: evs.Scores("sys", m) for m in ("BLEU-refA", "chrF-refA", "COMET-refA", "BLEU-refC")}
    systems = [s for s in systems if all(s in t for t in sys_metrics.values())]
    g_sys = [gold_sys[s][0] for s in systems]
    vec = {m: [t[s][0] for s in systems] for m, t in sys_metrics.items()}
    seg_systems = [s for s in systems if s in gold_seg]
    refs = evs.refs["refA"]
    chrf, bleu = load_metric("chrf"), load_metric("bleu", effective_order=True)
    seg = {"chrf": [], "bleu": []}
    g_seg = []
    for s in seg_systems:
        hyps = evs.sys_outputs[s][:SEG_ITEMS]
        g_seg += gold_seg[s][:SEG_ITEMS]
        seg["chrf"] += [chrf.score(chrf.stats(h, [r])) for h, r in zip(hyps, refs)]
        seg["bleu"] += [bleu.score(bleu.stats(h, [r])) for h, r in zip(hyps, refs)]
    cases = {"correlations": [], "permutation": [], "systems": systems, "seg_systems": seg_systems}
    for m, v in vec.items():
        for st, variant, eps in (("pearson", "b", 0.0), ("spearman", "b", 0.0), ("kendall", "b", 0.0),
                                 ("kendall", "c", 0.0), ("kendall", "23", 0.0), ("kendall", "acc23", 0.0),
                                 ("kendall", "acc23", 0.5), ("accuracy", "b", 0.0)):
            cases["correlations"].append({"id": f"sys/{m}/{st}/{variant}/{eps}", "num_sys": len(systems), "gold": g_sys,
                                          "metric": v, "average_by": "none", "statistic": st, "variant": variant,
                                          "epsilon": eps})
    for m, v in seg.items():
        for ab in ("none", "sys", "item"):
            for st, variant, eps in (("pearson", "b", 0.0), ("spearman", "b", 0.0), ("kendall", "b", 0.0),
                                     ("kendall", "acc23", 0.0), ("kendall", "acc23", 1.0), ("kendall", "23", 0.0)):
                if ab == "none" and st == "kendall" and variant == "acc23" and eps:
                    continue  # O(n^2) matrix in MTME; covered at sys/item level
                cases["correlations"].append({"id": f"seg/{m}/{ab}/{st}/{variant}/{eps}", "num_sys": len(seg_systems),
                                              "gold": g_seg, "metric": v, "average_by": ab, "statistic": st,
                                              "variant": variant, "epsilon": eps})
    cases["tie_calibration"] = [
        {"id": f"seg/{m}/{ab}/{variant}", "num_sys": len(seg_systems), "gold": g_seg, "metric": v, "average_by": ab,
         "variant": variant} for m, v in seg.items() for ab in ("sys", "item") for variant in ("acc23", "23")]
    cases["permutation"] = [
        {"id": "sys/pearson", "num_sys": len(systems), "gold": g_sys, "metric1": vec["BLEU-refA"],
         "metric2": vec["COMET-refA"], "average_by": "none", "statistic": "pearson", "variant": "b", "k": 1000,
         "seed": 11},
        {"id": "seg/pearson/none", "num_sys": len(seg_systems), "gold": g_seg, "metric1": seg["bleu"],
         "metric2": seg["chrf"], "average_by": "none", "statistic": "pearson", "variant": "b", "k": 300, "seed": 5},
        {"id": "seg/kendall-acc23/item", "num_sys": len(seg_systems), "gold": g_seg, "metric1": seg["bleu"],
         "metric2": seg["chrf"], "average_by": "item", "statistic": "kendall", "variant": "acc23", "k": 100,
         "seed": 3},
    ]
    cases["pairwise"] = [  # MTME's PairwisePermutationSigDiff (WMT23's test): pair outcomes swapped
        {"id": "seg/acc23/item", "num_sys": len(seg_systems), "gold": g_seg, "metric1": seg["bleu"],
         "metric2": seg["chrf"], "average_by": "item", "variant": "acc23", "k": 200, "seed": 7},
        {"id": "seg/23/sys", "num_sys": len(seg_systems), "gold": g_seg, "metric1": seg["chrf"],
         "metric2": seg["bleu"], "average_by": "sys", "variant": "23", "k": 100, "seed": 4},
        {"id": "sys/acc23/none", "num_sys": len(systems), "gold": g_sys, "metric1": vec["BLEU-refA"],
         "metric2": vec["COMET-refA"], "average_by": "none", "variant": "acc23", "k": 500, "seed": 9},
        {"id": "seg/b/item/eps", "num_sys": len(seg_systems), "gold": g_seg, "metric1": seg["bleu"],
         "metric2": seg["chrf"], "average_by": "item", "variant": "b", "k": 100, "seed": 1, "epsilon1": 0.0,
         "epsilon2": 2.0},
    ]
    cases["matrix"] = {"num_sys": len(systems), "gold": g_sys, "metrics": {k: vec[k] for k in ("BLEU-refA", "COMET-refA",
                                                                                               "BLEU-refC")},
                       "k": 300, "seed": 2}
    return cases
