"""Issue 34 benchmark: the WMT24 recipe (MTME's ``tasks.WMT24``) on wmt21.news en-de + zh-en, evalpipe's command line
against MTME's ``TaskSet.Run``.

Needs an MT Metrics Eval checkout: ``MTME_PATH=/path/to/mt-metrics-eval python bench/bench_tasks.py [K] [RUNS]``
(imported from there; nothing of it is in this repository).  The data: ``tests/task_set_data.build`` on
../shared/data's full wmt21.news (the tests/data subset without it): official system files plus segment-level chrF,
sentBLEU, chrF++ (evalpipe's add-metric) and a source-length metric, 4 metrics per language pair; MTME's
meta-information for wmt21.news (zh-en's standard reference set to refA, which the copy holds), registered under the
recipe's test-set name as tests/data/make_mtme_task_sets.py does.  Both run the 4 tasks (SPA at the system level,
acc-t at the segment level, per language pair) with K permutation trials, early stopping in blocks of 100, primary
metrics and contrastive ones.  MTME: ``TaskSet.Run`` after ``numpy.random.seed(1)``, in this process; evalpipe:
``evalpipe meta-eval tasks --recipe WMT24 -k K --no-primary`` as a user runs it (a new process, start-up included).
Every run is printed; the ratio is MTME's time over evalpipe's.  Values (SPA, acc-t, averages) are compared; ranks
are significance clusters from different random draws (and MTME takes the systems in a Python set's order).
"""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SHARED = ROOT.parent / "shared" / "data"
sys.path.insert(0, str(ROOT / "tests"))
LPS = ["en-de", "zh-en"]


def main(k: int = 100, runs: int = 1) -> None:
    from common import child_env, import_mtme

    if not import_mtme("bench_tasks"):
        return
    import numpy as np
    from mt_metrics_eval import data, meta_info, tasks
    from task_set_data import build

    source = SHARED if (SHARED / "wmt21.news").is_dir() else ROOT / "tests" / "data"
    info = meta_info.DATA["wmt21.news"]
    info["zh-en"] = dataclasses.replace(info["zh-en"], std_ref="refA")
    meta_info.DATA["wmt24"] = info
    with tempfile.TemporaryDirectory() as root:
        news = build(source, Path(root))
        (news / "meta-info.json").write_text(json.dumps({lp: {
            "std_ref": info[lp].std_ref, "std_gold": dict(info[lp].std_gold),
            "primary_metrics": sorted(info[lp].primary_metrics)} for lp in LPS}))
        evs = {("wmt24", lp): data.EvalSet("wmt21.news", lp, read_stored_metric_scores=True, path=root) for lp in LPS}
        segs = {lp: len(evs["wmt24", lp].src) for lp in LPS}
        print(f"WMT24 recipe on {source.name}/wmt21.news {', '.join(f'{lp} ({n} segments)' for lp, n in segs.items())}, "
              f"k = {k}, blocks of 100, all metrics (seconds)")
        command = [str(Path(sys.executable).parent / "evalpipe"), "meta-eval", "tasks", "--root", root, "--test-set",
                   "wmt21.news", "--recipe", "WMT24", "-l", ",".join(LPS), "-k", str(k), "--no-primary", "-f", "json"]
        for run in range(1, runs + 1):
            task_set, weights = tasks.WMT24(LPS, primary=False, k=k)
            np.random.seed(1)
            start = time.perf_counter()
            results = task_set.Run(eval_set_dict=evs)
            t_mtme = time.perf_counter() - start
            start = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True, env=child_env())
            t_ours = time.perf_counter() - start
            if done.returncode:
                print(f"evalpipe failed: {done.stderr.strip()}")
                return
            ours = json.loads(done.stdout)
            diff = max(abs(a - dict(zip(t["metrics"], t["correlations"]))[m])
                       for r, t in zip(results, ours["tasks"]) for m, (a, _) in r.corr_ranks.items())
            same_ranks = sum(r.corr_ranks[m][1] == rank for r, t in zip(results, ours["tasks"])
                             for m, rank in zip(t["metrics"], t["ranks"]))
            total = sum(len(t["metrics"]) for t in ours["tasks"])
            print(f"run {run}: MTME {t_mtme:.1f}  evalpipe {t_ours:.2f} ({t_mtme / t_ours:.0f}x; target >= 50x)  "
                  f"largest value difference {diff:.1e}; cluster ranks equal for {same_ranks} of {total}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100, int(sys.argv[2]) if len(sys.argv) > 2 else 1)
