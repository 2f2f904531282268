"""The HTML page of ``evalpipe compare`` with any number of systems (its ``kind: compare-mt`` JSON): compare-mt's
analyses as tables and a figure, the n-grams and sentences of each pair compared, and each ``-m`` metric's
buckets (:func:`evalpipe.report.page.metric_buckets_section`).  Undefined cells show ``-``."""
from __future__ import annotations

from html import escape
from typing import Any, Dict, List, Optional

from evalpipe.report import figures
from evalpipe.report.page import _page, _require, compare_report, metric_buckets_section
from evalpipe.scoring.compare_words import ACCURACY

KEYS = ("systems", "bleu", "length_ratio", "word_accuracy", "length", "length_difference", "sentence_bleu")


def _num(x: Optional[float], digits: int = 2) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _table(head: List[str], rows: List[List[str]]) -> str:
    return ("<table><tr>" + "".join(h if h.startswith("<th") else f"<th>{escape(h)}</th>" for h in head) + "</tr>"
            + "".join("<tr>" + "".join(cell if cell.startswith("<td") else f"<td>{cell}</td>" for cell in row)
                      + "</tr>" for row in rows) + "</table>")


def _scores(doc: Dict[str, Any]) -> str:
    ratio, boot = doc["length_ratio"], doc.get("bleu_bootstrap")
    head = ["system", "BLEU (compare-mt)"] + (["95 % interval"] if boot else []) + ["length ratio", "output words"]
    rows = []
    for k, name in enumerate(doc["systems"]):
        row = [f'<td class="system">{escape(name)}</td>', _num(doc["bleu"][k])]
        if boot:
            row.append(f"[{_num(boot['lower'][k])}, {_num(boot['upper'][k])}]")
        rows.append(row + [_num(ratio["ratio"][k], 4), str(ratio["output_words"][k])])
    out = _table(head, rows)
    if boot:
        out += _wins(boot, doc["systems"], "BLEU", "higher")
    for found in doc.get("metric_bootstrap", []):
        direction = "higher" if found["higher_is_better"] else "lower"
        out += _table(["system", f"{found['metric']} ({direction} is better)", "95 % interval"], [
            [f'<td class="system">{escape(name)}</td>', _num(found["scores"][k]),
             f"[{_num(found['lower'][k])}, {_num(found['upper'][k])}]"] for k, name in enumerate(doc["systems"])])
        out += _wins(found, doc["systems"], found["metric"], direction)
    return out


def _wins(boot: Dict[str, Any], names: List[str], metric: str, direction: str) -> str:
    """The paired bootstrap's win shares, row system against column system, green over 95 %."""
    share = {}
    for p in boot["pairs"]:
        i, j = p["systems"]
        share[(i, j)], share[(j, i)] = p["wins"], p["losses"]
    cells = []
    for i, name in enumerate(names):
        row = [f'<td class="system">{escape(name)}</td>']
        for j in range(len(names)):
            won = share.get((i, j))
            css = ' class="better"' if won is not None and 1 - won < 0.05 else ""
            row.append(f"<td{css}>{'-' if won is None else f'{won:.1%}'}</td>")
        cells.append("<tr>" + "".join(row) + "</tr>")
    return (f"<p class=\"caption\">compare-mt's paired bootstrap ({boot['samples']} resamples of "
            f"{boot['sample_ratio']:.0%} of the sentences, seed {boot['seed']}): the share of resamples where the "
            f"row system's {escape(metric)} is better ({direction}) than the column system's; green where it is "
            f"over 95 % (compare-mt's s1&gt;s2).</p><table><tr><th></th>"
            + "".join(f"<th>{escape(n)}</th>" for n in names) + "</tr>" + "".join(cells) + "</table>")


