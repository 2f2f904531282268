"""Record MT Metrics Eval's task sets -- the recipes ``tasks.WMT23``, ``WMT24OnWMT23``, ``WMT24`` and ``WMT25`` run
on wmt21.news en-de + zh-en -- for tests/test_task_sets.py.

Run:  python tests/data/make_mtme_task_sets.py --mtme PATH_TO_MTME_CHECKOUT --commit SHA [--shared ../shared/data]
(PATH is a checkout of github.com/google-research/mt-metrics-eval, imported from there, never copied here.)

The data: ``tests/task_set_data.build`` on the shipped subset (``subset``) and, with ``--shared``, on the full
wmt21.news (``full``): the official system-level files plus segment-level metrics written by ``evalpipe meta-eval
add-metric`` (inputs, not expected values), read with MTME's own ``data.EvalSet``.

The recipes name WMT's own test sets (``'wmt23'``, ``'wmt24'``, ``'wmt25'``) and build their tasks for those:
this script registers wmt21.news's meta-information under the recipe's test-set name (``meta_info.DATA[name] =
meta_info.DATA['wmt21.news']``) and hands ``TaskSet.Run`` the wmt21.news EvalSets under that name, so MTME's
recipe function builds the task list, weights and attributes itself.  wmt21.news's meta-information is MTME's
(en-de: standard reference refC, gold mqm; zh-en: gold mqm, the WMT21 primaries) with two changes made here and
recorded in the file: zh-en's standard reference is refA (MTME's is refB, which these copies do not hold), and
``baseline_metrics = {'sentBLEU'}`` (WMT21 has none) so the tables mark a baseline.  One behaviour is changed:
``EvalSet.Correlation`` packs the systems in a Python set's iteration order, which ``PYTHONHASHSEED`` decides (SPA's
p-values count permutations whose difference *equals* the observed one on one side only, so the order moves SPA in
the fourth decimal); the script gives it the systems in sorted order, evalpipe's, through ``_sorted_correlation``
below (the same checks and packing, in sorted order).  Each recipe runs with
``k=0`` (the recipes' default: no significance test, so nothing depends on random draws or on the order of a
Python set), primary True and False.  Recorded per run: MTME's task names, each task's ``corr_ranks``, the
weights, ``AverageRanks`` and ``AverageCorrs`` with those weights, and ``Table(metrics=list(avg_corrs),
initial_column=avg_corrs, initial_column_header='avg-corr', attr_list=['lang', 'level', 'corr_fcn'],
nicknames={'KendallWithTiesOpt': 'acc-t'}, fmt=F, which_metrics='union', baselines_metainfo=...)`` for F in tsv,
text and latex.  The meta-information evalpipe reads (``meta-info.json``) is written from the same objects.

``controls``: the data controls of issue 34 part 6 as single ``tasks.Task`` objects (test set wmt21.news, k = 0) on
``build(subset, domains=True)``, with en-de's outlier systems set to {'Online-W'}: a domain at the system level
(domain-level files) and at the segment level, close references, a gold score per task (wmt-z), outliers out and
in, KendallVariants tau-c and 23 with an epsilon, pooled accuracy with one gold and one reference set per language
pair, a reference outside the standard one, KendallWithTiesOpt 23 averaged by system; their names, values and
ranks, and the TSV table with equal weights.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from make_mtme_expected import mtme_arguments  # noqa: E402
from task_set_data import LPS, build  # noqa: E402

RECIPES = {"WMT23": "wmt23", "WMT24OnWMT23": "wmt23", "WMT24": "wmt24", "WMT25": "wmt25"}
CONTROLS = [
    dict(lang="en-de", level="sys", corr_fcn="pearson", domain="web", human=False, primary=False),
    dict(lang="en-de", level="seg", corr_fcn="pearson", domain="news", human=False, primary=False),
    dict(lang="en-de", level="seg", corr_fcn="kendall", avg_by="sys", close_refs={"refA"}, human=True, primary=False),
    dict(lang="en-de", level="sys", corr_fcn="pearson", gold="wmt-z", human=False, primary=False),
    dict(lang="en-de", level="sys", corr_fcn="spearman", human=False, primary=False),
    dict(lang="en-de", level="sys", corr_fcn="spearman", human=False, primary=False, use_outliers=True),
    dict(lang="zh-en", level="seg", corr_fcn="KendallVariants", avg_by="item", corr_fcn_args={"variant": "c"},
         human=False, primary=False),
    dict(lang="zh-en", level="seg", corr_fcn="KendallVariants", corr_fcn_args={"variant": "23", "epsilon": 0.5},
         human=False, primary=False),
    dict(lang="en-de,zh-en", level="sys", corr_fcn="accuracy", gold=["mqm", "wmt-z"], refs=[{"refC"}, {"refA"}],
         human=False, primary=True),
    dict(lang="en-de", level="seg", corr_fcn="pearson", avg_by="item", refs={"refA"}, human=False, primary=False),
    dict(lang="en-de", level="seg", corr_fcn="KendallWithTiesOpt", avg_by="sys",
         corr_fcn_args={"variant": "23", "sample_rate": 1.0}, human=False, primary=True),
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", default=None, help="the folder holding the full wmt21.news (../shared/data)")
    args = mtme_arguments(parser)
    from mt_metrics_eval import data, meta_info, stats, tasks

    def _sorted_correlation(self, gold_scores, metric_scores, sys_names=None, indexes=None):
        names = sorted(gold_scores if sys_names is None else sys_names)
        if indexes is not None:
            raise ValueError("indexes are not used by the tasks recorded here")
        missing = [s for s in names if s not in metric_scores or s not in gold_scores]
        if missing:
            raise ValueError(f"missing scores for {missing}")
        gold, metric = [], []
        for name in names:
            if len(gold_scores[name]) != len(metric_scores[name]):
                raise ValueError(f"wrong number of scores for {name}")
            gold.extend(gold_scores[name])
            metric.extend(metric_scores[name])
        return stats.Correlation(len(names), gold, metric)

    data.EvalSet.Correlation = _sorted_correlation

    news_info = meta_info.DATA["wmt21.news"]
    news_info["zh-en"] = dataclasses.replace(news_info["zh-en"], std_ref="refA")
    for lp in LPS:
        news_info[lp] = dataclasses.replace(news_info[lp], baseline_metrics={"sentBLEU"})
    infos = {lp: {"std_ref": news_info[lp].std_ref, "std_gold": dict(news_info[lp].std_gold),
                  "outlier_systems": sorted(news_info[lp].outlier_systems),
                  "primary_metrics": sorted(news_info[lp].primary_metrics),
                  "baseline_metrics": sorted(news_info[lp].baseline_metrics)} for lp in LPS}
    out = {"mtme_commit": args.commit, "meta_info": infos, "data": {}}
    sources = {"subset": HERE} | ({"full": Path(args.shared)} if args.shared else {})
    for label, source in sources.items():
        runs = []
        with tempfile.TemporaryDirectory() as root:
            build(source, Path(root))
            evs = {lp: data.EvalSet("wmt21.news", lp, read_stored_metric_scores=True, path=root) for lp in LPS}
            for recipe, test_set in RECIPES.items():
                meta_info.DATA[test_set] = news_info
                for primary in (True, False):
                    task_set, weights = getattr(tasks, recipe)(list(LPS), primary=primary, k=0)
                    results = task_set.Run(eval_set_dict={(test_set, lp): evs[lp] for lp in LPS})
                    avg_corrs = results.AverageCorrs(weights)
                    tables = {fmt: results.Table(
                        metrics=list(avg_corrs), initial_column=avg_corrs, initial_column_header="avg-corr",
                        attr_list=["lang", "level", "corr_fcn"], nicknames={"KendallWithTiesOpt": "acc-t"}, fmt=fmt,
                        which_metrics="union", baselines_metainfo=news_info["en-de"]) for fmt in ("tsv", "text", "latex")}
                    runs.append({
                        "recipe": recipe, "primary": primary, "k": 0, "weights": weights,
                        "tasks": [{"name": r.name, "metrics": list(r.corr_ranks),
                                   "correlations": [float(v[0]) for v in r.corr_ranks.values()],
                                   "ranks": [int(v[1]) for v in r.corr_ranks.values()]} for r in results],
                        "average_ranks": results.AverageRanks(weights), "average_correlations": avg_corrs,
                        "tables": tables})
                    print(f"{label} {recipe} primary={primary}: {len(task_set)} tasks", file=sys.stderr)
        out["data"][label] = runs
    outliers = {"en-de": {"Online-W"}, "zh-en": set()}
    for lp in LPS:
        news_info[lp] = dataclasses.replace(news_info[lp], outlier_systems=outliers[lp])
    with tempfile.TemporaryDirectory() as root:
        build(HERE, Path(root), domains=True)
        evs = {("wmt21.news", lp): data.EvalSet("wmt21.news", lp, read_stored_metric_scores=True, path=root)
               for lp in LPS}
        task_set = tasks.TaskSet()
        for attrs in CONTROLS:
            task_set.Append(tasks.Task("wmt21.news", k=0, **attrs))
        results = task_set.Run(eval_set_dict=evs)
        avg_corrs = results.AverageCorrs()
        out["controls"] = {
            "meta_info": {lp: dict(infos[lp], outlier_systems=sorted(outliers[lp])) for lp in LPS},
            "tasks": [{"name": r.name, "metrics": list(r.corr_ranks),
                       "correlations": [float(v[0]) for v in r.corr_ranks.values()],
                       "ranks": [int(v[1]) for v in r.corr_ranks.values()]} for r in results],
            "average_correlations": avg_corrs,
            "tsv": results.Table(metrics=list(avg_corrs), initial_column=avg_corrs, initial_column_header="avg-corr",
                                 attr_list=["lang", "level", "corr_fcn"], nicknames={"KendallWithTiesOpt": "acc-t"},
                                 fmt="tsv", which_metrics="union", baselines_metainfo=news_info["en-de"])}
    (HERE / "mtme_task_sets.json").write_text(json.dumps(out, indent=1))
    print(f"wrote {HERE / 'mtme_task_sets.json'}", file=sys.stderr)


if __name__ == "__main__":
    main()
