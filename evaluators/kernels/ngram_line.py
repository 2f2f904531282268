"""Clipped n-gram matches of one segment (the line protocol's ``SCORE``, sentence scores): the C kernel
and its Python reference, dicts.  Without numpy: a server need not import it.

**The reference** (also what per-segment chrF counts with): ``ngram_table(tokens, max_order)`` returns
one dict mapping every n-gram of orders ``1..max_order`` to its count (unigrams as strings, higher
orders as tuples, so orders never collide); ``clipped_matches(tokens, table, max_order)`` returns, per
order, the sum over hypothesis n-grams g of min(hyp[g], ref[g]) -- BLEU's clipped n-gram precision
numerator (Papineni et al., 2002), against :func:`max_merge` of several references' tables.  Inner
loops run in C (``zip``, ``collections._count_elements``, ``map``).  When an order has no repeated
n-gram in the hypothesis, no higher order has one either, and the clipped count of those orders is
the number of hypothesis n-grams found in the reference.

**The C kernel** (``ngram_matches.c``, the algorithm of :mod:`.ngram_matches` on one segment): the
references' distinct tokens get ranks 1..V in a dict, each position of each reference one key packing
its next N ranks (``bits = (V + 1).bit_length()`` bits each, 0 past the end, all ones for a token no
reference has), and each reference's keys are sorted once (:func:`reference`, kept in the metric's LRU
cache).  A hypothesis is then one C call (:func:`matches`): its tokens looked up in the dict, packed,
sorted, and per order ``sum_g min(hyp count, max_k ref_k count)`` by a walk over its distinct n-grams
with one pointer per reference.  ``tests/test_bleu_line.py`` checks one against the other.
"""
from __future__ import annotations

from array import array
from collections import _count_elements  # C counting loop behind collections.Counter
from typing import Any, Dict, List, Optional, Sequence

from evalpipe.evaluators.kernels import compiled

_c = compiled("ngram_matches")
AVAILABLE = _c is not None
Counts = Dict[object, int]


def reference(refs: Sequence[List[str]], order: int) -> Optional[tuple]:
    """One segment's tokenized references prepared for :func:`matches`: (vocabulary, every reference's
    sorted keys end to end, their bounds, bits), or None when the keys would not fit in 63 bits."""
    vocab: Dict[str, int] = {}
    for tokens in refs:
        for token in tokens:
            if token not in vocab:
                vocab[token] = len(vocab) + 1
    bits = (len(vocab) + 1).bit_length()  # ranks 1..len(vocab); all ones marks a token no reference has
    if bits * order > 63:
        return None
    keys = b"".join(_c.line_keys(list(tokens), vocab, order, bits) for tokens in refs)
    bounds = array("q", [0])
    for tokens in refs:
        bounds.append(bounds[-1] + len(tokens))
    return vocab, keys, bounds.tobytes(), bits


def matches(tokens: List[str], prepared: Any, order: int) -> List[int]:
    """Per order 1..``order``, the clipped matches of a token list against a :func:`reference`
    (against the largest count of any reference)."""
    vocab, keys, bounds, bits = prepared
    return _c.line_matches(tokens, vocab, keys, bounds, order, bits)


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
