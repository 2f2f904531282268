"""``evalpipe compare``'s text: compare-mt 0.2.10's printed layout (tab-separated tables, 4 decimals) of the
analyses :func:`evalpipe.scoring.compare_many.analyse` computes, so a person who reads compare-mt's output reads
this one, and the numbers can be checked against it line by line.  One difference: what is undefined prints as
``-`` (compare-mt prints 0 there)."""
from __future__ import annotations

from typing import Any, List, Optional

from evalpipe.scoring.compare_words import ACCURACY

UNDEFINED = "-"  # where compare-mt prints 0: an F-measure of a bucket without reference or output words, a BLEU of
# a bucket without sentences


def _fmt(x: Any) -> str:
    """compare-mt's formatter: an int as it is, a float with 4 decimals, a string unchanged."""
    if isinstance(x, str):
        return x
    if isinstance(x, int):
        return f"{x:d}"
    return f"{x:.4f}"


def _header(name: str) -> str:
    return f"********************** {name} ************************"


def _buckets(title: str, key: str, names: List[str], labels: List[str], columns: List[list],
             sentences: Optional[List[int]] = None) -> List[str]:
    """A sentence-bucket table; with ``sentences`` (per bucket), a bucket of none shows ``-``."""
    out = [_header("Sentence Bucket Analysis"), f"--- {title}", "\t".join([key] + names)]
    out += ["\t".join([label] + [UNDEFINED if sentences is not None and not sentences[i] else _fmt(column[i])
                                  for column in columns]) for i, label in enumerate(labels)]
    return out + [""]


def _buckets_of_systems(title: str, key: str, names: List[str], labels: List[str], columns: List[list],
                        sentences: Optional[List[List[int]]]) -> List[str]:
    """A sentence-bucket table whose buckets differ by system (``sentences[system][bucket]``): a score of a
    bucket without sentences shows ``-``."""
    out = [_header("Sentence Bucket Analysis"), f"--- {title}", "\t".join([key] + names)]
    out += ["\t".join([label] + [UNDEFINED if sentences is not None and not sentences[k][i] else _fmt(column[i])
                                  for k, column in enumerate(columns)]) for i, label in enumerate(labels)]
    return out + [""]


def word_table_lines(words: dict, names: List[str], header: str) -> List[str]:
    """compare-mt's word-accuracy report: its header, then a table per accuracy asked (``a+b``: two tables, each
    titled with both, as compare-mt titles them)."""
    accuracy = words["settings"]["accuracy"]
    out = [_header(header)]
    for kind in accuracy.split("+"):
        column, needs, _ = ACCURACY[kind]
        out += [f"--- word {accuracy} by {words['name']} bucket", "\t".join([words["name"]] + names)]
        out += ["\t".join([label] + [_fmt(rows[i][column]) if all(rows[i][n] for n in needs) else UNDEFINED
                                      for rows in words["systems"]]) for i, label in enumerate(words["buckets"])]
        out.append("")
    return out


def _cells(row: list) -> str:
    return "\t".join(_fmt(y) if y else "" for y in row)


def _score_tables(scores: list, boot: Optional[dict], names: List[str], label: str = "BLEU") -> List[str]:
    """compare-mt's score tables: the scores; with the bootstrap, the intervals beneath and the wins (two systems:
    a column; more: a table of every pair, row system against column system)."""
    if boot is None:
        return [_cells([""] + names), _cells([label] + scores), ""]
    intervals = [f"[{_fmt(lo)},{_fmt(up)}]" for lo, up in zip(boot["lower"], boot["upper"])]
    if len(scores) == 1:
        return [_cells([""] + names), _cells([label] + scores), _cells([""] + intervals), ""]
    verdicts = {tuple(p["systems"]): _verdict(p) for p in boot["pairs"]}
    if len(scores) == 2:
        won, p = verdicts[(0, 1)]
        return [_cells([""] + names + ["Win?"]), _cells([label] + scores + [won]),
                _cells([""] + intervals + [f"p={_fmt(p)}"]), ""]
    table = [["v s1 / s2 ->"] + names[1:]] + [[names[i]] + [""] * (len(scores) - 1) for i in range(len(scores) - 1)]
    for (left, right), (won, p) in verdicts.items():
        table[left + 1][right] = f"{won} (p={_fmt(p)})"
    return [_cells([""] + names), _cells([label] + scores), ""] + [_cells(row) for row in table] + [""]


