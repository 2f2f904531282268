"""Word accuracies with compare-mt 0.2.10's settings (its ``--compare_word_accuracies`` and
``--compare_src_word_accuracies``), number for number.

Per system and bucket: the output's words matched in the reference, the reference's words, the output's words,
recall, precision and F-measure (compare-mt's ``calc_statistics``: all three 0 where nothing matches).  An output
word matches the reference word of its occurrence (its k-th occurrence the reference's k-th), and counts in that
word's bucket.  Buckets (``by``):

* ``freq``: the word's frequency in the reference, a corpus or a counts file (``cutoffs``, default
  1:2:3:4:5:10:100:1000);
* ``case``: ``lower``, ``upper``, ``title``, ``other`` (Python's ``islower``/``isupper``/``istitle``; the words as
  given even with ``--lowercase``, as compare-mt's);
* ``label``: a label a word (one label file for the reference, one a system: POS tags, say), buckets the labels
  asked (``labels=NOUN+VERB``) and ``other``; a matched output word takes its reference word's label.

``accuracy``: ``fmeas``, ``prec``, ``rec`` or several joined by ``+`` (a table each).  compare-mt's key names
(``bucket_type``, ``acc_type``, ``bucket_cutoffs``, ``label_set``) are accepted beside these.

Source words (:func:`source_word_recall`): each source word bucketed by its frequency in the source; it counts as
translated when it is aligned to reference words (an alignment file, ``i-j`` pairs of source and reference word
positions from 0, a line a segment) and the output matches every one of them (compare-mt's recall).
"""
from __future__ import annotations

from bisect import bisect_right
from collections import Counter, defaultdict
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from evalpipe.errors import InputError, UsageError
from evalpipe.scoring.compare_sentences import parse_profile
from evalpipe.scoring.compare_systems import (FREQUENCY_CUTOFFS, Tokens, accuracy_rows, bucket_labels,
                                              word_accuracy_by_frequency, word_accuracy_by_word)

KEYS = {"by": "by", "bucket_type": "by", "accuracy": "accuracy", "acc_type": "accuracy", "cutoffs": "cutoffs",
        "bucket_cutoffs": "cutoffs", "labels": "labels", "label_set": "labels"}
#: each accuracy's column in a row of :func:`~evalpipe.scoring.compare_systems.accuracy_rows`, the columns that
#: must be non-zero for it to be defined (reference words, output words, both), and its name
ACCURACY = {"rec": (3, (1,), "recall"), "prec": (4, (2,), "precision"), "fmeas": (5, (1, 2), "F-measure")}
CASES = ("lower", "upper", "title", "other")
BUCKET_NAMES = {"freq": "frequency", "case": "case", "label": "labels"}


class WordBuckets(NamedTuple):
    """One word-accuracy analysis's settings (compare-mt's default: F-measure by frequency)."""

    by: str = "freq"
    accuracy: str = "fmeas"
    cutoffs: Optional[Tuple[float, ...]] = None
    labels: Optional[Tuple[str, ...]] = None


def parse(text: str, flag: str = "--word-buckets") -> WordBuckets:
    """``by=freq|case|label,accuracy=fmeas+prec,cutoffs=a:b,labels=A+B``; every key acts or is refused."""
    found = parse_profile(text, KEYS, flag)
    if "labels" in found:
        found["labels"] = tuple(found["labels"].split("+"))
        if not all(found["labels"]):
            raise UsageError(f"{flag}: expected labels=A+B+..., got an empty label in {text!r}")
    spec = WordBuckets(**found)
    if spec.by not in BUCKET_NAMES:
        raise UsageError(f"{flag}: expected by=freq, case or label, got by={spec.by}")
    bad = [a for a in spec.accuracy.split("+") if a not in ACCURACY]
    if bad:
        raise UsageError(f"{flag}: expected accuracy=fmeas, prec or rec (joined by +), got {bad[0]!r}")
    if spec.cutoffs is not None and spec.by != "freq":
        raise UsageError(f"{flag}: cutoffs act only with by=freq, got by={spec.by}")
    if (spec.labels is not None) != (spec.by == "label"):
        raise UsageError(f"{flag}: by=label takes labels=A+B+... (the labels that get a bucket), and only it does")
    return spec


def read_counts(lines: Sequence[str], path: str, lowercase: bool = False) -> Dict[str, int]:
    """compare-mt's ``freq_count_file``: ``word<TAB>count`` a line (a word's last line counts, its words
    lowercased with ``lowercase``, as compare-mt's); a line of another shape is refused (compare-mt skips it)."""
    counts: Dict[str, int] = {}
    for n, line in enumerate(lines, start=1):
        cols = line.strip().split("\t")
        if len(cols) != 2 or not cols[1].strip().isdigit():
            raise InputError(f"expected WORD<TAB>COUNT, got {line.strip()!r}", path, n)
        counts[cols[0].lower() if lowercase else cols[0]] = int(cols[1])
    return counts


def check_labels(labels: List[List[str]], sentences: List[Tokens], path: str) -> None:
    """A label a word: every line of the label file as long as its sentence (one line naming the file and line)."""
    if len(labels) != len(sentences):
        raise InputError(f"expected a line of labels a segment ({len(sentences)}), got {len(labels)}", path)
    for i, (row, words) in enumerate(zip(labels, sentences)):
        if len(row) != len(words):
            raise InputError(f"expected a label a word ({len(words)}), got {len(row)}", path, i + 1)


