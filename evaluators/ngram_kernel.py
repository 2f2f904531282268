"""Clipped n-gram matches segment by segment, compiled with numba (the ``fast`` extra): the kernels of
:class:`~evalpipe.evaluators.ngram_compiled.CompiledIndex` when the C kernel is not built.

The same integers as :class:`~evalpipe.evaluators.ngram_index.RefIndex` (and so as
:func:`~evalpipe.evaluators.ngram_batch.order_matches`), computed one segment at a time instead of
over the whole block, so every sort and search is over a few hundred keys that stay in cache:

* **reference side, once per block** (:class:`~evalpipe.evaluators.ngram_compiled.CompiledIndex`): each segment's alphabet (the sorted
  distinct units of all its references); each unit becomes its rank in it, from 1; each position
  of each reference becomes one key packing its next K ranks (0 past the sentence end), ``bits``
  bits each, and each reference's keys of a segment are sorted.  Sorting by the K-gram also sorts
  by every prefix, so one sorted array serves every order n <= K: ``key >> (K - n) * bits`` is the
  n-gram, valid where its last rank is not 0;
* **hypothesis side, per system**: ranks looked up in a table holding the segment's alphabet
  (``unknown``, all ones, where no reference has the unit: it never matches), keys packed and
  sorted the same way (a counting sort on the first rank, insertion sort in each bucket); then
  ``sum min(hyp count, ref count)`` per reference, every order in one merge of the hypothesis's and
  the reference's sorted keys (:func:`_walk`).  BLEU's multi-reference clipping (against the largest
  reference count) walks each order over the distinct hypothesis n-grams instead, advancing a pointer
  in every reference; there an order with no match ends the segment.

No segment number is packed, so K * bits <= 63 holds for up to 1,022 distinct units per segment at
K = 6 (for more, ``CompiledIndex.build`` returns None and the numpy path runs).
:mod:`~evalpipe.evaluators.ngram_native` runs the same algorithm in C; ``tests/test_batch_stats.py``
checks both against ``order_matches``.
"""
from __future__ import annotations

import numpy as np

from evalpipe.evaluators.compiled import COMPILED, njit  # noqa: F401 (COMPILED: whether numba runs)


@njit(cache=True)
def alphabets(ref_units, ref_offsets):
    """Per segment the sorted distinct units of its references: (alphabet, offsets, widest)."""
    refs, segments = ref_offsets.shape[0], ref_offsets.shape[1] - 1
    alphabet = np.empty(len(ref_units), dtype=np.int64)
    offsets = np.zeros(segments + 1, dtype=np.int64)
    widest = 0
    for s in range(segments):
        size = 0
        for k in range(refs):
            size += ref_offsets[k, s + 1] - ref_offsets[k, s]
        pool = np.empty(size, dtype=np.int64)
        at = 0
        for k in range(refs):
            for p in range(ref_offsets[k, s], ref_offsets[k, s + 1]):
                pool[at] = ref_units[p]
                at += 1
        pool.sort()
        start = offsets[s]
        count = 0
        for p in range(size):
            if p == 0 or pool[p] != pool[p - 1]:
                alphabet[start + count] = pool[p]
                count += 1
        offsets[s + 1] = start + count
        widest = max(widest, count)
    return alphabet[:offsets[segments]].copy(), offsets, widest


@njit(cache=True)
def _sorted_keys(units, lo, hi, alphabet, a_lo, a_hi, order, bits, out, table):
    """Sorted packed keys of the positions units[lo:hi] into out[lo:hi] (see the module docstring).
    ``table``: zeros, as long as the largest unit of any alphabet + 1 (used and zeroed again here)."""
    unknown = (1 << bits) - 1
    n = hi - lo
    for a in range(a_lo, a_hi):
        table[alphabet[a]] = a - a_lo + 1
    ranks = np.empty(n, dtype=np.int64)
    for p in range(n):
        u = units[lo + p]
        rank = table[u] if u < len(table) else 0
        ranks[p] = rank if rank else unknown
    for a in range(a_lo, a_hi):
        table[alphabet[a]] = 0
    # sorted by a counting sort on the first rank, then insertion sort inside each (small) bucket
    buckets = a_hi - a_lo + 2  # ranks 1..a_hi-a_lo, unknown in the last bucket
    start = np.zeros(buckets + 1, dtype=np.int64)
    for p in range(n):
        start[min(ranks[p], buckets - 1) + 1] += 1
    for b in range(buckets):
        start[b + 1] += start[b]
    fill = start[:buckets].copy()
    for p in range(n):
        key = 0
        for j in range(order):
            key = (key << bits) | (ranks[p + j] if p + j < n else 0)
        b = min(ranks[p], buckets - 1)
        at = lo + fill[b]
        fill[b] += 1
        while at > lo + start[b] and out[at - 1] > key:
            out[at] = out[at - 1]
            at -= 1
        out[at] = key


