"""Sentence buckets with compare-mt 0.2.10's settings (its ``--compare_sentence_buckets``), number for number.

A table buckets every system's sentences by one value and shows one statistic per bucket:

* ``by``: ``length`` (the reference's words; compare-mt 0.2.10 fails on ``by=length,statistic=count``, which here
  counts the sentences of each reference length), ``lengthdiff`` (output words - reference words), ``score``
  (the sentence's ``measure``), or ``label`` (a label a segment, ``labels=A+B`` the ones with a bucket, the rest
  ``other``);
* ``statistic``: ``count`` (sentences) or ``score`` (the ``measure`` of the bucket's sentences);
* ``measure``: compare-mt's ``bleu`` (its corpus BLEU; no sentence score, as in compare-mt), ``sentbleu`` (its
  sentence BLEU; a bucket's score is the mean), ``length`` (output words / reference words; a sentence's ratio for
  bucketing), or any evalpipe metric (``chrf``, ``ter``, ``comet`` ...: a sentence's score is the metric of its own
  statistics, a bucket's the metric of the summed statistics -- sacrebleu's corpus score of those sentences);
* ``cutoffs``: increasing boundaries ``a:b:c`` (buckets ``<a``, ``[a,b)`` ... ``>=c``; an integer bucket of one
  value is named by it, as compare-mt names it); compare-mt's defaults: length 10:20:...:60, lengthdiff
  -20:-10:-5:...:5:6:11:21, score the measure's scale / 10 at 1..9 (10.0 ... 90.0; length 0.1 ... 0.9).  An
  evalpipe metric's scale is its own, so bucketing by it takes ``cutoffs``.

compare-mt's key names (``bucket_type``, ``statistic_type``, ``score_measure``, ``bucket_cutoffs``) are accepted
beside these.  A bucket without sentences has no score (``None``: compare-mt prints 0 there).
"""
from __future__ import annotations

from bisect import bisect_right
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from evalpipe.errors import UsageError
from evalpipe.scoring.compare_systems import bucket_labels, comparemt_bleu

#: compare-mt's measures, computed as compare-mt computes them; any other name is an evalpipe metric
COMPAREMT_MEASURES = ("bleu", "sentbleu", "length")
KEYS = {"by": "by", "bucket_type": "by", "statistic": "statistic", "statistic_type": "statistic",
        "measure": "measure", "score_measure": "measure", "cutoffs": "cutoffs", "bucket_cutoffs": "cutoffs",
        "labels": "labels", "label_set": "labels"}
DEFAULT_CUTOFFS = {"length": (10, 20, 30, 40, 50, 60),
                   "lengthdiff": (-20, -10, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 11, 21)}
#: compare-mt's names of what it buckets by and scores with: (name in titles, key of the first column)
NAMES = {"length": ("length", "length"), "lengthdiff": ("len(output)-len(reference)", "lengthdiff"),
         "label": ("labels", "labels"),
         "bleu": ("BLEU", "bleu"), "sentbleu": ("sentence-level BLEU", "sentbleu"), "length ratio": (
             "length ratio", "lengthrat")}


class SentenceBuckets(NamedTuple):
    """One table's settings (compare-mt's defaults: a count of sentences by sentence BLEU)."""

    by: str = "score"
    statistic: str = "count"
    measure: str = "sentbleu"
    cutoffs: Optional[Tuple[float, ...]] = None
    labels: Optional[Tuple[str, ...]] = None

    def describe(self) -> str:
        joined = {"cutoffs": ":", "labels": "+"}
        return ",".join(f"{k}={joined[k].join(map(str, v)) if k in joined else v}"
                        for k, v in self._asdict().items() if v is not None)


#: compare-mt's three default tables
DEFAULTS = (SentenceBuckets("length", "score", "bleu"), SentenceBuckets("lengthdiff"), SentenceBuckets())


