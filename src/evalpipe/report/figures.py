"""The figures of a corpus-scoring report, drawn with matplotlib (``pip install 'evalpipe[report]'``).

Each figure is built from the JSON a command writes (``score-corpus``, ``meta-eval matrix``, ``simul``;
SimulEval instance records for the staircase), never from anything else, so what a figure shows is what
the JSON says:

* :func:`interval_figure` -- one panel per metric, the systems best first (the metric's own direction:
  lower is better for TER and latency), each score with its 95 % bootstrap interval;
* :func:`correlation_figure` and :func:`scatter_figure` -- meta-evaluation (``meta-eval matrix`` JSON):
  each metric's correlation with its significance cluster, and human against metric scores per system;
* :func:`distribution_figure` and :func:`bucket_figure` -- two systems (``evalpipe compare`` JSON): sentence
  score histograms and their difference, BLEU by length and word F-measure by frequency (compare-mt's);
* :func:`quality_latency_figure` and :func:`staircase_figure` -- simultaneous runs (``simul`` JSON):
  quality against latency per run, and one sentence's target words against the source read.

:func:`render` turns a figure into SVG text (for inline HTML) or writes it as PNG, SVG or PDF.  (The
significance matrix is an HTML table, :func:`evalpipe.report.page.significance_matrix`: a table of
numbers that a reader can hover over, and fast to draw.)
"""
from __future__ import annotations

import logging

import io
import os
from typing import Any, Dict, List, Optional, Sequence

from evalpipe.errors import MissingDependency, UsageError

FORMATS = ("svg", "png", "pdf")


def pyplot() -> Any:
    """matplotlib's pyplot on the non-interactive Agg backend, or a :class:`MissingDependency` naming the extra."""
    try:
        import matplotlib
    except ImportError:
        raise MissingDependency("reports and plots need matplotlib: pip install 'evalpipe[report]'") from None
    matplotlib.use("Agg")
    matplotlib.rcParams.update({"svg.fonttype": "none", "font.size": 9, "svg.hashsalt": "evalpipe"})
    import matplotlib.pyplot as plt

    return plt


def available() -> bool:
    """Whether matplotlib can be imported (reports draw their figures with it)."""
    try:
        pyplot()
    except MissingDependency:
        return False
    return True


MISSING = ("<p class=\"note\">Figure left out: matplotlib is not installed "
           "(<code>pip install 'evalpipe[report]'</code> draws it).</p>")
_warned: List[bool] = []


def svg(build: Any, *args: Any) -> str:
    """``render(build(*args))`` -- a figure as inline SVG -- or, without matplotlib, a note in its place (and one
    warning on stderr per process): a report is written with its tables either way."""
    if available():
        return render(build(*args))
    if not _warned:
        _warned.append(True)
        logging.getLogger(__name__).warning("figures left out of the report: matplotlib is not installed "
                                            "(pip install 'evalpipe[report]')")
    return MISSING


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


def label_of(doc: Dict[str, Any], metric: str) -> str:
    """What the page calls a metric: its label in the results (sacrebleu's name: BLEU, chrF2++), else its name."""
    return next((r.get("label") or metric for r in doc["results"] if r["metric"] == metric), metric)


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
        ax.set_title(label_of(doc, metric))
        ax.grid(axis="x", color="#dddddd", linewidth=0.6)
        ax.set_axisbelow(True)
    return fig


