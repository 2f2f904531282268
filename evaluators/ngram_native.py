"""Clipped n-gram matches segment by segment in C: ``_ngram_native`` (``evaluators/ngram_native.c``, built at
install when a compiler is there), the kernel of :class:`~evalpipe.evaluators.ngram_compiled.CompiledIndex`.

The same integers as :class:`~evalpipe.evaluators.ngram_index.RefIndex` (numpy, the reference this kernel is
tested against, and what runs without a compiler), computed one segment at a time instead of
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
``tests/test_batch_stats.py`` checks it against ``RefIndex`` and ``order_matches``.  ``AVAILABLE`` says whether
the extension was built.  The line protocol's one-sentence entry points are in
:mod:`~evalpipe.evaluators.ngram_line` (without numpy, which a server need not import).
"""
from __future__ import annotations

from typing import Dict, List, Tuple

import numpy as np

try:
    from evalpipe.evaluators import _ngram_native as _c
    AVAILABLE = True
except ImportError:  # pragma: no cover - exercised when no C compiler was there at install
    _c = None
    AVAILABLE = False


def alphabets(ref_units: np.ndarray, ref_offsets: np.ndarray) -> Tuple[np.ndarray, np.ndarray, int]:
    """Per segment the sorted distinct units of its references: (alphabet, offsets, widest)."""
    refs, width = ref_offsets.shape
    alphabet = np.empty(len(ref_units), dtype=np.int64)
    offsets = np.empty(width, dtype=np.int64)
    size, widest = _c.alphabets(ref_units, np.ascontiguousarray(ref_offsets), refs, alphabet, offsets)
    return alphabet[:size].copy(), offsets, widest


def reference_keys(ref_units: np.ndarray, ref_offsets: np.ndarray, alphabet: np.ndarray, a_offsets: np.ndarray,
                   order: int, bits: int) -> np.ndarray:
    """Each reference sentence's sorted packed keys, laid out like ``ref_units``."""
    keys = np.empty(len(ref_units), dtype=np.int64)
    _c.reference_keys(ref_units, np.ascontiguousarray(ref_offsets), ref_offsets.shape[0], alphabet, a_offsets,
                      order, bits, keys)
    return keys


def matches(hyp_units: np.ndarray, hyp_offsets: np.ndarray, alphabet: np.ndarray, a_offsets: np.ndarray,
            ref_keys: np.ndarray, ref_offsets: np.ndarray, order: int, bits: int, clip_to_max: bool) -> np.ndarray:
    """``out[s, n - 1, k]``: clipped order-n matches of segment s against reference k (k = 0 only,
    against the largest reference count, with ``clip_to_max``)."""
    refs = ref_offsets.shape[0]
    out = np.empty((len(hyp_offsets) - 1, order, 1 if clip_to_max else refs), dtype=np.int64)
    _c.matches(hyp_units, hyp_offsets, alphabet, a_offsets, ref_keys, np.ascontiguousarray(ref_offsets), refs,
               order, bits, clip_to_max, out)
    return out


def ids(tokens: List[str], vocab: Dict[str, int], missing: int) -> np.ndarray:
    """int64 ``[vocab.get(t, missing) for t in tokens]`` (by the loop that looks up the one-line path's ranks)."""
    return np.frombuffer(_c.ids(tokens, vocab, missing), dtype=np.int64)
