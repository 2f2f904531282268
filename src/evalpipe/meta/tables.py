"""Tables of a task set's results in MT Metrics Eval's formats (``tasks.MetricsTable``, ``TaskSetResults.Table``).

Rows are metrics, columns (value, rank) pairs: an optional first column (the weighted average), then one per
task.  Header rows above: one per attribute shown (``lang:``, ``level:``, ...; values through nicknames, e.g.
KendallWithTiesOpt as ``acc-t``), then ``metric  avg-corr  task1  task2 ...``.  A metric name's leading ``*``
(not primary) and trailing ``[noref]`` are read off it; baselines (``meta-info.json``) are marked.

* ``text``: columns joined by two spaces, right-aligned widths, a dashed rule under the headers; a cell is the rank
  then the value to 3 decimals (``1 0.933``), or ``value (rank)`` in a re-ranked column; ``--`` where missing;
  names ``*M`` (contrastive), ``_M`` (baseline), ``M[noref]``.
* ``tsv``: each column two cells (rank, value to 6 decimals; ``--`` ``--`` where missing); a header cell is
  followed by an empty one.
* ``latex``: a booktabs ``tabular``; rank 1 in bold; contrastive metrics in italics, baselines underlined, ``*``
  after a metric without reference.
* ``json`` (evalpipe's): the same numbers as data.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Set, Tuple

Column = Dict[str, Tuple[float, int]]
FORMATS = ("text", "tsv", "latex", "json")


def parse_display_name(metric: str, baselines: Optional[Set[str]]) -> Tuple[str, str, bool]:
    """(base name, status primary/contrastive/baseline, without reference) of a displayed metric name."""
    noref = metric.endswith("[noref]")
    if noref:
        metric = metric[:-len("[noref]")]
    if metric.startswith("*"):
        return metric[1:], "contrastive", noref
    return metric, "baseline" if baselines and metric in baselines else "primary", noref


def _plain_name(base: str, status: str, noref: bool) -> str:
    return {"primary": "", "contrastive": "*", "baseline": "_"}[status] + base + ("[noref]" if noref else "")


def _rows(metrics: Sequence[str], columns: Sequence[Column], rerank: Sequence[bool], which: str
          ) -> Tuple[List[str], List[Column]]:
    metrics = list(metrics)
    if which == "intersection":
        common = set(metrics).intersection(*(set(c) for c in columns))
        metrics = [m for m in metrics if m in common]
    elif which == "union":
        every = set(metrics).union(*(set(c) for c in columns))
        metrics += sorted(m for m in every if m not in metrics)
    out = []
    for again, col in zip(rerank, columns):
        if again:
            kept = sorted((x for x in col.items() if x[0] in metrics), key=lambda x: -x[1][0])
            col = {m: (c, r + 1) for r, (m, (c, _)) in enumerate(kept)}
        out.append(col)
    return metrics, out


def metrics_table(metrics: Sequence[str], columns: Sequence[Column], headers: Sequence[Sequence[str]],
                  fmt: str = "text", which: str = "listed", rerank: Optional[Sequence[bool]] = None,
                  baselines: Optional[Set[str]] = None) -> str:
    """The table as text, TSV or LaTeX (module docstring); ``which``: listed, intersection or union of ``metrics``
    with the columns' metrics (those not listed come last, sorted)."""
    rerank = list(rerank) if rerank else [False] * len(columns)
    metrics, columns = _rows(metrics, columns, rerank, which)
    infos = [parse_display_name(m, baselines) for m in metrics]
    rows = [[c.get(m, (None, None)) for c in columns] for m in metrics]
    if fmt == "tsv":
        return _tsv(infos, rows, headers)
    if fmt == "latex":
        return _latex(infos, rows, headers, rerank)
    return _text(infos, rows, headers, rerank)


def _tsv(infos, rows, headers) -> str:
    out = ""
    for head in headers:
        head = list(head)
        out += "\t".join(head[:1] + [h + "\t" for h in head[1:-1]] + head[-1:]) + "\n"
    for info, row in zip(infos, rows):
        cells = [_plain_name(*info)] + ["--\t--" if r is None else f"{r:d}\t{c:f}" for c, r in row]
        out += "\t".join(cells) + "\n"
    return out