def _number(text: str) -> float:
    """compare-mt's ``parse_intfloat``: an int where the text is one, else a float."""
    try:
        return int(text)
    except ValueError:
        return float(text)


def parse_cutoffs(text: str, what: str) -> Tuple[float, ...]:
    """``a:b:c``, strictly increasing numbers (one line saying which is not)."""
    try:
        cutoffs = tuple(_number(part) for part in text.split(":"))
    except ValueError:
        raise UsageError(f"{what}: expected cutoffs A:B:C (numbers), got {text!r}") from None
    for a, b in zip(cutoffs, cutoffs[1:]):
        if not a < b:
            raise UsageError(f"{what}: expected increasing cutoffs, got {text!r} ({b} after {a})")
    return cutoffs


def parse_profile(text: str, keys: Dict[str, str], flag: str) -> Dict[str, Any]:
    """``KEY=VALUE,...`` with each KEY one of ``keys`` (evalpipe's name or compare-mt's, mapped to evalpipe's; an
    unknown key is refused, naming the ones there are), ``cutoffs`` parsed (:func:`parse_cutoffs`)."""
    found: Dict[str, Any] = {}
    for part in text.split(","):
        key, eq, value = part.partition("=")
        if not eq or key.strip() not in keys:
            names = ", ".join(dict.fromkeys(keys.values()))
            raise UsageError(f"{flag}: expected KEY=VALUE with KEY one of {names} (or compare-mt's names), "
                             f"got {part!r}")
        found[keys[key.strip()]] = value.strip()
    if "cutoffs" in found:
        found["cutoffs"] = parse_cutoffs(found["cutoffs"], flag)
    return found


def parse(text: str, flag: str = "--sentence-buckets") -> SentenceBuckets:
    """``by=...,statistic=...,measure=...,cutoffs=a:b:c`` (compare-mt's key names too); every key acts or is
    refused."""
    found = parse_profile(text, KEYS, flag)
    if "labels" in found:
        found["labels"] = tuple(found["labels"].split("+"))
    spec = SentenceBuckets(**found)
    if spec.by not in ("length", "lengthdiff", "score", "label"):
        raise UsageError(f"{flag}: expected by=length, lengthdiff, score or label, got by={spec.by}")
    if (spec.labels is not None) != (spec.by == "label") or (spec.labels is not None and not all(spec.labels)):
        raise UsageError(f"{flag}: by=label takes labels=A+B+... (the labels that get a bucket; the rest are "
                         f"'other'), and only it does")
    if spec.by == "label" and spec.cutoffs is not None:
        raise UsageError(f"{flag}: cutoffs act with by=length, lengthdiff or score, not by=label")
    if spec.statistic not in ("count", "score"):
        raise UsageError(f"{flag}: expected statistic=count or score, got statistic={spec.statistic}")
    if not spec.measure:
        raise UsageError(f"{flag}: expected a measure (bleu, sentbleu, length or an evalpipe metric), got none")
    if spec.by == "score" and spec.measure == "bleu":
        raise UsageError(f"{flag}: bleu has no sentence score to bucket by (compare-mt's neither); use "
                         f"measure=sentbleu")
    uses_measure = spec.by == "score" or spec.statistic == "score"
    if "measure" in found and not uses_measure:
        raise UsageError(f"{flag}: measure={spec.measure} acts only with by=score or statistic=score")
    if spec.by == "score" and spec.cutoffs is None and spec.measure not in COMPAREMT_MEASURES:
        raise UsageError(f"{flag}: bucketing by {spec.measure} needs cutoffs=A:B:... on its own scale")
    return spec


class Sentences(NamedTuple):
    """What the tables read, computed once for all of them: token lengths, compare-mt's BLEU statistics and
    sentence BLEU of every sentence of every system."""

    ref_lengths: List[int]
    out_lengths: List[List[int]]
    bleu_stats: Sequence[list]
    sentbleu: List[List[float]]
    labels: Optional[List[str]] = None  # a label a segment (--bucket-labels), for by=label


