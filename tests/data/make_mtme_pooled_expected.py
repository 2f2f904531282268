"""Record MT Metrics Eval's accuracy pooled over language pairs (``data.CompareMetricsWithGlobalAccuracy``, what a
``tasks.Task`` with ``corr_fcn='accuracy'`` and ``lang='en-de,zh-en'`` runs) for tests/test_pooled.py.

Run:  python tests/data/make_mtme_pooled_expected.py --mtme PATH_TO_MTME_CHECKOUT --commit SHA --shared ../shared/data
(PATH is a checkout of github.com/google-research/mt-metrics-eval, imported from there, never copied here.)

On ../shared/data's wmt21.news en-de and zh-en (the official BLEU, chrF and COMET system scores against reference A,
the MQM system scores), read with MTME's own ``data.EvalSet`` from a temporary copy given the one file MTME needs that
the shared copy lacks (``documents/LP.docs``: every segment in one document, no system-level number depends on it),
without zh-en's ``*-all`` score files (zh-en has one reference: MTME names them ``*-refA`` too and refuses the duplicate):
``CompareMetricsWithGlobalAccuracy([en-de, zh-en], [{refA}, {refA}], [set(), set()], include_human=False,
include_outliers=False, gold 'mqm', primary_metrics=False, k=K, PermutationSigDiffParams(100, 0.02, 0.5))`` after
``numpy.random.seed(SEED)``, for K in 1000 and 200 (MTME's zh-en standard reference set to refA: the shared copy
holds no refB), and ``stats.Agreement`` of each metric per language pair.  MTME packs
systems in a Python set's order (``PYTHONHASHSEED``), so the file records each language pair's systems in the order it
used, with their human and metric scores, beside the accuracies, the significance matrix and the ranks.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from make_mtme_expected import mtme_arguments  # noqa: E402

SEED = 11
LPS = ("en-de", "zh-en")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", required=True, help="the folder holding wmt21.news (../shared/data)")
    args = mtme_arguments(parser)
    import dataclasses

    import numpy as np
    from mt_metrics_eval import data, meta_info, stats

    # the shared zh-en holds reference A only; MTME's meta-information names B its standard one (EvalSet refuses a
    # standard reference it does not find): A is made zh-en's standard reference for this run
    zh = meta_info.DATA["wmt21.news"]["zh-en"]
    meta_info.DATA["wmt21.news"]["zh-en"] = dataclasses.replace(zh, std_ref="refA")

    out = {"mtme_commit": args.commit, "seed": SEED, "language_pairs": list(LPS), "runs": []}
    with tempfile.TemporaryDirectory() as root:
        news = Path(root) / "wmt21.news"
        shutil.copytree(Path(args.shared) / "wmt21.news", news)
        (news / "documents").mkdir()
        for path in (news / "metric-scores" / "zh-en").glob("*-all.*.score"):
            path.unlink()  # zh-en has one reference, so MTME names "-all" "-refA" too: a duplicate it refuses
        for lp in LPS:
            lines = (news / "sources" / f"{lp}.txt").read_text(encoding="utf-8").count("\n")
            (news / "documents" / f"{lp}.docs").write_text("news doc1\n" * lines)
        evs = [data.EvalSet("wmt21.news", lp, read_stored_metric_scores=True, path=root) for lp in LPS]
        refs, close = [{"refA"}, {"refA"}], [set(), set()]
        corrs = [data.GetCorrelations(e, "sys", r, c, False, False, "mqm", False, None) for e, r, c in zip(evs, refs, close)]
        out["parts"] = []
        for lp, e, c in zip(LPS, evs, corrs):
            first = next(iter(c.values()))
            out["parts"].append({"lp": lp, "num_sys": first.num_sys, "gold": [float(v) for v in first.gold_scores],
                                 "metrics": {e.DisplayName(m): [float(v) for v in corr.metric_scores]
                                             for m, corr in c.items()},
                                 "agreement": {e.DisplayName(m): [int(x) for x in stats.Agreement(corr.gold_scores,
                                                                                                  corr.metric_scores)]
                                               for m, corr in c.items()}})
        psd = stats.PermutationSigDiffParams(100, 0.02, 0.5)
        for k in (1000, 200):
            np.random.seed(SEED)
            ranks, matrix, _, _ = data.CompareMetricsWithGlobalAccuracy(
                evs, refs, close, False, False, "mqm", False, None, k, psd, 0.05)
            out["runs"].append({"k": k, "block_size": 100, "order": list(ranks),
                                "accuracies": [float(v[0]) for v in ranks.values()],
                                "ranks": [int(v[1]) for v in ranks.values()], "matrix": matrix.tolist()})
    (HERE / "mtme_pooled_expected.json").write_text(json.dumps(out, indent=1))
    print(f"wrote {HERE / 'mtme_pooled_expected.json'}")


if __name__ == "__main__":
    main()
