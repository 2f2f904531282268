"""Word n-gram counting and clipped matching shared by the n-gram metrics.

``ngram_table(tokens, max_order)`` returns one dict mapping every n-gram of orders
``1..max_order`` to its count (unigrams as strings, higher orders as tuples, so orders never
collide).  ``clipped_matches(tokens, table, max_order)`` returns, per order, the sum over hypothesis
n-grams g of min(hyp[g], ref[g]) -- BLEU's clipped n-gram precision numerator (Papineni et al.,
2002).  Inner loops run in C (``zip``, ``collections._count_elements``, ``map``).  When an order
has no repeated n-gram in the hypothesis, no higher order has one either, and the clipped count of
those orders is simply the number of hypothesis n-grams found in the reference: no counting needed.
"""
from __future__ import annotations

from collections import _count_elements  # C counting loop behind collections.Counter
from typing import Dict, List, Sequence

Counts = Dict[object, int]


def ngram_table(tokens: Sequence[str], max_order: int) -> Counts:
    """Counts of every n-gram of ``tokens`` of orders 1..``max_order``, in one dict."""
    counts: Counts = {}
    _count_elements(counts, tokens)
    shifted = [tokens[i:] for i in range(1, max_order)]
    for n in range(1, max_order):
        _count_elements(counts, zip(tokens, *shifted[:n]))
    return counts


def clipped(hyp: Counts, ref: Counts, hyp_total: int) -> int:
    """Sum over hypothesis n-grams g of min(hyp[g], ref[g]); ``hyp_total`` is sum(hyp.values()).

    Every g found in ``ref`` contributes at least 1 (counted in C); only n-grams repeated in both
    add more, and those few are visited in Python."""
    matched = sum(map(ref.__contains__, hyp))
    if len(hyp) != hyp_total:  # some n-gram repeats in the hypothesis
        get = ref.get
        for gram, count in hyp.items():
            if count > 1:
                found = get(gram, 0)
                if found > 1:
                    matched += (count if count < found else found) - 1
    return matched


def clipped_matches(tokens: Sequence[str], ref: Counts, max_order: int) -> List[int]:
    """Per order 1..``max_order``, the clipped number of hypothesis n-grams found in ``ref``
    (an :func:`ngram_table`, or the element-wise maximum of several)."""
    length = len(tokens)
    shifted = [tokens[i:] for i in range(max_order)]
    contains = ref.__contains__
    out: List[int] = []
    repeats = True
    for n in range(1, max_order + 1):
        grams = tokens if n == 1 else zip(*shifted[:n])
        if repeats:
            counts: Counts = {}
            _count_elements(counts, grams)
            total = length - n + 1
            out.append(clipped(counts, ref, total) if total > 0 else 0)
            repeats = len(counts) != total
        else:
            out.append(sum(map(contains, grams)))
    return out


def max_merge(counters: Sequence[Counts]) -> Counts:
    """Element-wise maximum of several references' counts (multi-reference clipping)."""
    merged = dict(counters[0])
    for other in counters[1:]:
        get = merged.get
        for gram, count in other.items():
            if count > get(gram, 0):
                merged[gram] = count
    return merged
