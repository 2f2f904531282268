"""The C kernel ``_ngram_native`` (``evaluators/ngram_native.c``, built at install when a compiler is
there) with the signatures of :mod:`~evalpipe.evaluators.ngram_kernel`'s numba kernels.

Same algorithm and integers as the numba kernels (described in that module): per-segment alphabets,
keys packing each position's next K ranks, one merge per reference.  It loads in a millisecond where
numba needs ~0.8 s for its import and first cached call, which is most of a ``score-corpus`` run.
``AVAILABLE`` says whether the extension was built.  The line protocol's one-sentence entry points
are in :mod:`~evalpipe.evaluators.ngram_line` (without numpy, which a server need not import).
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