def _text(infos, rows, headers, rerank) -> str:
    def cell(corr, rank, rank_last):
        if corr is None:
            return "--"
        return f"{corr:6.3f} ({rank})" if rank_last else f"{rank}{corr:6.3f}"

    lines = [[_plain_name(*info)] + [cell(c, r, again) for (c, r), again in zip(row, rerank)]
             for info, row in zip(infos, rows)]
    widths = []
    for i in range(len(lines[0]) if lines else len(headers[0])):
        right = i > 0 and not rerank[i - 1]
        width = max(len(line[i]) for line in list(headers) + lines)
        widths.append(width if right else -width)

    def just(s, w):
        return f"{s:>{w}}" if w >= 0 else f"{s:<{-w}}"

    out = ""
    for head in headers:
        out += "  ".join(just(h, w) for h, w in zip(head, widths)) + "\n"
    if headers:
        out += "  ".join("-" * abs(w) for w in widths) + "\n"
    for line in lines:
        out += "  ".join(just(x, w) for x, w in zip(line, widths)) + "\n"
    return out


def _latex(infos, rows, headers, rerank) -> str:
    def esc(s):
        return s.replace("_", "\\_")

    def cell(corr, rank, rank_last):
        if corr is None:
            return "-- & --"
        c, r = f"{corr:0.3f}", f"({rank:d})" if rank_last else f"{rank:d}"
        if rank == 1:
            c, r = f"\\textbf{{{c}}}", f"\\textbf{{{r}}}"
        return f"{c} & {r}" if rank_last else f"{r} & {c}"

    names = []
    for base, status, noref in infos:
        name, star = esc(base), "*" if noref else ""
        if status == "baseline":
            name = f"\\underline{{{name}}}"
        elif status == "contrastive":
            name = f"\\textit{{{name}}}"
        names.append(name + star)
    out = "\\begin{tabular}{l" + "|rr" * (len(rows[0]) if rows else len(headers[0]) - 1) + "}\n\\toprule\n"
    for head in headers:
        head = [esc(h) for h in head]
        out += head[0] + " & " + " & ".join(f"\\multicolumn{{2}}{{|l}}{{{h}}}" for h in head[1:]) + " \\\\\n"
    if headers:
        out += "\\midrule\n"
    for name, row in zip(names, rows):
        out += f"{name} & " + " & ".join(cell(c, r, again) for (c, r), again in zip(row, rerank)) + " \\\\\n"
    return out + "\\bottomrule\n\\end{tabular}\n"


NICKNAMES = {"KendallWithTiesOpt": "acc-t"}
ATTRS_SHOWN = ["lang", "level", "corr_fcn"]


def task_set_table(results: Sequence[Dict], task_attrs: Sequence[Dict[str, str]], average: Dict[str, float],
                   fmt: str = "text", which: str = "union", baselines: Optional[Set[str]] = None,
                   attrs: Sequence[str] = ATTRS_SHOWN, nicknames: Optional[Dict[str, str]] = None) -> str:
    """A task set's table as MTME's notebooks print it: ``Table(metrics=list(avg_corrs), initial_column=avg_corrs,
    initial_column_header='avg-corr', attr_list=['lang', 'level', 'corr_fcn'], nicknames={'KendallWithTiesOpt':
    'acc-t'}, which_metrics=which)`` -- the average column ranked by sorting (ties: the name, then as MTME)."""
    nick = NICKNAMES if nicknames is None else nicknames
    ordered = sorted((-c, m) for m, c in average.items())
    first: Column = {m: (-c, r + 1) for r, (c, m) in enumerate(ordered)}
    columns = [first] + [{m: (c, r) for m, c, r in zip(res["metrics"], res["correlations"], res["ranks"])}
                         for res in results]
    headers = [[f"{a}:", ""] + [nick.get(t[a], t[a]) for t in task_attrs] for a in attrs]
    headers.append(["metric", "avg-corr"] + [f"task{i}" for i in range(1, len(results) + 1)])
    metrics = list(average) or list(columns[1])
    return metrics_table(metrics, columns, headers, fmt, which, None, baselines)
