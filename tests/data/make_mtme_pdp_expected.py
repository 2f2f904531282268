"""Record MT Metrics Eval's pairwise difference Pearson (PDP) for tests/test_pdp.py.

Run:  python tests/data/make_mtme_pdp_expected.py --mtme PATH_TO_MTME_CHECKOUT --commit COMMIT
(PATH is a checkout of github.com/google-research/mt-metrics-eval; its code is imported from there, never copied
here.)  On the cases of tests/meta_cases.py (real WMT21 en-de, the tests/data subset: system-level BLEU/chrF/COMET,
segment-level sentence chrF and BLEU) and on a few small edge cases (ties, None human scores, constant rows, two
systems), it records ``stats.Correlation(num_sys, gold, metric).Pearson(average_by, pdp=True)[0]`` in
tests/data/mtme_pdp_expected.json, with the commit.
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
from meta_cases import build_cases  # noqa: E402

EDGE = [  # (id, num_sys, gold, metric, average_by)
    ("ties/none", 4, [1.0, 1.0, 2.0, 2.0], [0.5, 0.7, 0.7, 0.9], "none"),
    ("nones/item", 3, [1.0, None, 2.0, 0.5, 3.0, None], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6], "item"),
    ("nones/sys", 2, [1.0, None, 2.0, 0.5, 3.0, 1.5], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6], "sys"),
    ("constant-metric/item", 2, [1.0, 2.0, 3.0, 4.0], [0.5, 0.5, 0.5, 0.5], "item"),
    ("constant-gold/none", 3, [2.0, 2.0, 2.0], [0.1, 0.4, 0.2], "none"),
    ("two-systems/item", 2, [1.0, 3.0, 2.0, 2.5, 0.0, 1.0], [0.3, 0.9, 0.1, 0.8, 0.2, 0.2], "item"),
]


def main() -> None:
    args = mtme_arguments(argparse.ArgumentParser())
    from mt_metrics_eval import stats

    cases = build_cases()
    out = {"mtme_commit": args.commit, "cases": []}
    for case in cases["correlations"]:
        if case["statistic"] != "pearson":
            continue
        corr = stats.Correlation(case["num_sys"], case["gold"], case["metric"])
        try:
            value = corr.Pearson(case["average_by"], pdp=True)[0]
        except ValueError as exc:  # fewer than 2 columns
            value = f"error: {exc}"
        out["cases"].append({"id": case["id"], "value": value})
    for name, num_sys, gold, metric, average_by in EDGE:
        value = stats.Correlation(num_sys, gold, metric).Pearson(average_by, pdp=True)[0]
        out["cases"].append({"id": "edge/" + name, "num_sys": num_sys, "gold": gold, "metric": metric,
                             "average_by": average_by, "value": value})
    (HERE / "mtme_pdp_expected.json").write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
