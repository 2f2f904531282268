"""Sentence windows: how a neural metric scores a segment whose input is past the model's limit without cutting it
(``-o on_long=window``).

A long segment is usually a paragraph or a document whose source, hypothesis and reference say the same sentences
in the same order.  Each field the model reads is split into sentences (after ``.``, ``!``, ``?``, ``。``, ``！`` or
``？`` followed by white space; a line break also ends one).  When every field has the same number of sentences, the
sentences are taken in order and packed greedily into windows -- sentences ``i..j`` of every field together -- each
as long as still fits the limit; a single sentence that does not fit on its own is a window of its own and is cut
(counted as cut).  The segment's score is the mean of its windows' scores weighted by the characters of the
hypothesis each window holds (a short last window counts for less).  When the fields' sentence counts differ (the
sentences cannot be paired) or a field is one sentence, the segment is cut as ``truncate`` cuts it, and counted.

The windows are a choice, not the model's definition: a model trained on whole segments scores a window without the
context around it, so windowed and cut scores are different numbers (the signature says which).
"""
from __future__ import annotations

import re
from typing import Callable, Dict, List, Optional, Sequence, Tuple

_SENTENCE_END = re.compile(r"(?<=[.!?\u3002\uff01\uff1f])\s+|\s*\n\s*")

#: a row's fields: (source, hypothesis, reference or None)
Row = Tuple[str, str, Optional[str]]


def sentences(text: str) -> List[str]:
    """The sentences of ``text`` (module docstring); a text without an end mark is one sentence."""
    found = [s for s in _SENTENCE_END.split(text.strip()) if s]
    return found or [text]


def windows(row: Row, used: Sequence[int], fits: Callable[[Row], bool]) -> Optional[List[Row]]:
    """The windows of ``row`` (fields ``used``, by index, are split and must pair up), each a row of its own; None
    when the row cannot be split (sentence counts differ, or one sentence)."""
    split = {k: sentences(row[k]) for k in used if row[k] is not None}
    counts = {len(v) for v in split.values()}
    if len(counts) != 1 or counts == {1}:
        return None
    n = counts.pop()

    def window(lo: int, hi: int) -> Row:
        fields = list(row)
        for k, parts in split.items():
            fields[k] = " ".join(parts[lo:hi])
        return (fields[0], fields[1], fields[2])

    out, lo = [], 0
    while lo < n:
        hi = lo + 1
        while hi < n and fits(window(lo, hi + 1)):
            hi += 1
        out.append(window(lo, hi))
        lo = hi
    return out


def weighted_mean(scores: Sequence[float], parts: Sequence[Row]) -> float:
    """The mean of the windows' ``scores`` weighted by the characters of each window's hypothesis."""
    weights = [max(1, len(p[1])) for p in parts]
    return sum(s * w for s, w in zip(scores, weights)) / sum(weights)


def combine(rows: int, keep: Sequence[int], parts: Dict[int, List[Row]], scores: Sequence[float],
            window_cut: Sequence[bool]) -> Tuple[List[float], Dict[int, bool]]:
    """Every row's score from one scoring pass over the ``keep`` rows then every split row's windows (rows in
    ``sorted(parts)`` order): a kept row's own score, a split row's :func:`weighted_mean` of its windows; and for
    each split row whether one of its windows was cut (``window_cut``: one flag a window)."""
    out = [0.0] * rows
    for k, i in enumerate(keep):
        out[i] = float(scores[k])
    cut, at = {}, 0
    for i in sorted(parts):
        n = len(parts[i])
        out[i] = weighted_mean([float(v) for v in scores[len(keep) + at:len(keep) + at + n]], parts[i])
        cut[i] = any(window_cut[at:at + n])
        at += n
    return out, cut