def _buckets(doc: Dict[str, Any]) -> str:
    """compare-mt's two default tables of sentence counts, each with its figure."""
    names = doc["systems"]
    out = ""
    for table, what, caption in (
            (doc["length_difference"], "len(output) - len(reference)",
             "Sentences counted by how much longer (or shorter) each output is than its reference, in words."),
            (doc["sentence_bleu"], "sentence BLEU", "Sentences counted by their sentence BLEU (compare-mt's "
                                                    "sentbleu).")):
        out += (_table([what] + names, [[f'<td class="system">{escape(label)}</td>'] +
                                        [str(column[i]) for column in table["sentences"]]
                                        for i, label in enumerate(table["buckets"])])
                + f"<p class=\"caption\">{escape(caption)}</p>"
                + "<figure>" + figures.svg(figures.grouped_bar_figure, table["buckets"], table["sentences"], names,
                                           "sentences", what) + "</figure>")
    return out


def _asked_sentence_buckets(doc: Dict[str, Any]) -> List[str]:
    """The sentence-bucket tables asked with settings: a count, or the measure (``-`` for a bucket of none)."""
    names, parts = doc["systems"], []
    for table in doc.get("sentence_buckets", []):
        counted = table["settings"]["statistic"] == "count"
        rows = [[f'<td class="system">{escape(label)}</td>'] + [
            str(table["values"][k][i]) if counted else _num(table["values"][k][i], 4) + (
                f" ({table['sentences'][k][i]})" if table["sentences"][k][i] else "") for k in range(len(names))]
            for i, label in enumerate(table["buckets"])]
        parts += [f"<h3>{escape(table['title'])}</h3>", _table([table["key"]] + names, rows),
                  "<figure>" + figures.svg(figures.grouped_bar_figure, table["buckets"], table["values"], names,
                                           table["title"].split("statistic type: ")[-1], table["key"]) + "</figure>"]
        if not counted:
            parts.append("<p class=\"caption\">Each cell: the statistic of the system's sentences in the bucket "
                         "(how many, in brackets).</p>")
    return parts


def _word_tables(doc: Dict[str, Any]) -> List[str]:
    """The word-accuracy analyses asked with settings, and the source words' recall."""
    names, parts = doc["systems"], []
    asked = [(t, "words") for t in doc.get("word_buckets", [])]
    asked += [(doc["source_words"], "source words")] if doc.get("source_words") else []
    for table, what in asked:
        for kind in table["settings"]["accuracy"].split("+"):
            column, needs, title = ACCURACY[kind]
            rows = [[f'<td class="system">{escape(label)}</td>', str(table["systems"][0][i][1])] + [
                _num(rows[i][column], 4) if all(rows[i][n] for n in needs) else "-" for rows in table["systems"]]
                for i, label in enumerate(table["buckets"])]
            values = [[r[column] if all(r[n] for n in needs) else None for r in rows_k]
                      for rows_k in table["systems"]]
            parts += [f"<h3>{escape(title)} of {what} by {escape(table['name'])}</h3>",
                      _table([table["name"], "reference words" if what == "words" else "source words"] + names,
                             rows),
                      "<figure>" + figures.svg(figures.grouped_bar_figure, table["buckets"], values, names,
                                               f"{title} of {what}", table["name"]) + "</figure>"]
    return parts


def marked(output: str, reference: str) -> str:
    """The output's words, escaped, those that match no reference word in ``<mark>`` (compare-mt's word matching:
    its k-th occurrence of a word the reference's k-th)."""
    from evalpipe.scoring.compare_words import matches

    words = output.strip().split(" ")
    return " ".join(escape(w) if m >= 0 else f"<mark>{escape(w)}</mark>"
                    for w, m in zip(words, matches(reference.strip().split(" "), words)))