def correlation_figure(doc: Dict[str, Any]) -> Any:
    """Meta-evaluation: each metric's correlation with the human scores, best first, coloured by
    significance cluster (``meta-eval matrix`` JSON: ``metrics``, ``correlations``, ``ranks``)."""
    plt = pyplot()
    names, values, ranks = doc["metrics"], doc["correlations"], doc["ranks"]
    palette = ["#1f5f99", "#6a9fd0", "#a9c8e8", "#d2e2f2"]
    labels = 0.2 + 0.075 * max(map(len, names))
    height = 0.9 + 0.26 * len(names)
    fig, ax = plt.subplots(figsize=(4.2 + labels, height))
    fig.subplots_adjust(left=labels / (4.2 + labels), right=0.95, bottom=0.5 / height, top=1 - 0.35 / height)
    y = list(range(len(names)))[::-1]
    ax.barh(y, values, color=[palette[min(r - 1, len(palette) - 1)] for r in ranks])
    for yy, value, rank in zip(y, values, ranks):
        ax.text(value, yy, f" {value:.3f} ({rank})", va="center", fontsize=7.5)
    ax.set_yticks(y, names)
    ax.set_xlabel(f"{doc.get('statistic', 'correlation')} with {doc.get('human', 'human')} ({doc.get('level', '')} level)")
    ax.set_xlim(min(0.0, min(values)), max(values) * 1.25 if max(values) > 0 else 1.0)
    ax.grid(axis="x", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    return fig


def scatter_figure(doc: Dict[str, Any]) -> Any:
    """Meta-evaluation at the system level: one panel per metric, human score against metric score, one
    point per system (systems without a human score left out), with the correlation in the title."""
    plt = pyplot()
    names = doc["metrics"]
    columns = min(4, len(names))
    rows = -(-len(names) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(2.9 * columns, 2.6 * rows), squeeze=False)
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.12 / rows, top=1 - 0.3 / rows, hspace=0.55, wspace=0.35)
    human = doc["human_scores"]
    for ax, name, corr in zip(axes.flat, names, doc["correlations"]):
        pairs = [(m, h) for m, h in zip(doc["metric_scores"][name], human) if h is not None]
        ax.scatter([m for m, _ in pairs], [h for _, h in pairs], s=14, color="#1f5f99")
        ax.set_title(f"{name}\n{doc.get('statistic', 'r')} = {corr:.3f}", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(color="#eeeeee", linewidth=0.6)
    for ax in list(axes.flat)[len(names):]:
        ax.set_visible(False)
    fig.supylabel(f"human ({doc.get('human', '')})", fontsize=8)
    return fig


def quality_latency_figure(runs: Dict[str, Dict[str, Any]], quality: str = "BLEU",
                           latencies: Sequence[str] = ("AL", "LAAL")) -> Any:
    """Simultaneous runs: quality against each latency metric, one labelled point per run."""
    plt = pyplot()
    fig, axes = plt.subplots(1, len(latencies), figsize=(4.2 * len(latencies), 3.4), squeeze=False)
    fig.subplots_adjust(left=0.08, right=0.97, bottom=0.15, top=0.9, wspace=0.3)
    for ax, latency in zip(axes[0], latencies):
        shown = [(label, run[latency], run[quality]) for label, run in runs.items() if run.get(latency) is not None]
        ax.plot([x for _, x, _ in sorted(shown, key=lambda t: t[1])], [y for _, _, y in sorted(shown, key=lambda t: t[1])],
                "o-", color="#1f5f99", markersize=5, linewidth=1)
        for label, x, y in shown:
            ax.annotate(label, (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7.5)
        ax.set_xlabel(f"{latency} (lower is better)")
        ax.set_ylabel(quality)
        ax.grid(color="#eeeeee", linewidth=0.6)
    return fig


def staircase_figure(instance: Dict[str, Any]) -> Any:
    """One sentence of a simultaneous run: target words written (y) against source read (x), as a
    staircase; the words are the y labels when there are few enough."""
    plt = pyplot()
    delays = list(instance["delays"])
    words = str(instance.get("prediction", "")).split()
    height = max(2.8, 0.9 + 0.2 * min(len(delays), 40))
    fig, ax = plt.subplots(figsize=(6.4, height))
    fig.subplots_adjust(left=0.22, right=0.97, bottom=0.5 / height + 0.05, top=1 - 0.35 / height)
    ax.step([0] + delays, range(len(delays) + 1), where="post", color="#1f5f99")
    ax.plot(delays, range(1, len(delays) + 1), "o", color="#1f5f99", markersize=3)
    if len(words) == len(delays) and len(words) <= 40:
        ax.set_yticks(range(1, len(words) + 1), words, fontsize=7)
    ax.set_xlabel(f"source read (of {instance.get('source_length')})")
    ax.set_ylabel("target words written")
    ax.set_title(f"sentence {instance.get('index', '')}", fontsize=9)
    ax.grid(color="#eeeeee", linewidth=0.6)
    return fig


def distribution_figure(doc: Dict[str, Any]) -> Any:
    """Two systems (``evalpipe compare`` JSON): each one's sentence-BLEU histogram, and the histogram of the
    per-sentence difference (system 2 - system 1)."""
    plt = pyplot()
    (a, b), names = doc["sentence_bleu"], doc["systems"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.2, 3.3))
    fig.subplots_adjust(left=0.07, right=0.98, bottom=0.16, top=0.86, wspace=0.25)
    bins = [10 * k for k in range(11)]
    left.hist([a, b], bins=bins, label=names, color=["#1f5f99", "#e0883a"])
    left.set_xlabel("sentence BLEU (compare-mt's sentbleu)")
    left.set_ylabel("sentences")
    fig.legend(*left.get_legend_handles_labels(), loc="upper center", ncol=2, fontsize=7.5, frameon=False)
    right.hist([y - x for x, y in zip(a, b)], bins=21, color="#777777")
    right.axvline(0, color="#222222", linewidth=0.8)
    right.set_xlabel(f"{names[1]} - {names[0]}, per sentence")
    for ax in (left, right):
        ax.grid(axis="y", color="#eeeeee", linewidth=0.6)
        ax.set_axisbelow(True)
    return fig


def bucket_figure(doc: Dict[str, Any]) -> Any:
    """Each system's BLEU by reference-length bucket, and word F-measure by reference-frequency bucket."""
    plt = pyplot()
    names = doc["systems"]
    rows = -(-len(names) // 6)  # legend rows, six names a row
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.2, 3.4 + 0.22 * (rows - 1)))
    fig.subplots_adjust(left=0.07, right=0.98, bottom=0.2, top=0.86 - 0.055 * (rows - 1), wspace=0.25)
    panels = ((left, doc["length"]["buckets"], doc["length"]["bleu"], "BLEU", "reference length (words)"),
              (right, doc["word_accuracy"]["buckets"], [[row[5] for row in rows] for rows in doc["word_accuracy"]["systems"]],
               "word F-measure", "frequency in the reference"))
    for ax, labels, values, ylabel, xlabel in panels:
        _bars(plt, ax, labels, values, names, ylabel, xlabel)
    fig.legend(*left.get_legend_handles_labels(), loc="upper center", ncol=min(len(names), 6), fontsize=7.5,
               frameon=False)
    return fig


