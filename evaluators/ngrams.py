"""Word n-gram counting and clipped matching shared by the n-gram metrics.

``ngram_counts(tokens, max_order)`` returns one dict per order ``n = 1..max_order`` mapping each
n-gram (unigrams as strings, higher orders as tuples) to its count.  ``clipped_matches(tokens,
ref_counts)`` returns, per order, sum over hypothesis n-grams g of min(hyp[g], ref[g]) -- BLEU's
clipped n-gram precision numerator (Papineni et al., 2002).  Inner loops run in C (``zip``,
``collections._count_elements``, ``map``); when no n-gram repeats in the hypothesis (most orders of
most sentences) the clipped count is simply the number of hypothesis n-grams found in the reference.
"""
from __future__ import annotations

from collections import _count_elements  # C counting loop behind collections.Counter
from itertools import repeat
from typing import Dict, Iterable, List, Sequence

Counts = Dict[object, int]


def _windows(tokens: Sequence[str], n: int) -> Iterable:
    if n == 1:
        return tokens
    return zip(*[tokens[i:] for i in range(n)])


def ngram_counts(tokens: Sequence[str], max_order: int) -> List[Counts]:
    """``[counts of 1-grams, ..., counts of max_order-grams]`` of ``tokens``."""
    out: List[Counts] = []
    for n in range(1, max_order + 1):
        counts: Counts = {}
        _count_elements(counts, _windows(tokens, n))
        out.append(counts)
    return out


def clipped(hyp: Counts, ref: Counts, hyp_total: int) -> int:
    """Sum over hypothesis n-grams g of min(hyp[g], ref[g]); ``hyp_total`` is sum(hyp.values())."""
    if len(hyp) == hyp_total:  # no repeated n-gram: min(1, ref[g]) is 1 whenever g is in ref
        return sum(map(ref.__contains__, hyp))
    return sum(map(min, hyp.values(), map(ref.get, hyp, repeat(0))))


def clipped_matches(tokens: Sequence[str], ref_counts: Sequence[Counts]) -> List[int]:
    """Per order, the clipped number of hypothesis n-grams that occur in the reference counts."""
    length = len(tokens)
    out: List[int] = []
    for n, ref in enumerate(ref_counts):
        counts: Counts = {}
        _count_elements(counts, _windows(tokens, n + 1))
        out.append(clipped(counts, ref, max(0, length - n)))
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