def table(spec: SentenceBuckets, sentences: Sentences, metric_values: Optional[Tuple[Any, list]] = None
          ) -> Dict[str, Any]:
    """One table: ``{"settings", "title", "key", "buckets", "sentences": [[count per bucket] per system],
    "values": [[statistic per bucket or None] per system]}``.  ``metric_values``: for an evalpipe measure, the
    metric and each system's per-sentence statistics."""
    metric, stats = metric_values if metric_values else (None, None)
    systems = len(sentences.out_lengths)

    def sentence_value(k: int, i: int) -> float:
        if spec.measure == "sentbleu":
            return sentences.sentbleu[k][i]
        if spec.measure == "length":
            return sentences.out_lengths[k][i] / sentences.ref_lengths[i]
        return metric.score(stats[k][i])

    if spec.by == "label":  # compare-mt's LabelSentenceBucketer: the labels asked, then "other"
        where = {label: i for i, label in enumerate(spec.labels)}
        keys = [[where.get(label, len(spec.labels)) + 0.5 for label in sentences.labels]] * systems
        cutoffs = tuple(range(1, len(spec.labels) + 1))
    elif spec.by == "score":
        cutoffs = spec.cutoffs or tuple(x * (1.0 if spec.measure == "length" else 100.0) / 10.0 for x in range(1, 10))
        keys = [[sentence_value(k, i) for i in range(len(sentences.ref_lengths))] for k in range(systems)]
    else:
        cutoffs = spec.cutoffs or DEFAULT_CUTOFFS[spec.by]
        if spec.by == "lengthdiff":
            keys = [[o - r for o, r in zip(outs, sentences.ref_lengths)] for outs in sentences.out_lengths]
        else:
            keys = [sentences.ref_lengths] * systems
    members = [[[] for _ in range(len(cutoffs) + 1)] for _ in range(systems)]
    for k in range(systems):
        for i, value in enumerate(keys[k]):
            members[k][bisect_right(cutoffs, value)].append(i)
    values = [[len(b) if spec.statistic == "count" else _score(spec, sentences, metric, stats, k, b) if b else None
               for b in members[k]] for k in range(systems)]
    if spec.by != "score":
        by_name, key = NAMES[spec.by]
    elif spec.measure in COMPAREMT_MEASURES:
        by_name, key = NAMES["length ratio" if spec.measure == "length" else spec.measure]
    else:
        by_name, key = spec.measure, spec.measure
    statistic = metric_title(spec.measure) if spec.statistic == "score" else "count"
    return {"settings": spec._asdict(), "title": f"bucket type: {by_name}, statistic type: {statistic}",
            "key": key, "buckets": list(spec.labels) + ["other"] if spec.by == "label" else
            bucket_labels(cutoffs, integer=spec.by != "score"),
            "sentences": [[len(b) for b in column] for column in members], "values": values}


def metric_title(measure: str) -> str:
    """compare-mt's name of a measure in a title (an evalpipe metric: its name)."""
    return NAMES["length ratio" if measure == "length" else measure][0] if measure in COMPAREMT_MEASURES else measure


def _score(spec: SentenceBuckets, sentences: Sentences, metric: Any, stats: Optional[list], k: int,
           idx: List[int]) -> Optional[float]:
    """The measure of the sentences ``idx`` of system ``k``, as compare-mt's scorer's ``score_corpus``."""
    if spec.measure == "bleu":
        return comparemt_bleu([sentences.bleu_stats[k][i] for i in idx])
    if spec.measure == "sentbleu":
        total = 0
        for i in idx:
            total += sentences.sentbleu[k][i]
        return total / len(idx)
    if spec.measure == "length":
        ref_words = sum(sentences.ref_lengths[i] for i in idx)
        return sum(sentences.out_lengths[k][i] for i in idx) / ref_words if ref_words else None
    summed = [sum(column) for column in zip(*(stats[k][i] for i in idx))]
    return metric.score(summed)