@njit(cache=True)
def reference_keys(ref_units, ref_offsets, alphabet, a_offsets, order, bits):
    keys = np.empty(len(ref_units), dtype=np.int64)
    table = np.zeros(alphabet.max() + 1 if len(alphabet) else 1, dtype=np.int64)
    for k in range(ref_offsets.shape[0]):
        for s in range(ref_offsets.shape[1] - 1):
            _sorted_keys(ref_units, ref_offsets[k, s], ref_offsets[k, s + 1], alphabet, a_offsets[s],
                         a_offsets[s + 1], order, bits, keys, table)
    return keys


@njit(cache=True)
def _walk(hyp_keys, lo, hi, ref_keys, r_lo, r_hi, order, bits, out_row):
    """``out_row[n - 1] += sum over n-grams of min(hyp count, ref count)``, every order at once, by one merge
    of the two sorted key runs: consecutive keys of the merged order share their first ``lcp`` ranks, so
    the n-gram groups of orders above ``lcp`` end between them and are counted then; a group's counts
    are differences of running hypothesis / reference totals.  A group whose n-th rank is 0 runs past
    the sentence end and is skipped."""
    mask = (1 << bits) - 1
    start_h = np.zeros(order + 1, dtype=np.int64)
    start_r = np.zeros(order + 1, dtype=np.int64)
    seen_h = 0
    seen_r = 0
    i, j = lo, r_lo
    previous = -1
    while i < hi or j < r_hi:
        if j >= r_hi or (i < hi and hyp_keys[i] <= ref_keys[j]):
            key = hyp_keys[i]
            from_hyp = True
        else:
            key = ref_keys[j]
            from_hyp = False
        if previous >= 0:
            shared = 0
            while shared < order and (previous >> ((order - 1 - shared) * bits)) == (key >> ((order - 1 - shared) * bits)):
                shared += 1
            for n in range(shared + 1, order + 1):  # the groups of these orders end at previous
                if (previous >> ((order - n) * bits)) & mask:
                    h = seen_h - start_h[n]
                    r = seen_r - start_r[n]
                    out_row[n - 1] += h if h < r else r
                start_h[n] = seen_h
                start_r[n] = seen_r
        if from_hyp:
            seen_h += 1
            i += 1
        else:
            seen_r += 1
            j += 1
        previous = key
    if previous >= 0:
        for n in range(1, order + 1):
            if (previous >> ((order - n) * bits)) & mask:
                h = seen_h - start_h[n]
                r = seen_r - start_r[n]
                out_row[n - 1] += h if h < r else r


@njit(cache=True)
def matches(hyp_units, hyp_offsets, alphabet, a_offsets, ref_keys, ref_offsets, order, bits, clip_to_max):
    """``out[s, n - 1, k]``: clipped order-n matches of segment s against reference k (k = 0 only, against
    the largest reference count, with ``clip_to_max``).  An order without a match ends the segment:
    no longer n-gram can match."""
    refs, segments = ref_offsets.shape[0], ref_offsets.shape[1] - 1
    out = np.zeros((segments, order, 1 if clip_to_max else refs), dtype=np.int64)
    keys = np.empty(len(hyp_units), dtype=np.int64)
    table = np.zeros(alphabet.max() + 1 if len(alphabet) else 1, dtype=np.int64)
    mask = (1 << bits) - 1
    pointer = np.empty(refs, dtype=np.int64)
    row = np.zeros(order, dtype=np.int64)
    for s in range(segments):
        lo, hi = hyp_offsets[s], hyp_offsets[s + 1]
        _sorted_keys(hyp_units, lo, hi, alphabet, a_offsets[s], a_offsets[s + 1], order, bits, keys, table)
        if refs == 1 or not clip_to_max:  # one merge per reference
            for k in range(refs):
                row[:] = 0
                _walk(keys, lo, hi, ref_keys, ref_offsets[k, s], ref_offsets[k, s + 1], order, bits, row)
                out[s, :, k] = row
            continue
        for n in range(1, order + 1):
            shift = (order - n) * bits
            for k in range(refs):
                pointer[k] = ref_offsets[k, s]
            found = 0
            p = lo
            while p < hi:
                gram = keys[p] >> shift
                q = p + 1
                while q < hi and keys[q] >> shift == gram:
                    q += 1
                if gram & mask:  # the n-gram ends inside the sentence
                    most = 0
                    for k in range(refs):
                        r, end = pointer[k], ref_offsets[k, s + 1]
                        while r < end and ref_keys[r] >> shift < gram:
                            r += 1
                        count = 0
                        while r < end and ref_keys[r] >> shift == gram:
                            r += 1
                            count += 1
                        pointer[k] = r
                        if clip_to_max:
                            most = max(most, count)
                        elif count:
                            out[s, n - 1, k] += min(q - p, count)
                            found += 1
                    if clip_to_max and most:
                        out[s, n - 1, 0] += min(q - p, most)
                        found += 1
                p = q
            if not found:
                break
    return out

