"""A block's references indexed for the C kernel (:mod:`~evalpipe.evaluators.ngram_native`, where the
algorithm is described): ``alphabets``, ``reference_keys`` and ``matches``; :class:`CompiledIndex` has the
interface of :class:`~evalpipe.evaluators.ngram_index.RefIndex`, the numpy reference.
"""
from __future__ import annotations

from typing import Any, Iterator, Optional, Sequence

import numpy as np


def _offsets(lengths: np.ndarray) -> np.ndarray:
    return np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)


class CompiledIndex:
    """A block's references prepared for a kernel module's ``matches`` (the interface of ``RefIndex``)."""

    def __init__(self, kernels: Any, alphabet, a_offsets, keys, ref_offsets, bits: int, max_order: int,
                 ref_lengths) -> None:
        self.kernels = kernels
        self.alphabet, self.a_offsets, self.keys, self.ref_offsets = alphabet, a_offsets, keys, ref_offsets
        self.bits, self.max_order, self.ref_lengths = bits, max_order, ref_lengths

    @classmethod
    def build(cls, kernels: Any, refs: Sequence[np.ndarray], ref_lengths: np.ndarray,
              max_order: int) -> Optional["CompiledIndex"]:
        """Index reference streams (``refs[k]``: units of reference k of every segment, end to end;
        ``ref_lengths``: segments x refs) with ``kernels`` (``ngram_native``), or None
        when there is no reference or a segment has too many distinct units for 63-bit keys."""
        if not len(refs):
            return None
        units = np.concatenate(list(refs)).astype(np.int64)
        starts = np.cumsum([0] + [len(r) for r in refs[:-1]])
        ref_offsets = np.stack([start + _offsets(ref_lengths[:, k]) for k, start in enumerate(starts)])
        alphabet, a_offsets, widest = kernels.alphabets(units, ref_offsets)
        bits = max(1, int(widest + 1).bit_length())  # ranks 1..widest and unknown = all ones
        if bits * max_order > 63:
            return None
        keys = kernels.reference_keys(units, ref_offsets, alphabet, a_offsets, max_order, bits)
        return cls(kernels, alphabet, a_offsets, keys, ref_offsets, bits, max_order, ref_lengths)

    def matches(self, units: np.ndarray, lengths: np.ndarray, clip_to_max: bool = False) -> Iterator[np.ndarray]:
        """Per order n = 1..max_order: ``segments x refs`` matches (a vector with ``clip_to_max``)."""
        out = self.kernels.matches(np.ascontiguousarray(units, dtype=np.int64), _offsets(lengths), self.alphabet,
                                   self.a_offsets, self.keys, self.ref_offsets, self.max_order, self.bits, clip_to_max)
        for n in range(self.max_order):
            yield out[:, n, 0] if clip_to_max else out[:, n, :]
