"""``evalpipe meta-eval tasks``: a task set (MTME's ``TaskSet``) run in one command, with its weighted averages and
MTME's tables."""
from __future__ import annotations

import json
import math
from typing import Any, Dict, Optional, Tuple

import click

from evalpipe import progress
from evalpipe.cli import options as opt
from evalpipe.cli.base import Command, comma_list, given_flags
from evalpipe.cli.meta_options import MODE, root_option
from evalpipe.corpus import read_lines, write_atomically
from evalpipe.errors import InputError, UsageError


def _task_list(recipe, task_file, task_lines, test_set, lps, trials, primary, human) -> Tuple[list, Optional[list]]:
    """The tasks (and the recipe's weights, or None) from a recipe, a file and ``--task`` lines; -k, --primary and
    --human fill what a task does not set itself."""
    from evalpipe.meta.tasks import make_task, parse_task_attrs, read_tasks, recipe as make_recipe

    if recipe:
        if task_file or task_lines:
            raise UsageError("--recipe builds the whole task set: give it without --tasks and --task")
        if not test_set:
            raise UsageError("--recipe needs --test-set (the recipes name WMT's test sets; evalpipe runs them on any)")
        return make_recipe(recipe, test_set, lps or None, True if primary is None else primary,
                           0 if trials is None else trials, human)
    if lps:
        raise UsageError("-l goes with --recipe (a task names its language pairs with lang=)")
    entries = []
    if task_file:
        entries += read_tasks(task_file, read_lines(task_file, allow_empty=True))
    entries += [(parse_task_attrs(line, f"--task {i}"), f"--task {i}") for i, line in enumerate(task_lines, 1)]
    if not entries:
        raise UsageError("give the tasks: --recipe NAME, --tasks FILE or --task 'lang=en-de level=sys ...'")
    tasks, fills, used = [], {"test_set": test_set, "k": trials, "primary": primary, "gold": human}, set()
    for attrs, where in entries:
        filled = dict(attrs)
        for attr, value in fills.items():
            if attr not in filled and value is not None:
                filled[attr] = value
                used.add(attr)
        if filled.get("test_set") in (None, "None"):
            raise InputError("the task names no test_set and no --test-set is given", where)
        tasks.append(make_task(filled, where))
    flags = {"test_set": "--test-set", "k": "-k", "primary": "--primary/--no-primary", "gold": "--human"}
    for attr, value in fills.items():
        if value is not None and attr not in used:
            raise UsageError(f"{flags[attr]} fills what a task leaves out, and every task sets {attr}: it cannot act")
    return tasks, None


def _check_draws(tasks, typed) -> None:
    """--seed and --mode act only where a task draws: a permutation test (k > 0) or KendallWithTiesOpt's pair
    sampling (sample_rate below 1; MTME's default 0.1)."""
    tests = any(t.k for t in tasks)
    sampled = any(t.corr_fcn == "KendallWithTiesOpt" and float((t.corr_fcn_args or {}).get("sample_rate", 0.1)) < 1
                  for t in tasks)
    if "--mode" in typed and not tests:
        raise UsageError("--mode picks how permutation tests draw, and no task runs one (k is 0 in every task)")
    if "--seed" in typed and not (tests or sampled):
        raise UsageError("--seed seeds random draws, and no task draws (k is 0 and no pair sampling in every task)")


@click.command("tasks", cls=Command)
@root_option
@click.option("--test-set", "test_set", default=None, help="test set of the recipe, and of tasks that name none")
@opt.language_pair("the recipe's language pairs, comma-separated (default: the recipe's own)", several=True)
@click.option("--recipe", type=click.Choice(["WMT23", "WMT24OnWMT23", "WMT24", "WMT25"]), default=None,
              help="MTME's task set of that year's metrics task (tasks.WMT23, ...), on --test-set")
@click.option("--tasks", "task_file", type=click.Path(dir_okay=False), default=None,
              help="file of tasks, one per line: MTME's 'attr=value ...' names or JSON objects")
@click.option("--task", "task_lines", multiple=True, metavar="'ATTR=VALUE ...'", help="one task (repeat)")
@click.option("-k", "--trials", type=click.IntRange(min=0), default=None,
              help="permutation trials of tasks that set no k (a recipe's: default 0, no significance test)")
@click.option("--primary/--no-primary", default=None,
              help="primary metrics only (tasks that do not set primary; a recipe's default: --primary)")
@click.option("--human", default=None,
              help="human score of tasks that set no gold (default: the standard one of the level, meta-info.json)")
@opt.metrics("metrics to keep (base names: chrF, COMET; default: every metric the tasks select)", any_word=True)
@click.option("--meta-info", "meta_info_file", type=click.Path(dir_okay=False), default=None,
              help="standard references, human scores, primaries, outliers, baselines (default: the test set's "
                   "meta-info.json)")
@click.option("--weights-by", "weights_by", default=None, metavar="ATTR[,ATTR...]",
              help="weights split evenly over these attributes' values, recursively (MTME's AssignWeights)")
