"""Record MT Metrics Eval's soft pairwise accuracy (SPA, its ``pce``) for tests/test_spa.py.

Run:  python tests/data/make_mtme_spa_expected.py --mtme PATH_TO_MTME_CHECKOUT --commit COMMIT
(PATH is a checkout of github.com/google-research/mt-metrics-eval; its code is imported from there, never copied
here.)  On the segment-level cases of tests/meta_cases.py (real WMT21 en-de, the tests/data subset: sentence chrF
and BLEU against MQM, None human scores included) and on small edge cases (ties, a constant metric, two systems),
it records ``stats.PairwiseConfidenceError(gold, metric, num_sys, filter_nones=...)`` and the p-value matrices of
``pce.compute_pairwise_p_values`` (MTME's seed 4, 1000 permutations) in tests/data/mtme_spa_expected.json.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from make_mtme_expected import mtme_arguments  # noqa: E402
from meta_cases import build_cases  # noqa: E402

EDGE = [  # (id, num_sys, gold, metric)
    ("ties", 3, [1.0, 2.0, 1.0, 2.0, 1.0, 2.0], [0.5, 0.5, 0.6, 0.4, 0.5, 0.5]),
    ("constant-metric", 3, [0.0, 1.0, 2.0, 3.0, 4.0, 5.0], [1.0] * 6),
    ("two-systems", 2, [0.1, 0.9, 0.4, 0.3, 0.8, 0.2], [0.2, 0.7, 0.5, 0.1, 0.9, 0.3]),
    ("nones", 3, [1.0, None, 2.0, 0.5, None, 1.5, 3.0, None, 0.0], [0.3, 0.9, 0.1, 0.8, 0.2, 0.2, 0.4, 0.4, 0.6]),
]


def _json(matrix):
    return [[None if np.isnan(v) else float(v) for v in row] for row in matrix]


def main() -> None:
    args = mtme_arguments(argparse.ArgumentParser())
    from mt_metrics_eval import pce, stats

    def record(name, num_sys, gold, metric):
        value = stats.PairwiseConfidenceError(gold, metric, num_sys, filter_nones=any(g is None for g in gold))[0]
        kept = [(g, m) for g, m in zip(gold, metric) if g is not None]
        g = np.array([k[0] for k in kept]).reshape(num_sys, -1)
        m = np.array([k[1] for k in kept]).reshape(num_sys, -1)
        return {"id": name, "num_sys": num_sys, "value": float(value),
                "human_p": _json(pce.compute_pairwise_p_values(g)), "metric_p": _json(pce.compute_pairwise_p_values(m))}

    out = {"mtme_commit": args.commit, "cases": []}
    for case in build_cases()["correlations"]:
        if case["id"].startswith("seg/") and case["id"].endswith("/none/pearson/b/0.0"):
            out["cases"].append(record(case["id"], case["num_sys"], case["gold"], case["metric"]))
    for name, num_sys, gold, metric in EDGE:
        entry = record("edge/" + name, num_sys, gold, metric)
        entry.update(gold=gold, metric=metric)
        out["cases"].append(entry)
    (HERE / "mtme_spa_expected.json").write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