def _pair(pair: Dict[str, Any], names: List[str]) -> List[str]:
    left, right = pair["systems"]
    a, b = escape(names[left]), escape(names[right])
    kind = escape(pair["ngram_settings"]["kind"])
    parts = []
    for side, (x, y) in (("left", (a, b)), ("right", (b, a))):
        parts += [f"<h3>n-grams {x} has far more often than {y} ({kind})</h3>",
                  _table(["n-gram", "share", f"matches {names[left]}", f"matches {names[right]}"],
                         [[f'<td class="system">{escape(g)}</td>', f"{share:.3f}", str(m1), str(m2)]
                          for g, share, m1, m2 in pair["ngrams"][side]])]
    by = pair.get("examples_by", {"measure": "sentbleu", "higher_is_better": True})
    digits = 1 if by["measure"] == "sentbleu" else 4
    measure = "sentence BLEU" if by["measure"] == "sentbleu" else escape(by["measure"])
    for side, who in (("left", a), ("right", b)):
        parts += [f"<h3>Sentences where {who} is furthest ahead by {measure}</h3>", _table(
            ["#", f"{measure} {names[left]} / {names[right]}", '<th style="text-align: left">reference / outputs</th>'],
            [[str(e["index"] + 1), f"{e['scores'][0]:.{digits}f} / {e['scores'][1]:.{digits}f}",
              '<td class="system">' + (f'<i>{escape(e["source"])}</i><br>' if "source" in e else "") +
              f'{escape(e["reference"])}<br><b>{a}:</b> {marked(e["outputs"][0], e["reference"])}<br>'
              f'<b>{b}:</b> {marked(e["outputs"][1], e["reference"])}</td>'] for e in pair["examples"][side]])]
    parts.append("<p class=\"caption\">Marked: the words of an output that match no word of the reference (each "
                 "reference word matched once, case-sensitive, as compare-mt matches words).</p>")
    return [f"<h2>{a} and {b}</h2>"] + parts


def compare_many_report(doc: Dict[str, Any], title: str = "evalpipe: systems compared",
                        two: Optional[Dict[str, Any]] = None) -> str:
    """The page of a ``kind: compare-mt`` document (module docstring); with ``two`` (the ``kind: compare`` document
    of two systems it belongs to), the figure of the two systems' sentence BLEU too."""
    _require(doc, KEYS, "compare JSON")
    names = doc["systems"]
    parts = [f"<h1>{escape(title)}</h1>",
             f"<p class=\"meta\">{len(names)} systems, {doc['sentences']} sentences, compare-mt 0.2.10's analyses with "
             f"its numbers (its BLEU on space-split tokens, not sacrebleu's).</p>",
             "<h2>Scores</h2>", _scores(doc)]
    if two is not None:
        b = escape(two["systems"][1])
        wins = sum(y > x for x, y in zip(*two["sentence_bleu"]))
        losses = sum(y < x for x, y in zip(*two["sentence_bleu"]))
        parts += ["<h2>Sentence scores</h2>", "<figure>" + figures.svg(figures.distribution_figure, two) +
                  f"<figcaption class=\"caption\">compare-mt's sentence BLEU of every sentence: {b} better on "
                  f"{wins}, worse on {losses}.</figcaption></figure>"]
    parts += ["<h2>By reference length and by word frequency</h2>",
              "<figure>" + figures.svg(figures.bucket_figure, doc) +
              "<figcaption class=\"caption\">Left: compare-mt's BLEU of the sentences in each reference-length bucket "
              "(sentences per bucket: " + ", ".join(f"{escape(lb)}: {n}" for lb, n in zip(
                  doc["length"]["buckets"], doc["length"]["sentences"])) +
              "). Right: F-measure of the words in each bucket of frequency in the "
              f"{escape(doc['word_accuracy'].get('frequency_from', 'reference'))} (no bar: no reference or no output "
              "word in the bucket).</figcaption></figure>",
              "<h2>Sentence buckets</h2>", _buckets(doc)]
    parts += _asked_sentence_buckets(doc)
    words = _word_tables(doc)
    if words:
        parts += ["<h2>Word accuracies</h2>"] + words
    for pair in doc.get("pairs", []):
        parts += _pair(pair, names)
    for table in doc.get("metric_buckets", []):
        parts += metric_buckets_section(table, names)
    return _page(title, parts)


def compare_page(doc: Dict[str, Any], title: Optional[str] = None) -> str:
    """The page of any ``evalpipe compare`` JSON document: any number of systems (``kind: compare-mt``); two
    systems (``kind: compare``) get it too, of their ``compare_mt`` analyses, with their sentence BLEU histograms
    -- or, for a document written before those analyses were in it, its own older page."""
    if doc.get("kind") == "compare-mt":
        return compare_many_report(doc, title or "evalpipe: systems compared")
    if "compare_mt" in doc:
        return compare_many_report(doc["compare_mt"], title or "evalpipe: two systems compared", two=doc)
    return compare_report(doc, title or "evalpipe: two systems compared")
