"""The HTML page of a task set (``meta-eval tasks --report``): the table of MTME's task-set results -- each metric's
weighted average and, per task, its value and rank -- then, per task, its settings, its ranking in significance
clusters and (with k > 0) the metric x metric p-values."""
from __future__ import annotations

from html import escape
from typing import Any, Dict, List, Sequence

from evalpipe.meta.tables import parse_display_name
from evalpipe.report.page import _page, metric_matrix

EXTRA_STYLE = """
<style>
table.tasks td, table.tasks th { white-space: nowrap; padding: 0.25em 0.5em; }
div.wide { overflow-x: auto; }
table.tasks td.rank1 { background: #d8f0dd; font-weight: 600; }
table.tasks th.task, table.tasks td.task { border-left: 1px solid #ccc; }
table.tasks td.missing { color: #aaa; }
table.tasks td.avg { font-weight: 600; }
table.tasks thead th { font-weight: normal; color: #555; }
table.tasks thead tr:last-child th { font-weight: 600; color: #222; }
</style>
"""


def _name(metric: str, baselines: Sequence[str]) -> str:
    status = parse_display_name(metric, set(baselines))[1]
    label = escape(metric)
    if status == "contrastive":
        return f'<i title="not a primary metric">{label}</i>'
    if status == "baseline":
        return f'<u title="baseline">{label}</u>'
    return label


def task_set_report(doc: Dict[str, Any], attrs: List[Dict[str, str]], baselines: Sequence[str],
                    title: str = "evalpipe: metrics ranked over a task set") -> str:
    tasks, average = doc["tasks"], doc["average_correlations"]
    order = list(average) + sorted(set().union(*(t["metrics"] for t in tasks)) - set(average))
    avg_rank = {m: r for r, m in enumerate(average, 1)}
    head = ""
    for attr in ("lang", "level", "corr_fcn"):
        head += f"<tr><th>{attr}</th><th></th>" + "".join(
            f'<th class="task">{escape(a[attr].replace("KendallWithTiesOpt", "acc-t"))}</th>' for a in attrs) + "</tr>"
    head += "<tr><th>weight</th><th></th>" + "".join(f'<th class="task">{t["weight"]:.3g}</th>' for t in tasks) + "</tr>"
    head += "<tr><th>metric</th><th>average</th>" + "".join(
        f'<th class="task">task{i}</th>' for i in range(1, len(tasks) + 1)) + "</tr>"
    body = ""
    cells = [{m: (c, r) for m, c, r in zip(t["metrics"], t["correlations"], t["ranks"])} for t in tasks]
    for metric in order:
        row = f"<tr><td>{_name(metric, baselines)}</td>"
        row += (f'<td class="avg">{avg_rank[metric]} &middot; {average[metric]:.3f}</td>' if metric in average
                else '<td class="missing">--</td>')
        for col in cells:
            if metric in col:
                corr, rank = col[metric]
                row += f'<td class="task{" rank1" if rank == 1 else ""}">{rank} &middot; {corr:.3f}</td>'
            else:
                row += '<td class="task missing">--</td>'
        body += row + "</tr>"
    parts = [EXTRA_STYLE, f"<h1>{escape(title)}</h1>",
             f'<p class="meta">{len(tasks)} tasks; average: each task\'s values mapped to [0, 1] (correlations '
             f"from -1..1, accuracies and SPA as they are), weighted as shown; seed {escape(str(doc.get('seed')))}, "
             f"{escape(str(doc.get('mode')))} mode.</p>",
             "<h2>Metrics over the task set</h2>",
             f'<figure><div class="wide"><table class="tasks"><thead>{head}</thead><tbody>{body}</tbody></table></div>'
             '<figcaption class="caption">Each cell: rank &middot; value. A task\'s rank is its significance cluster '
             "(with k = 0 no test is run and ranks are positions); green: rank 1. <i>Italics</i>: not a primary "
             "metric; <u>underlined</u>: baseline; [noref]: no reference. A metric missing from a task has no "
             "average.</figcaption></figure>"]
    for i, (task, result) in enumerate(zip(attrs, tasks), 1):
        names, ranks, corrs = result["metrics"], result["ranks"], result["correlations"]
        start = ' class="cluster-start"'
        rows = "".join(
            f'<tr{start if j and ranks[j] != ranks[j - 1] else ""}><td>{_name(m, baselines)}</td>'
            f"<td>{r}</td><td>{c:.4f}</td></tr>" for j, (m, r, c) in enumerate(zip(names, ranks, corrs)))
        parts += [f"<h2>task{i}: {escape(task['lang'])}, {escape(task['level'])}, {escape(task['corr_fcn'])}</h2>",
                  f'<p class="meta"><code>{escape(result["task"])}</code></p>',
                  f"<table><tr><th>metric</th><th>rank</th><th>value</th></tr>{rows}</table>"]
        if any(p for row in result["matrix"] for p in row):
            parts.append("<figure>" + metric_matrix(names, result["matrix"], result.get("threshold", 0.05)) +
                         '<figcaption class="caption">p-value of the test that the row metric is better than the '
                         "column metric (green: significant).</figcaption></figure>")
    return _page(title, parts)