def _verdict(pair: dict, threshold: float = 0.05) -> tuple:
    """compare-mt's ``winstr_pval``: ``s1>s2`` when the first wins all but under 5 % of resamples, ``s2>s1`` the
    other way, else ``-``; p = 1 - the larger share."""
    wins, losses = pair["wins"], pair["losses"]
    won = "s1>s2" if 1 - wins < threshold else "s2>s1" if 1 - losses < threshold else "-"
    return won, 1 - (wins if wins > losses else losses)


def layout(doc: dict) -> str:
    """The text compare-mt prints for its default analyses (its log line about word frequencies left out: that
    goes to stderr)."""
    names = doc["systems"]
    ratio = doc["length_ratio"]
    out = [_header("Aggregate Scores"), "BLEU:"] + _score_tables(doc["bleu"], doc.get("bleu_bootstrap"), names)
    for boot in doc.get("metric_bootstrap", []):
        direction = "higher" if boot["higher_is_better"] else "lower"
        out += [_header("Aggregate Scores"), f"{boot['metric']} ({direction} is better; s1>s2: s1 is better):"]
        out += _score_tables(boot["scores"], boot, names, boot["metric"])
    out += [_header("Aggregate Scores"), "length ratio:", "\t".join([""] + names), "\t".join(["length ratio"] + [
        f"{_fmt(r)} (ref={ratio['reference_words']}, out={w})" for r, w in zip(ratio["ratio"], ratio["output_words"])]),
        ""]
    if doc.get("word_buckets"):
        for words in doc["word_buckets"]:
            out += word_table_lines(words, names, "Word Accuracy Analysis")
    else:
        out += word_table_lines(dict(doc["word_accuracy"], name="frequency", settings={"accuracy": "fmeas"}), names,
                                "Word Accuracy Analysis")
    if doc.get("source_words"):
        out += word_table_lines(doc["source_words"], names, "Source Word Accuracy Analysis")
    if doc.get("sentence_buckets"):
        for table in doc["sentence_buckets"]:
            counted = table["settings"]["statistic"] == "count"
            out += _buckets_of_systems(table["title"], table["key"], names, table["buckets"], table["values"],
                                       None if counted else table["sentences"])
    else:
        out += _buckets("bucket type: length, statistic type: BLEU", "length", names, doc["length"]["buckets"],
                        doc["length"]["bleu"], doc["length"]["sentences"])
        out += _buckets("bucket type: len(output)-len(reference), statistic type: count", "lengthdiff", names,
                        doc["length_difference"]["buckets"], doc["length_difference"]["sentences"])
        out += _buckets("bucket type: sentence-level BLEU, statistic type: count", "sentbleu", names,
                        doc["sentence_bleu"]["buckets"], doc["sentence_bleu"]["sentences"])
    if doc.get("pairs"):
        out += _ngram_lines(doc["pairs"], names) + _example_lines(doc["pairs"], names)
    return "\n".join(out)


def _ngram_lines(pairs: List[dict], names: List[str]) -> List[str]:
    """compare-mt's n-gram report: its settings once, then both lists of every pair."""
    first = pairs[0]
    ngram, top = first["ngram_settings"], first["top"]
    out = [_header("N-gram Difference Analysis"),
           f"--- min_ngram_length={ngram['min_order']}, max_ngram_length={ngram['max_order']}",
           f"    report_length={top}, alpha={ngram['alpha']}, compare_type={ngram['kind']}"]
    if ngram.get("label_files"):  # compare-mt names the label files of n-grams of labels
        ref_file, sys_files = ngram["label_files"]
        out.append(f"    ref_labels={ref_file}," + "".join(f" out{i}_labels={f}," for i, f in enumerate(sys_files)))
    for pair in pairs:
        left, right = pair["systems"]
        a, b = names[left], names[right]
        for side, (x, y) in (("left", (a, b)), ("right", (b, a))):
            out.append(f"--- {top} n-grams where {x}>{y} in {ngram['kind']}")
            out += [f"{g}\t{_fmt(v)} (sys{left + 1}={m1}, sys{right + 1}={m2})"
                    for g, v, m1, m2 in pair["ngrams"][side]]
            out.append("")
    return out


