"""Record MT Metrics Eval's default task matrices (``tasks.Task``: k = 1000 trials, early stopping in blocks of
100) for tests/test_meta_eval.py.

Run:  python tests/data/make_mtme_tasks.py --mtme PATH_TO_MTME_CHECKOUT --commit SHA --shared ../shared/data
(PATH is a checkout of github.com/google-research/mt-metrics-eval, imported from there, never copied here.)

The set is built from ``--shared``'s wmt21.news with MTME's own reader (``data.EvalSet``): the folder is
copied to a temporary root and given the one file MTME needs that the shared copy lacks,
``documents/LP.docs`` (every segment in one document "doc1" of domain "news": no system-level number
depends on documents).  Each task is MTME's ``tasks.Task`` for wmt21.news en-de at the system level with its
defaults (gold mqm, reference refC, k 1000, block_size 100, early_min 0.02, early_max 0.5) except
``primary=False`` (the shared data holds BLEU, chrF and COMET, none of them WMT21 primaries but BLEU and chrF)
and ``human=False`` (its metric files hold no scores for the human translations, which MTME would fill with
zeros).  ``numpy.random.seed(SEED)`` before ``Task.Run``, as an MTME user seeds it.

MTME packs the systems in the iteration order of a Python set (``EvalSet.Correlation``), which depends on
``PYTHONHASHSEED``; so the file records, per task, the gold and metric vectors in the order MTME used, with
MTME's display names, beside its significance matrix and ranks.
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
SEED = 7


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", required=True, help="the folder holding wmt21.news (../shared/data)")
    args = mtme_arguments(parser)
    import numpy as np
    from mt_metrics_eval import data, tasks

    out = {"mtme_commit": args.commit, "seed": SEED, "tasks": []}
    with tempfile.TemporaryDirectory() as root:
        news = Path(root) / "wmt21.news"
        shutil.copytree(Path(args.shared) / "wmt21.news", news)
        (news / "documents").mkdir()
        lines = (news / "sources" / "en-de.txt").read_text(encoding="utf-8").count("\n")
        (news / "documents" / "en-de.docs").write_text("news doc1\n" * lines)
        evs = data.EvalSet("wmt21.news", "en-de", read_stored_metric_scores=True, path=root)
        for corr_fcn in ("pearson", "kendall"):
            task = tasks.Task(test_set="wmt21.news", lang="en-de", level="sys", corr_fcn=corr_fcn, primary=False,
                              human=False)
            corrs = data.GetCorrelations(evs, task.level, task.refs, task.close_refs, task.human, task.use_outliers,
                                         task.gold, task.primary, task.domain, metric_format="spreadsheet")
            first = next(iter(corrs.values()))
            np.random.seed(SEED)
            result = task.Run(eval_set_dict={("wmt21.news", "en-de"): evs})
            out["tasks"].append({
                "task": task.name, "statistic": corr_fcn, "k": task.k, "block_size": task.block_size,
                "num_sys": first.num_sys, "gold": [float(v) for v in first.gold_scores],
                "metrics": {m: [float(v) for v in c.metric_scores] for m, c in corrs.items()},
                "order": list(result.corr_ranks), "correlations": [float(v[0]) for v in result.corr_ranks.values()],
                "ranks": [int(v[1]) for v in result.corr_ranks.values()], "matrix": result.matrix.tolist()})
    (HERE / "mtme_tasks.json").write_text(json.dumps(out, indent=1))
    print(f"wrote {HERE / 'mtme_tasks.json'}")


if __name__ == "__main__":
    main()
