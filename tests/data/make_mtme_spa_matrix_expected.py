"""Record MT Metrics Eval's SPA significance matrix (``data.CompareMetricsWithPairwiseConfidenceError``, the ``pce``
tasks of its WMT24 and WMT25 recipes) for tests/test_spa.py.

Run:  python tests/data/make_mtme_spa_matrix_expected.py --mtme PATH_TO_MTME_CHECKOUT --commit SHA
(PATH is a checkout of github.com/google-research/mt-metrics-eval, imported from there, never copied here.)

On the segment-level WMT21 en-de cases of tests/meta_cases.py (the tests/data subset: the first 150 items of every
system with MQM scores, None human scores included) with four sentence-level metrics computed here by evalpipe
(chrF, BLEU with effective order, chrF++, and TER negated), as ``stats.Correlation`` objects in that fixed system order:
``CompareMetricsWithPairwiseConfidenceError(corrs, k, PermutationSigDiffParams(100, 0.02, 0.5), 0.05)`` after
``numpy.random.seed(SEED)``, for k in 200 and 1000.  The file holds the vectors, the SPA values in MTME's order, the
significance matrix and the ranks.

MTME decides each permutation trial on a float32 matrix product, whose rounding depends on the CPU's BLAS kernel;
with MQM scores (many ties) that rounding decides many trials, so the ``runs`` are this recording machine's.  The
``untied`` runs use the same human scores plus a deterministic jitter that breaks every tie (``untied_gold``): there
no trial lies within float32's rounding of its threshold, and MTME's values are the exact ones on every CPU.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from make_mtme_expected import mtme_arguments  # noqa: E402

SEED = 13


def untied(gold):
    """The human scores plus a jitter in [0, 0.01) that differs at every segment (None stays None)."""
    return [None if g is None else g + ((i * 0.6180339887) % 1.0) * 0.01 for i, g in enumerate(gold)]


def cases():
    """(num_sys, gold, {metric: scores}): the tests/data subset's segment-level cases with two more metrics."""
    from meta_cases import SEG_ITEMS, build_cases

    from conftest import NEWS
    from evalpipe import load_metric
    from evalpipe.meta.evalset import EvalSet

    built = build_cases()
    seg = next(c for c in built["correlations"] if c["id"] == "seg/chrf/none/pearson/b/0.0")
    bleu = next(c for c in built["correlations"] if c["id"] == "seg/bleu/none/pearson/b/0.0")
    evs = EvalSet(str(NEWS.parent), NEWS.name, "en-de")
    refs = evs.refs["refA"]
    chrfpp, ter = load_metric("chrf", word_order=2), load_metric("ter")
    extra = {"chrf++": [], "-ter": []}
    for s in built["seg_systems"]:
        for h, r in zip(evs.sys_outputs[s][:SEG_ITEMS], refs):
            extra["chrf++"].append(chrfpp.score(chrfpp.stats(h, [r])))
            extra["-ter"].append(-ter.score(ter.stats(h, [r])))
    return seg["num_sys"], seg["gold"], {"chrf": seg["metric"], "bleu": bleu["metric"], **extra}


def main() -> None:
    args = mtme_arguments(argparse.ArgumentParser())
    import numpy as np
    from mt_metrics_eval import data, stats

    num_sys, gold, metrics = cases()
    out = {"mtme_commit": args.commit, "seed": SEED, "num_sys": num_sys, "gold": gold, "metrics": metrics, "runs": []}
    corrs = {m: stats.Correlation(num_sys, gold, v) for m, v in metrics.items()}
    for k in (200, 1000):
        np.random.seed(SEED)
        ranks, matrix, _, _ = data.CompareMetricsWithPairwiseConfidenceError(
            corrs, k, stats.PermutationSigDiffParams(100, 0.02, 0.5), 0.05)
        out["runs"].append({"k": k, "block_size": 100, "order": list(ranks),
                            "values": [float(v[0]) for v in ranks.values()], "ranks": [int(v[1]) for v in ranks.values()],
                            "matrix": matrix.tolist()})
    out["untied_gold"] = untied(gold)
    out["untied_runs"] = []
    corrs = {m: stats.Correlation(num_sys, out["untied_gold"], v) for m, v in metrics.items()}
    for k in (200,):
        np.random.seed(SEED)
        ranks, matrix, _, _ = data.CompareMetricsWithPairwiseConfidenceError(
            corrs, k, stats.PermutationSigDiffParams(100, 0.02, 0.5), 0.05)
        out["untied_runs"].append({"k": k, "block_size": 100, "order": list(ranks),
                                   "values": [float(v[0]) for v in ranks.values()],
                                   "ranks": [int(v[1]) for v in ranks.values()], "matrix": matrix.tolist()})
    (HERE / "mtme_spa_matrix_expected.json").write_text(json.dumps(out) + "\n", encoding="utf-8")
    print(f"wrote {HERE / 'mtme_spa_matrix_expected.json'}")


if __name__ == "__main__":
    main()