def _measure(by: dict) -> str:
    """compare-mt's name of the examples' measure; an evalpipe metric's name with its direction (``>``: better)."""
    from evalpipe.scoring.compare_sentences import metric_title

    if by["measure"] in ("sentbleu", "length"):
        return metric_title(by["measure"])
    return f"{by['measure']} ({'higher' if by['higher_is_better'] else 'lower'} is better)"


def _example_lines(pairs: List[dict], names: List[str]) -> List[str]:
    """compare-mt's sentence examples: the sentences where each system of every pair is furthest ahead."""
    out = [_header("Sentence Examples Analysis")]
    for pair in pairs:
        left, right = pair["systems"]
        a, b = names[left], names[right]
        for side, (x, y) in (("left", (a, b)), ("right", (b, a))):
            out.append(f"--- {pair['examples_asked']} sentences where {x}>{y} at {_measure(pair['examples_by'])}")
            for ex in pair["examples"][side]:
                s1, s2 = ex["scores"]
                out.append(f"{a}-{b}={_fmt(-(s2 - s1))}, {a}={_fmt(s1)}, {b}={_fmt(s2)}")
                if "source" in ex:
                    out.append(f"Src:  {ex['source'].strip()}")
                out += [f"Ref:  {ex['reference'].strip()}", f"{a}: {ex['outputs'][0].strip()}",
                        f"{b}: {ex['outputs'][1].strip()}", ""]
    return out


def metric_buckets_text(table: dict, names: List[str]) -> str:
    """A metric's bucket table in compare-mt's bucket layout with its ``# sents`` column and intervals: each cell
    ``score [low, high]``; after the first system, the Holm-adjusted p-value against it and, where it is at most
    alpha, ``better`` or ``worse`` in the metric's direction; the score alone for a bucket of under 10 sentences;
    ``-`` for a bucket without sentences.  The first row, ``all``, is every sentence (its p-value unadjusted)."""
    direction = "higher" if table["higher_is_better"] else "lower"
    key = "length" if table["bucket_by"] == "length" else "score" if table["bucket_by"].endswith(
        "(mean over the systems)") else "label"
    tested = sum(1 for low in table["systems"][0]["low"] if low is not None)
    test = f"; paired bootstrap against {names[0]}, Holm-adjusted over {tested} buckets" if len(names) > 1 else ""
    out = [_header("Sentence Bucket Analysis"),
           f"--- bucket type: {table['bucket_by']}, statistic type: {table['metric']} ({direction} is better; 95% "
           f"interval of {table['trials']} resamples{test}; none under 10 sentences)",
           "\t".join([key, "# sents"] + names)]
    every = table["all"]
    cells = ["all", str(sum(table["sentences"]))]
    for k in range(len(names)):
        cell = _fmt(every["score"][k])
        if every["low"][k] is not None:
            cell += f" [{_fmt(every['low'][k])}, {_fmt(every['high'][k])}]"
            if k:
                cell += f" p={_fmt(every['p'][k])}" + (f" {every['verdict'][k]}" if every["verdict"][k] != "-" else "")
        cells.append(cell)
    out.append("\t".join(cells))
    for i, label in enumerate(table["buckets"]):
        cells = [label, str(table["sentences"][i])]
        for k, column in enumerate(table["systems"]):
            if column["score"][i] is None:
                cells.append(UNDEFINED)
                continue
            cell = _fmt(column["score"][i])
            if column["low"][i] is None:  # too few sentences for an interval or a test
                cells.append(cell)
                continue
            cell += f" [{_fmt(column['low'][i])}, {_fmt(column['high'][i])}]"
            if k:
                verdict = column["verdict"][i]
                cell += f" p={_fmt(column['p_holm'][i])}" + (f" {verdict}" if verdict != "-" else "")
            cells.append(cell)
        out.append("\t".join(cells))
    return "\n".join(out + [""])