def word_table(spec: WordBuckets, ref: List[Tokens], outs: Sequence[List[Tokens]],
               corpus: Optional[List[Tokens]] = None, counts: Optional[Dict[str, int]] = None,
               ref_labels: Optional[List[List[str]]] = None, out_labels: Optional[Sequence[List[List[str]]]] = None
               ) -> Dict[str, Any]:
    """One analysis: ``{"settings", "name", "buckets", "systems": [[row per bucket] per system]}`` (rows as
    :func:`~evalpipe.scoring.compare_systems.accuracy_rows`)."""
    if spec.by == "freq":
        found = word_accuracy_by_frequency(ref, outs, spec.cutoffs or FREQUENCY_CUTOFFS, corpus, counts)
        labels, systems = found["buckets"], found["systems"]
    elif spec.by == "case":
        vocabulary = {w for corpus in (ref, *outs) for sentence in corpus for w in sentence}
        labels, systems = list(CASES), word_accuracy_by_word(ref, outs, {w: _case(w) for w in vocabulary}, 3,
                                                             len(CASES))
    else:
        labels = list(spec.labels) + ["other"]
        systems = _by_label(ref, outs, ref_labels, out_labels, spec.labels)
    settings = spec._asdict()
    return {"settings": settings, "name": BUCKET_NAMES[spec.by], "buckets": labels, "systems": systems}


def _case(word: str) -> int:
    return 0 if word.islower() else 1 if word.isupper() else 2 if word.istitle() else 3


def matches(ref: Tokens, out: Tokens) -> List[int]:
    """The reference position each output word matches (-1: none): the k-th occurrence of a word the reference's
    k-th."""
    positions = defaultdict(list)
    for i, w in enumerate(ref):
        positions[w].append(i)
    seen: Counter = Counter()
    found = []
    for w in out:
        where = positions.get(w)
        k = seen[w]
        found.append(where[k] if where and k < len(where) else -1)
        seen[w] += 1
    return found


def _by_label(ref: List[Tokens], outs: Sequence[List[Tokens]], ref_labels: List[List[str]],
              out_labels: Sequence[List[List[str]]], label_set: Sequence[str]) -> List[List[tuple]]:
    bucket = {label: i for i, label in enumerate(label_set)}
    other = len(label_set)
    buckets = other + 1
    ref_total = [0] * buckets
    out_total = [[0] * buckets for _ in outs]
    matched = [[0] * buckets for _ in outs]
    for i, sentence in enumerate(ref):
        ref_buckets = [bucket.get(label, other) for label in ref_labels[i]]
        for b in ref_buckets:
            ref_total[b] += 1
        for k, out in enumerate(outs):
            for m, label in zip(matches(sentence, out[i]), out_labels[k][i]):
                b = ref_buckets[m] if m >= 0 else bucket.get(label, other)
                out_total[k][b] += 1
                matched[k][b] += m >= 0
    return [accuracy_rows(matched[k], ref_total, out_total[k]) for k in range(len(outs))]


def read_alignments(lines: Sequence[str], src: List[Tokens], ref: List[Tokens], path: str) -> List[list]:
    """``i-j`` pairs a line (source word i, reference word j, from 0), each in range of its sentences (one line
    naming the file and line where not); an empty line aligns nothing."""
    if len(lines) != len(ref):
        raise InputError(f"expected a line of alignments a segment ({len(ref)}), got {len(lines)}", path)
    found = []
    for n, (line, s, r) in enumerate(zip(lines, src, ref), start=1):
        pairs = []
        for item in line.split():
            i, dash, j = item.partition("-")
            if not (dash and i.isdigit() and j.isdigit()):
                raise InputError(f"expected I-J pairs of word positions, got {item!r}", path, n)
            if int(i) >= len(s) or int(j) >= len(r):
                raise InputError(f"expected source positions below {len(s)} and reference positions below "
                                 f"{len(r)}, got {item}", path, n)
            pairs.append((int(i), int(j)))
        found.append(pairs)
    return found


def source_word_recall(src: List[Tokens], ref: List[Tokens], outs: Sequence[List[Tokens]], aligns: List[list],
                       cutoffs: Sequence[float] = FREQUENCY_CUTOFFS) -> Dict[str, Any]:
    """The module docstring's source analysis: rows a bucket of source frequency, recall the share of source
    words whose aligned reference words the output all matches (an unaligned word is never matched)."""
    frequency = Counter(w for sentence in src for w in sentence)
    buckets = len(cutoffs) + 1
    total = [0] * buckets
    matched = [[0] * buckets for _ in outs]
    for i, (words, reference) in enumerate(zip(src, ref)):
        where = [bisect_right(cutoffs, frequency[w]) for w in words]
        targets: List[list] = [[] for _ in words]
        for s, t in aligns[i]:
            targets[s].append(t)
        for b in where:
            total[b] += 1
        for k, out in enumerate(outs):
            hit = [False] * len(reference)
            for m in matches(reference, out[i]):
                if m >= 0:
                    hit[m] = True
            for b, ts in zip(where, targets):
                if ts and all(hit[t] for t in ts):
                    matched[k][b] += 1
    return {"settings": {"by": "freq", "accuracy": "rec"}, "name": "frequency", "buckets": bucket_labels(cutoffs),
            "systems": [accuracy_rows(matched[k], total, total) for k in range(len(outs))]}