@click.option("--weights", "weights", default=None, metavar="W,W,...", help="one weight per task, normalized")
@opt.seed("random seed of the tests' draws")
@MODE
@opt.fmt(["text", "tsv", "latex", "json"], "text", help="MTME's table as text, TSV or LaTeX, or everything as JSON")
@opt.report()
def tasks_command(root, test_set, language_pair, recipe, task_file, task_lines, trials, primary, human, metric_names,
                  meta_info_file, weights_by, weights, seed, mode, fmt, report_file) -> None:
    """Run a task set: every task's ranking with significance clusters, the weighted average rank and correlation,
    and MTME's table (WMT23 to WMT25's way of ranking metrics)."""
    from evalpipe.meta.evalset import EvalSet
    from evalpipe.meta.meta_info import meta_info_for, read_meta_info
    from evalpipe.meta.tables import task_set_table
    from evalpipe.meta.task_run import check_meta_info, resolve, run_task
    from evalpipe.meta.tasks import assign_weights, average_corrs, average_ranks, str_value

    lps = comma_list(language_pair, "-l") if language_pair else []
    tasks, recipe_weights = _task_list(recipe, task_file, task_lines, test_set, lps, trials, primary, human)
    _check_draws(tasks, given_flags(click.get_current_context()))
    if weights_by and weights:
        raise UsageError("--weights-by and --weights cannot go together: give one")
    if weights:
        try:
            given = [float(w) for w in weights.split(",")]
        except ValueError:
            raise click.BadParameter(f"expected numbers separated by commas, got {weights!r}", param_hint="--weights")
        if len(given) != len(tasks) or not all(math.isfinite(w) and w >= 0 for w in given) or sum(given) <= 0:
            what = (f"{len(given)}" if len(given) != len(tasks) else
                    f"{weights} (a negative or non-finite weight)" if not all(math.isfinite(w) and w >= 0 for w in given)
                    else f"{weights} (they sum to 0)")
            raise click.BadParameter(f"expected {len(tasks)} non-negative weights (one per task) with a positive sum, "
                                     f"got {what}", param_hint="--weights")
        task_weights = [w / sum(given) for w in given]
    elif weights_by:
        task_weights = assign_weights(tasks, comma_list(weights_by, "--weights-by"))
    else:
        task_weights = recipe_weights or [1 / len(tasks)] * len(tasks)
    given_info = read_meta_info(meta_info_file) if meta_info_file else None
    sets: Dict[Tuple[str, str], Any] = {}
    for task in tasks:  # every test set and language pair opened (and checked) before any task runs
        for lp in task.langs:
            if (task.test_set, lp) not in sets:
                sets[task.test_set, lp] = EvalSet(root, task.test_set, lp)
    infos = {key: meta_info_for(evs.dir, key[1], given_info) for key, evs in sets.items()}
    for key, evs in sets.items():
        check_meta_info(evs, infos[key])
    typed = given_flags(click.get_current_context())
    if {"--primary", "--no-primary"} & set(typed) and not any(info.primary_metrics for info in infos.values()):
        flag = "--primary" if primary else "--no-primary"
        raise UsageError(f"{flag} keeps or drops the metrics that are not primary, and no test set and language pair "
                         f"here lists primary_metrics ({'--meta-info' if meta_info_file else 'meta-info.json'}): "
                         f"every metric is kept either way; leave it out")
    only = comma_list(metric_names, "-m") or None
    data = [({lp: sets[t.test_set, lp] for lp in t.langs}, {lp: infos[t.test_set, lp] for lp in t.langs})
            for t in tasks]
    tasks = [resolve(t, *d, f"task{i}") for i, (t, d) in enumerate(zip(tasks, data), 1)]  # all, before any runs
    results = []
    for i, (t, d) in enumerate(zip(tasks, data), 1):
        progress.step("task", i, len(tasks))
        results.append(run_task(t, *d, seed=seed, mode=mode, only=only, where=f"task{i}"))
    ranks = average_ranks(results, task_weights)
    corrs = average_corrs(results, tasks, task_weights)
    every = set().union(*(r["metrics"] for r in results))
    partial = sorted(every - set(corrs))
    if partial:
        click.echo(f"Note: not in every task, so without an average: {', '.join(partial)}", err=True)
    baselines = set().union(*(info.baseline_metrics for info in infos.values()))
    attrs = [{a: str_value(getattr(t, a)) for a in ("test_set", "lang", "level", "corr_fcn")} for t in tasks]
    doc = {"tasks": [dict(task=t.name, weight=w, threshold=t.pval, **r)
                     for t, w, r in zip(tasks, task_weights, results)],
           "weights": task_weights, "average_ranks": ranks, "average_correlations": corrs,
           "not_in_every_task": partial, "seed": seed, "mode": mode, "attributes": attrs,
           "baselines": sorted(baselines)}
    if report_file:
        from evalpipe.report.task_set import task_set_report

        write_atomically(report_file, task_set_report(doc, attrs, sorted(baselines)))
    if fmt == "json":
        click.echo(json.dumps(doc, indent=1))
        return
    table = task_set_table(results, attrs, corrs, fmt, "union", baselines)
    click.echo(table, nl=False)
    if fmt == "text":
        click.echo("")
        for i, task in enumerate(tasks, 1):
            click.echo(f"task{i}: {task.name}")
