"""Self-contained HTML reports: one file, figures inline as SVG, no script, no network reference.

* :func:`corpus_report` -- the JSON of ``score-corpus --format json --all-pairs`` (with ``--confidence`` for
  intervals): per metric, the systems in significance clusters with their scores and 95 % intervals, the
  matrix of Holm-adjusted paired bootstrap p-values (:func:`significance_matrix`), and the scores with
  their intervals side by side -- "which systems are significantly better than which, and by how much";
* :func:`meta_report` -- the JSON of ``meta-eval matrix``: correlations with significance clusters, the
  metric x metric p-values, human against metric scores per system;
* :func:`simul_report` -- ``simul`` runs: quality against latency, and one sentence's delay staircase;
* :func:`compare_report` -- two systems (``evalpipe compare``): compare-mt's analyses.

Each figure carries the signature or the test's settings under it.  Pages print (colours kept).
"""
from __future__ import annotations

from html import escape
from typing import Any, Dict, List, Optional, Sequence

from evalpipe.errors import InputError, UsageError
from evalpipe.report import figures

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2em auto; max-width: 1100px;
       color: #222; padding: 0 1em; line-height: 1.4; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; } h2 { font-size: 1.2em; margin-top: 1.8em; border-bottom: 1px solid #ccc; }
.meta, .caption { color: #555; font-size: 0.9em; }
.caption code, .meta code { font-size: 0.95em; background: #f3f3f3; padding: 0 0.25em; word-break: break-all; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.92em; }
th, td { padding: 0.25em 0.7em; border-bottom: 1px solid #e3e3e3; text-align: right; }
th:first-child, td:first-child, td.system { text-align: left; }
tr.cluster-start td { border-top: 2px solid #555; }
figure { margin: 1em 0; page-break-inside: avoid; } figure svg { max-width: 100%; height: auto; }
table.matrix { font-size: 0.72em; -webkit-print-color-adjust: exact; print-color-adjust: exact; }
table.matrix td { min-width: 2.3em; height: 1.7em; padding: 0 0.15em; text-align: center; border: 1px solid #fff; }
table.matrix th { font-weight: normal; border: none; }
table.matrix th.column { writing-mode: vertical-rl; transform: rotate(180deg); text-align: left; padding: 0.4em 0; }
table.matrix th.row { text-align: right; padding-right: 0.5em; }
td.better { background: #8fd19e; } td.worse { background: #f2a3a3; } td.same { background: #f1f1f1; }
td.self { background: #fff; }
table.matrix td.cut-top { border-top: 2px solid #222; } table.matrix td.cut-left { border-left: 2px solid #222; }
@media print { body { margin: 0; max-width: none; } h2 { page-break-after: avoid; } }
"""


def _signature(doc: Dict[str, Any], metric: str) -> str:
    return next(r["signature"] for r in doc["results"] if r["metric"] == metric)


def _cluster_table(doc: Dict[str, Any], metric: str) -> str:
    pairs = doc["pairwise"][metric]
    rows = {r["system"]: r for r in figures.intervals(doc, metric)}
    names = figures.short_names(pairs["systems"])
    lines = ['<table><tr><th>cluster</th><th style="text-align: left">system</th><th>score</th><th>95 % interval</th>'
             "<th>significantly better than</th></tr>"]
    for k, (system, cluster) in enumerate(zip(pairs["systems"], pairs["clusters"])):
        row = rows[system]
        beaten = [s for j, s in enumerate(pairs["systems"]) if j > k and pairs["adjusted"][k][j] <= pairs["alpha"]]
        interval = f"[{row['low']:.2f}, {row['high']:.2f}]" if row["low"] != row["high"] else "—"
        start = ' class="cluster-start"' if k and cluster != pairs["clusters"][k - 1] else ""
        lines.append(f"<tr{start}><td>{cluster}</td><td class=\"system\" title=\"{escape(system)}\">{escape(names[system])}</td>"
                     f"<td>{row['score']:.2f}</td><td>{interval}</td><td>{len(beaten)} of {len(pairs['systems']) - 1}</td></tr>")
    return "\n".join(lines + ["</table>"])


RESULT_KEYS = ("system", "metric", "score", "signature", "ci")
PAIRWISE_KEYS = ("systems", "scores", "p_values", "adjusted", "alpha", "clusters", "trials")


def _check(doc: Dict[str, Any]) -> None:
    """A document a report can be drawn from, or an error saying what is missing."""
    results = doc.get("results") if isinstance(doc, dict) else None
    if not isinstance(results, list) or not results:
        raise InputError("expected a score-corpus JSON document with a non-empty \"results\" list")
    for i, result in enumerate(results, 1):
        _require(result, RESULT_KEYS, f"result {i}")
    if not doc.get("pairwise"):
        raise UsageError("a report needs the pairwise comparison of systems: score with --all-pairs (--report "
                         "implies it) and at least two systems")
    for metric in figures.metrics_of(doc):
        _require(doc["pairwise"].get(metric), PAIRWISE_KEYS, f"pairwise results of {metric}")


def significance_matrix(doc: Dict[str, Any], metric: str) -> str:
    """One metric's systems x systems table of Holm-adjusted paired bootstrap p-values, best first: green
    where the row system is significantly better than the column system, red where worse; thick lines
    between significance clusters; each cell's title gives both systems and the raw and adjusted p."""
    pairs = doc["pairwise"][metric]
    systems, clusters, alpha = pairs["systems"], pairs["clusters"], pairs["alpha"]
    names = figures.short_names(systems)
    lines = ['<table class="matrix"><tr><th></th>' +
             "".join(f'<th class="column">{escape(names[s])}</th>' for s in systems) + "</tr>"]
    for i, row in enumerate(systems):
        cells = []
        for j, column in enumerate(systems):
            p, raw = pairs["adjusted"][i][j], pairs["p_values"][i][j]
            kind = "self" if i == j else "same" if p > alpha else "better" if i < j else "worse"
            cut = " cut-top" * (i > 0 and clusters[i] != clusters[i - 1]) + \
                " cut-left" * (j > 0 and clusters[j] != clusters[j - 1])
            title = "" if i == j else (f' title="{escape(names[row])} vs {escape(names[column])}: adjusted p = '
                                       f'{p:.4g} (unadjusted {raw:.4g})"')
            shown = "" if i == j else f"{p:.2f}".lstrip("0") if p < 1 else "1"
            cells.append(f'<td class="{kind}{cut}"{title}>{shown}</td>')
        lines.append(f'<tr><th class="row">{escape(names[row])}</th>{"".join(cells)}</tr>')
    return "\n".join(lines + ["</table>"])


def corpus_report(doc: Dict[str, Any], title: str = "evalpipe: corpus scores") -> str:
    """The HTML page of a score-corpus JSON document with pairwise results (see the module docstring)."""
    _check(doc)
    test = doc.get("test") or {}
    parts: List[str] = [f"<h1>{escape(title)}</h1>",
                        f"<p class=\"meta\">{len({r['system'] for r in doc['results']})} systems, "
                        f"{doc.get('segments') or '?'} segments, references: "
                        f"{escape(', '.join(doc.get('references') or [])) or '—'}; evalpipe {escape(doc.get('evalpipe_version', ''))}</p>"]
    for metric in figures.metrics_of(doc):
        pairs = doc["pairwise"][metric]
        parts += [f"<h2>{escape(figures.label_of(doc, metric))}: which systems are significantly better</h2>",
                  f"<p class=\"caption\">Systems best first, grouped in significance clusters: a system starts a new "
                  f"cluster when a better system of the current cluster differs from it significantly. Paired bootstrap "
                  f"resampling ({pairs['trials']} resamples, seed {escape(str(test.get('seed')))}) between every pair of "
                  f"systems; p-values adjusted for the {len(pairs['systems']) * (len(pairs['systems']) - 1) // 2} "
                  f"comparisons by Holm's method, significant at adjusted p &le; {pairs['alpha']}.</p>",
                  _cluster_table(doc, metric),
                  "<figure>" + significance_matrix(doc, metric) +
                  f"<figcaption class=\"caption\">Row against column. Green: the row system is significantly better "
                  f"than the column system; red: worse; grey: no significant difference. Numbers: Holm-adjusted "
                  f"p-values (hover for the unadjusted ones). Thick lines: cluster boundaries.<br>Signature: "
                  f"<code>{escape(_signature(doc, metric))}</code></figcaption></figure>"]
    signatures = "".join(f"<br>{escape(figures.label_of(doc, m))}: <code>{escape(_signature(doc, m))}</code>"
                         for m in figures.metrics_of(doc))
    parts += ["<h2>Scores with 95 % bootstrap intervals</h2>",
              "<figure>" + figures.svg(figures.interval_figure, doc) +
              f"<figcaption class=\"caption\">Each system's score and its 95 % bootstrap interval "
              f"({escape(str(test.get('trials') or 'no'))} resamples), best first per metric.{signatures}"
              f"</figcaption></figure>"]
    return _page(title, parts)


def _page(title: str, parts: List[str]) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>\n" + "\n".join(parts) +
            "\n</body></html>\n")


def _require(doc: Any, keys: Sequence[str], what: str) -> None:
    missing = [k for k in keys if not isinstance(doc, dict) or k not in doc]
    if missing:
        raise InputError(f"{what}: expected the keys {', '.join(keys)}; missing {', '.join(missing)}")


META_KEYS = ("metrics", "correlations", "matrix", "ranks")


def metric_matrix(names: Sequence[str], sig: Sequence[Sequence[float]], threshold: float) -> str:
    """The metric x metric table of p-values (upper triangle; green where the row metric is significantly better)."""
    return ('<table class="matrix"><tr><th></th>' +
            "".join(f'<th class="column">{escape(n)}</th>' for n in names) + "</tr>" +
            "".join(f'<tr><th class="row">{escape(a)}</th>' + "".join(
                '<td class="self"></td>' if i >= j else
                f'<td class="{"better" if sig[i][j] <= threshold else "same"}" title="{escape(a)} better than '
                f'{escape(b)}: p = {sig[i][j]:.4g}">{sig[i][j]:.2f}</td>' for j, b in enumerate(names)) + "</tr>"
                for i, a in enumerate(names)) + "</table>")


def meta_report(doc: Dict[str, Any], title: str = "evalpipe: metrics against human judgments") -> str:
    """The HTML page of a ``meta-eval matrix`` JSON document: correlations with significance clusters,
    the metric x metric p-values, and (system level) human against metric scores per system."""
    _require(doc, META_KEYS, "meta-eval matrix JSON")
    names, sig, threshold = doc["metrics"], doc["matrix"], doc.get("threshold", 0.05)
    setting = (f"{escape(str(doc.get('statistic', '?')))}{' ' + escape(str(doc['variant'])) if 'variant' in doc else ''}"
               f" at the {escape(str(doc.get('level', '?')))} level, averaged by {escape(str(doc.get('average_by', '?')))}, "
               f"against {escape(str(doc.get('human', '?')))} scores of {len(doc.get('systems') or [])} systems")
    parts = [f"<h1>{escape(title)}</h1>",
             f"<p class=\"meta\">{escape(str(doc.get('test_set', '')))} {escape(str(doc.get('lp', '')))}: {setting}.</p>",
             "<h2>Correlation of each metric, with significance clusters</h2>",
             "<figure>" + figures.svg(figures.correlation_figure, doc) +
             f"<figcaption class=\"caption\">Metrics best first; the number in brackets is the significance cluster "
             f"(MTME's ranking: a metric starts a new cluster when a better metric of the current one beats it with "
             f"p &le; {threshold} in the PERM-BOTH permutation test, {escape(str(doc.get('trials', '?')))} "
             f"resamples).</figcaption></figure>",
             "<h2>Is the row metric better than the column metric?</h2>",
             "<figure>" + metric_matrix(names, sig, threshold) +
             f"<figcaption class=\"caption\">p-value of the test that the row metric correlates better than the "
             f"column metric (green: p &le; {threshold}).</figcaption></figure>"]
    if "human_scores" in doc:
        parts += ["<h2>Human against metric scores, one point per system</h2>",
                  "<figure>" + figures.svg(figures.scatter_figure, doc) + "</figure>"]
    return _page(title, parts)


SIMUL_KEYS = ("BLEU", "AL", "LAAL")


def simul_report(runs: Dict[str, Dict[str, Any]], instances: Optional[List[Dict[str, Any]]] = None,
                 sentence: int = 0, title: str = "evalpipe: simultaneous translation") -> str:
    """The HTML page of simultaneous runs (``simul run|evaluate -f json`` documents by label): quality
    against latency, every figure of every run, and with SimulEval ``instances`` one sentence's staircase."""
    for label, run in runs.items():
        _require(run, SIMUL_KEYS, f"simul JSON {label}")
    columns = ["BLEU", "chrF", "TER", "AL", "LAAL", "AP", "DAL", "sentences", "without_hypothesis"]
    shown = lambda v: "—" if v is None else f"{v:.2f}" if isinstance(v, float) else escape(str(v))  # noqa: E731
    table = ("<table><tr><th>run</th>" + "".join(f"<th>{c}</th>" for c in columns) + "</tr>" +
             "".join(f'<tr><td class="system">{escape(label)}</td>' + "".join(f"<td>{shown(run.get(c))}</td>"
                                                                            for c in columns) + "</tr>"
                     for label, run in runs.items()) + "</table>")
    first = next(iter(runs.values()))
    signatures = "".join(f"<br>{escape(k)}: <code>{escape(v)}</code>" for k, v in (first.get("signatures") or {}).items())
    parts = [f"<h1>{escape(title)}</h1>",
             f"<p class=\"meta\">{len(runs)} run(s); latency convention {escape(str(first.get('convention', '?')))}; "
             f"latency is the mean over sentences with a hypothesis.</p>",
             "<h2>Quality against latency</h2>",
             "<figure>" + figures.svg(figures.quality_latency_figure, runs) +
             f"<figcaption class=\"caption\">One point per run.{signatures}</figcaption></figure>", table]
    if instances:
        if not 0 <= sentence < len(instances):
            raise UsageError(f"--sentence: expected 0 to {len(instances) - 1}, got {sentence}")
        record = instances[sentence]
        _require(record, ("delays", "source_length"), f"instance {sentence}")
        parts += [f"<h2>Sentence {sentence}: when each target word was written</h2>",
                  "<figure>" + figures.svg(figures.staircase_figure, record) +
                  f"<figcaption class=\"caption\">Reference: {escape(str(record.get('reference', '—')))}</figcaption></figure>"]
    return _page(title, parts)


COMPARE_KEYS = ("systems", "bleu", "sentence_bleu", "length", "word_accuracy", "ngrams", "examples")


def compare_report(doc: Dict[str, Any], title: str = "evalpipe: two systems compared") -> str:
    """The HTML page of an ``evalpipe compare`` JSON document of two systems written before it held compare-mt's
    analyses of any number of systems (``compare_mt``; those documents get
    :func:`evalpipe.report.compare_many.compare_page`'s page)."""
    _require(doc, COMPARE_KEYS, "compare JSON")
    a, b = (escape(n) for n in doc["systems"])
    wins = sum(y > x for x, y in zip(*doc["sentence_bleu"]))
    losses = sum(y < x for x, y in zip(*doc["sentence_bleu"]))
    parts = [f"<h1>{escape(title)}</h1>",
             f"<p class=\"meta\">{a}: BLEU {doc['bleu'][0]:.2f}; {b}: BLEU {doc['bleu'][1]:.2f} (compare-mt's corpus "
             f"BLEU on space-split tokens); {doc['sentences']} sentences, {b} better on {wins}, worse on {losses}. "
             f"Every number equals compare-mt 0.2.10's on the same files.</p>",
             "<h2>Sentence scores</h2>", "<figure>" + figures.svg(figures.distribution_figure, doc) + "</figure>",
             "<h2>By reference length and by word frequency</h2>",
             "<figure>" + figures.svg(figures.bucket_figure, doc) +
             "<figcaption class=\"caption\">Left: compare-mt's BLEU of the sentences in each reference-length bucket "
             "(sentences per bucket: " + ", ".join(f"{escape(lb)}: {n}" for lb, n in zip(doc["length"]["buckets"],
                                                                                          doc["length"]["sentences"])) +
             "). Right: F-measure of the words in each bucket of frequency in the reference.</figcaption></figure>"]
    for key, who in (("system1", a), ("system2", b)):
        rows = doc["ngrams"][key]
        parts += [f"<h2>N-grams {who} matches far more often</h2>",
                  "<table><tr><th>n-gram</th><th>share</th><th>matches " + a + "</th><th>matches " + b + "</th></tr>" +
                  "".join(f'<tr><td class="system">{escape(g)}</td><td>{share:.3f}</td><td>{m1}</td><td>{m2}</td></tr>'
                          for g, share, m1, m2 in rows) + "</table>"]
    for key, who in (("system1", a), ("system2", b)):
        parts += [f"<h2>Sentences where {who} is furthest ahead</h2>", "<table><tr><th>#</th><th>sentence BLEU</th>"
                  "<th style=\"text-align: left\">reference / outputs</th></tr>" +
                  "".join(f'<tr><td>{e["index"]}</td><td>{e["sentbleu"][0]:.1f} / {e["sentbleu"][1]:.1f}</td>'
                          f'<td class="system">{escape(e["reference"])}<br><b>{a}:</b> {escape(e["outputs"][0])}<br>'
                          f'<b>{b}:</b> {escape(e["outputs"][1])}</td></tr>' for e in doc["examples"][key]) + "</table>"]
    for table in doc.get("metric_buckets", []):
        parts += metric_buckets_section(table, doc["systems"])
    return _page(title, parts)


def metric_buckets_section(table: Dict[str, Any], names: List[str]) -> List[str]:
    """A ``compare -m`` metric's buckets: each system's score and 95 % interval a bucket; a cell green or red where
    the system is significantly better or worse than the first (Holm-adjusted over the buckets), in the metric's
    direction."""
    direction = "higher" if table["higher_is_better"] else "lower"
    head = "".join(f"<th>{escape(n)}</th>" for n in names)
    every = table["all"]
    columns = [{key: [every[key][k]] for key in ("score", "low", "high", "verdict")} | {"p_holm": [every["p"][k]]}
               for k in range(len(names))]
    rows = [_bucket_row("all sentences", sum(table["sentences"]), columns, 0)]
    rows += [_bucket_row(label, table["sentences"][i], table["systems"], i) for i, label in enumerate(table["buckets"])]
    return [f"<h2>{escape(table['metric'])} by {escape(str(table['bucket_by']))}</h2>",
            f"<p class=\"caption\">{escape(table['metric'])} ({direction} is better) of each bucket's sentences, its "
            f"95 % bootstrap interval ({table['trials']} resamples) and, against {escape(names[0])}, the paired "
            f"bootstrap p-value Holm-adjusted over the buckets (over all sentences: unadjusted): green significantly "
            f"better, red significantly worse (alpha {table['alpha']}); no interval or test under 10 sentences.</p>",
            f"<table><tr><th>bucket</th><th>sentences</th>{head}</tr>" + "".join(rows) + "</table>",
            "<figure>" + figures.svg(figures.grouped_bar_figure, table["buckets"],
                                     [c["score"] for c in table["systems"]], names, table["metric"],
                                     str(table["bucket_by"]), [c["low"] for c in table["systems"]],
                                     [c["high"] for c in table["systems"]]) +
            "<figcaption class=\"caption\">The table's scores as bars, their 95 % intervals as whiskers (none "
            "under 10 sentences).</figcaption></figure>"]


def _bucket_row(label: Any, sentences: int, systems: List[Dict[str, list]], i: int) -> str:
    """One row of a metric's bucket table: each system's cell of bucket ``i``."""
    cells = []
    for k, column in enumerate(systems):
        score, low = column["score"][i], column["low"][i]
        if score is None:
            cells.append("<td>-</td>")
            continue
        shown = f"{score:.2f}" + (f" [{low:.2f}, {column['high'][i]:.2f}]" if low is not None else "")
        verdict = column["verdict"][i] if k else None
        if k and column["p_holm"][i] is not None:
            shown += f" p={column['p_holm'][i]:.3f}"
        css = f' class="{verdict}"' if verdict in ("better", "worse") else ""
        cells.append(f"<td{css}>{shown}</td>")
    return f'<tr><td class="system">{escape(str(label))}</td><td>{sentences}</td>' + "".join(cells) + "</tr>"


MBR_KEYS = ("metric", "signature", "segments")


def _mbr_decoder(doc: Dict[str, Any]) -> str:
    decoder = doc.get("decoder") or {}
    name = decoder.get("name", "aggregate" if doc.get("aggregate") else "mbr")
    said = {"mbr": "expected over the pseudo-references", "aggregate": "reference aggregation",
            "rerank": "each candidate's own score"}.get(name, f"{name} MBR")
    selector = doc.get("selector") or {}
    if selector.get("n", 1) > 1 or selector.get("name", "nbest") != "nbest":
        said += f"; {selector.get('name')} {selector.get('n', 1)}-best"
    return said


def mbr_report(doc: Dict[str, Any], title: str = "evalpipe: minimum Bayes risk selection") -> str:
    """The HTML page of an ``evalpipe mbr`` JSON document: how often each system was chosen and the
    distribution of expected utilities."""
    _require(doc, MBR_KEYS, "mbr JSON")
    segments = doc["segments"]
    sizes = sorted({len(s["utilities"]) for s in segments})
    parts = [f"<h1>{escape(title)}</h1>",
             f"<p class=\"meta\">{len(segments)} segments, {sizes[0] if len(sizes) == 1 else f'{sizes[0]}-{sizes[-1]}'} "
             f"candidates each; utility <code>{escape(doc['metric'])}</code> "
             f"({escape(_mbr_decoder(doc))}; ties: "
             f"{escape(str(doc.get('ties', 'first')))}); signature <code>{escape(doc['signature'])}</code></p>",
             "<figure>" + figures.svg(figures.mbr_figure, doc) + "</figure>"]
    counts = doc.get("chosen_per_system")
    if counts:
        total = sum(counts.values()) or 1
        shown = figures.short_names(list(counts))
        parts += ["<h2>How often each system was chosen</h2><table><tr><th>system</th><th>segments</th><th>share</th></tr>" +
                  "".join(f'<tr><td class="system" title="{escape(s)}">{escape(shown[s])}</td><td>{n}</td>'
                          f'<td>{100 * n / total:.1f} %</td></tr>'
                          for s, n in sorted(counts.items(), key=lambda kv: -kv[1])) + "</table>"]
    return _page(title, parts)
