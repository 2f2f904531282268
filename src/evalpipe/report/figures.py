"""The figures of a corpus-scoring report, drawn with matplotlib (``pip install 'evalpipe[report]'``).

Each figure is built from the JSON document ``score-corpus --format json`` writes (see
:mod:`evalpipe.scoring.results`), never from anything else, so what a figure shows is what the JSON
says:

* :func:`interval_figure` -- one panel per metric, the systems best first (the metric's own direction:
  lower is better for TER and latency), each score with its 95 % bootstrap interval;

:func:`render` turns a figure into SVG text (for inline HTML) or writes it as PNG, SVG or PDF.  (The
significance matrix is an HTML table, :func:`evalpipe.report.page.significance_matrix`: a table of
numbers that a reader can hover over, and fast to draw.)
"""
from __future__ import annotations

import io
import os
from typing import Any, Dict, List, Optional

from evalpipe.errors import UsageError

FORMATS = ("svg", "png", "pdf")


def pyplot() -> Any:
    """matplotlib's pyplot on the non-interactive Agg backend, or a :class:`UsageError` naming the extra."""
    try:
        import matplotlib
    except ImportError:
        raise UsageError("reports and plots need matplotlib: pip install 'evalpipe[report]'") from None
    matplotlib.use("Agg")
    matplotlib.rcParams.update({"svg.fonttype": "none", "font.size": 9, "svg.hashsalt": "evalpipe"})
    import matplotlib.pyplot as plt

    return plt


def intervals(doc: Dict[str, Any], metric: str) -> List[Dict[str, Any]]:
    """One metric's results best first: ``system``, ``score``, ``low``, ``high`` (the interval; the score
    itself when the document has none)."""
    rows = [r for r in doc["results"] if r["metric"] == metric]
    rows.sort(key=lambda r: -r["score"] if r.get("higher_is_better", True) else r["score"])
    return [{"system": r["system"], "score": r["score"], "low": (r["ci"] or [r["score"]])[0],
             "high": (r["ci"] or [None, r["score"]])[1]} for r in rows]


def short_names(systems: List[str]) -> Dict[str, str]:
    """Display names: system files named by path lose their common folder and common extension."""
    if len(systems) < 2 or not all("/" in s for s in systems):
        return {s: s for s in systems}
    folder = os.path.commonpath([os.path.dirname(s) for s in systems])
    names = {s: os.path.relpath(s, folder) if folder else s for s in systems}
    extensions = {os.path.splitext(n)[1] for n in names.values()}
    if len(extensions) == 1 and "" not in extensions:
        cut = len(extensions.pop())
        names = {s: n[:-cut] for s, n in names.items()}
    return names if len(set(names.values())) == len(names) else {s: s for s in systems}


def metrics_of(doc: Dict[str, Any]) -> List[str]:
    return list(dict.fromkeys(r["metric"] for r in doc["results"]))


def interval_figure(doc: Dict[str, Any]) -> Any:
    """Scores with their 95 % bootstrap intervals, one panel per metric, systems best first."""
    plt = pyplot()
    metrics = metrics_of(doc)
    names = short_names(list(dict.fromkeys(r["system"] for r in doc["results"])))
    labels = 0.2 + 0.075 * max(map(len, names.values()))  # inches the longest name takes
    panel, height = 3.0 + labels, 0.9 + 0.26 * len(names)
    fig, axes = plt.subplots(1, len(metrics), figsize=(panel * len(metrics), height), squeeze=False)
    fig.subplots_adjust(left=labels / (panel * len(metrics)), right=1 - 0.2 / (panel * len(metrics)),
                        bottom=0.45 / height, top=1 - 0.35 / height, wspace=labels / 3.0)
    for ax, metric in zip(axes[0], metrics):
        rows = intervals(doc, metric)
        y = list(range(len(rows)))[::-1]
        scores = [r["score"] for r in rows]
        errors = [[r["score"] - r["low"] for r in rows], [r["high"] - r["score"] for r in rows]]
        ax.errorbar(scores, y, xerr=errors, fmt="o", color="#1f5f99", ecolor="#7fa7cc", capsize=3, markersize=4)
        ax.set_yticks(y, [names[r["system"]] for r in rows])
        ax.set_title(metric)
        ax.grid(axis="x", color="#dddddd", linewidth=0.6)
        ax.set_axisbelow(True)
    return fig


def render(fig: Any, fmt: str = "svg", path: Optional[str] = None) -> str:
    """The figure as SVG text (``fmt="svg"`` without ``path``), or written to ``path`` in ``fmt``."""
    if fmt not in FORMATS:
        raise UsageError(f"expected a plot format among {', '.join(FORMATS)}, got {fmt!r}")
    plt = pyplot()
    buffer = io.BytesIO() if path is None else path
    fig.savefig(buffer, format=fmt, metadata={"Date": None} if fmt in ("svg", "pdf") else None)
    plt.close(fig)
    if path is not None:
        return path
    text = buffer.getvalue().decode("utf-8")
    return text[text.index("<svg"):]  # without the XML prolog, for inline HTML