def _bars(plt: Any, ax: Any, labels: List[str], values: List[list], names: List[str], ylabel: str, xlabel: str,
          low: Optional[List[list]] = None, high: Optional[List[list]] = None) -> None:
    """Grouped bars, a group a bucket and a bar a system (``values[system][bucket]``; None: no bar), with the
    interval ``low``..``high`` as an error bar where given."""
    width = 0.8 / len(names)
    colors = ["#1f5f99", "#e0883a"] if len(names) <= 2 else [plt.get_cmap("tab10")(k % 10) for k in range(len(names))]
    x = range(len(labels))
    for k, (name, color) in enumerate(zip(names, colors)):
        heights = [float("nan") if v is None else v for v in values[k]]
        where = [v + (k - (len(names) - 1) / 2) * width for v in x]
        ax.bar(where, heights, width=width, label=name, color=color)
        if low is not None:
            spans = [(h - lo, hi - h) if lo is not None else (float("nan"), float("nan"))
                     for h, lo, hi in zip(heights, low[k], high[k])]
            ax.errorbar(where, heights, yerr=[[a for a, _ in spans], [b for _, b in spans]], fmt="none",
                        ecolor="#333333", elinewidth=0.8, capsize=2)
    ax.set_xticks(list(x), labels, fontsize=7, rotation=30, ha="right", rotation_mode="anchor")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", color="#eeeeee", linewidth=0.6)
    ax.set_axisbelow(True)


def grouped_bar_figure(labels: List[str], values: List[list], names: List[str], ylabel: str, xlabel: str,
                       low: Optional[List[list]] = None, high: Optional[List[list]] = None) -> Any:
    """One analysis as grouped bars (:func:`_bars`): a bucket a group, a system a colour, intervals where given."""
    plt = pyplot()
    rows = -(-len(names) // 6)
    fig, ax = plt.subplots(figsize=(6.4, 3.2 + 0.22 * (rows - 1)))
    fig.subplots_adjust(left=0.12, right=0.98, bottom=0.22, top=0.84 - 0.055 * (rows - 1))
    _bars(plt, ax, labels, values, names, ylabel, xlabel, low, high)
    fig.legend(*ax.get_legend_handles_labels(), loc="upper center", ncol=min(len(names), 6), fontsize=7.5,
               frameon=False)
    return fig


def plot_format(path: str) -> str:
    """The format a ``--plot`` file's name asks for (its suffix), or a :class:`UsageError` naming the ones there are."""
    fmt = os.path.splitext(path)[1].lstrip(".").lower()
    if fmt not in FORMATS:
        raise UsageError(f"--plot: expected a file ending in .{', .'.join(FORMATS)}, got {path!r}")
    return fmt


def render(fig: Any, fmt: str = "svg", path: Optional[str] = None) -> str:
    """The figure as SVG text (``fmt="svg"`` without ``path``), or written to ``path`` in ``fmt``."""
    if fmt not in FORMATS:
        raise UsageError(f"expected a plot format among {', '.join(FORMATS)}, got {fmt!r}")
    plt = pyplot()
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt, metadata={"Date": None} if fmt in ("svg", "pdf") else None)
    plt.close(fig)
    if path is not None:
        from evalpipe.corpus import write_atomically

        write_atomically(path, buffer.getvalue())
        return path
    text = buffer.getvalue().decode("utf-8")
    return text[text.index("<svg"):]  # without the XML prolog, for inline HTML


def mbr_figure(doc: Dict[str, Any]) -> Any:
    """``evalpipe mbr`` JSON: how often each system was chosen (left, with system files), and the expected
    utilities of the chosen candidates beside those of every candidate (right)."""
    plt = pyplot()
    counts = doc.get("chosen_per_system")
    fig, axes = plt.subplots(1, 2 if counts else 1, figsize=(9.2 if counts else 5.2, 3.6), squeeze=False)
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.32 if counts else 0.16, top=0.9, wspace=0.28)
    ax = axes[0][-1]
    chosen = [s["utilities"][s["choice"]] for s in doc["segments"]]
    every = [u for s in doc["segments"] for u in s["utilities"] if u is not None]  # (None: pruned, undefined)
    dropped = sum(u is None for s in doc["segments"] for u in s["utilities"])
    ax.hist([every, chosen], bins=20, density=True,
            label=[f"every candidate{f' left (pruned: {dropped:,})' if dropped else ''}", "the chosen one"],
            color=["#bbbbbb", "#1f5f99"])
    ax.set_xlabel(f"expected utility ({doc['metric']}{', aggregated' if doc.get('aggregate') else ''})")
    ax.set_ylabel("share of candidates (density)")
    ax.legend(fontsize=7.5, frameon=False)
    if counts:
        left = axes[0][0]
        names = short_names(list(counts))
        order = sorted(counts, key=lambda s: -counts[s])
        left.bar(range(len(order)), [counts[s] for s in order], color="#1f5f99")
        left.set_xticks(list(range(len(order))), [names[s] for s in order], fontsize=7, rotation=40, ha="right",
                        rotation_mode="anchor")
        left.set_ylabel("segments where it was chosen")
    for ax in axes[0]:
        ax.grid(axis="y", color="#eeeeee", linewidth=0.6)
        ax.set_axisbelow(True)
    return fig
