"""A block's reference n-grams indexed once, then matched against any number of hypotheses.

Scoring many systems against the same references (``score-corpus`` with 23 system files, a bench, a
tuner's repeated corpus scores) repeats the reference half of :func:`ngram_batch.order_matches`
for every system.  :class:`RefIndex` does it once per block of references:

* **units renumbered per segment**: unit u of segment s gets its rank among the distinct units of
  segment s's references, from 1 (0 marks "past the sentence end").  A hypothesis unit that none of
  its segment's references holds gets ``unknown`` (one more than the largest rank): an n-gram
  containing it cannot match, so merging such units changes no count.  Ids are small (a segment
  has few distinct units), so ``(segment, unit 1..K)`` packs exactly into one 63-bit key even for
  CJK characters or a large word vocabulary;
* **per order n**: the sorted distinct ``(segment, n-gram)`` keys of all references and their count
  in each reference (a ``keys x refs`` matrix).

:meth:`RefIndex.matches` lays out one hypothesis stream the same way, sorts its packed keys once,
and for every order takes each distinct hypothesis n-gram's count and looks it up in the reference
keys (``searchsorted``); clipped matches are ``min(hyp, ref)`` summed per segment -- the integers of
:func:`~evalpipe.evaluators.ngram_batch.order_matches`, which stays the reference implementation
(``tests/test_batch_stats.py`` checks both against each other and against sacrebleu).
:func:`RefIndex.build` returns None when the keys would not fit; callers then use ``order_matches``.
"""
from __future__ import annotations

from itertools import chain, repeat
from typing import Dict, Iterator, List, Optional, Sequence

import numpy as np

from evalpipe.evaluators import ngram_native
from evalpipe.evaluators.ngram_batch import _bits, _run_starts, _sum_by, _window

UNIT_SHIFT = 32  # global unit ids (code points, word ids) are below 2**32
NOT_IN_VOCABULARY = (1 << UNIT_SHIFT) - 1


def char_units(texts: Sequence[str]) -> np.ndarray:
    """Unicode code points of strings laid end to end (int64)."""
    raw = "".join(texts).encode("utf-32-le", "surrogatepass")
    return np.frombuffer(raw, dtype=np.uint32).astype(np.int64)


def word_units(sentences: Sequence[Sequence[str]], vocab: Dict[str, int]) -> np.ndarray:
    """Word ids of the references' token lists laid end to end; new words get new ids in ``vocab``."""
    return flat_word_units(list(chain.from_iterable(sentences)), vocab)


def flat_word_units(tokens: List[str], vocab: Dict[str, int]) -> np.ndarray:
    """Word ids of a flat token list; words new to ``vocab`` get the next ids, in order of first appearance
    (the distinct words are found by ``dict.fromkeys``, the ids looked up by :func:`ids`)."""
    for word in dict.fromkeys(tokens):
        if word not in vocab:
            vocab[word] = len(vocab)
    return ids(tokens, vocab)


def ids(tokens: Sequence[str], vocab: Dict[str, int]) -> np.ndarray:
    """Word ids of a hypothesis's flat token list (``NOT_IN_VOCABULARY`` for words no reference has); in C
    (:func:`~evalpipe.evaluators.ngram_native.ids`) when it was built."""
    if ngram_native.AVAILABLE and type(tokens) is list:
        return ngram_native.ids(tokens, vocab, NOT_IN_VOCABULARY)
    return np.fromiter(map(vocab.get, tokens, repeat(NOT_IN_VOCABULARY)), dtype=np.int64, count=len(tokens))


def lengths_of(items: Sequence[Sequence]) -> np.ndarray:
    return np.fromiter(map(len, items), dtype=np.int64, count=len(items))


class RefIndex:
    """The reference side of a block (see the module docstring)."""

    def __init__(self, distinct: np.ndarray, seg_start: np.ndarray, unit_bits: int, seg_bits: int,
                 orders: List[tuple], ref_lengths: np.ndarray, max_order: int) -> None:
        self.distinct, self.seg_start = distinct, seg_start  # sorted (segment << 32 | unit) keys, per-segment starts
        self.unit_bits, self.seg_bits, self.max_order = unit_bits, seg_bits, max_order
        self.orders = orders  # per order: (sorted distinct keys, keys x refs counts)
        self.ref_lengths = ref_lengths  # segments x refs
        self.unknown = (1 << unit_bits) - 1

    @classmethod
    def build(cls, refs: Sequence[np.ndarray], ref_lengths: np.ndarray, max_order: int) -> Optional["RefIndex"]:
        """Index reference streams (``refs[k]``: the units of reference k of every segment, end to end;
        ``ref_lengths``: segments x refs).  None when the packed keys would not fit in 63 bits."""
        segments = ref_lengths.shape[0]
        segs = [np.repeat(np.arange(segments, dtype=np.int64), ref_lengths[:, k]) for k in range(len(refs))]
        keys = np.concatenate([(s << UNIT_SHIFT) | u for s, u in zip(segs, refs)]) if refs else np.zeros(0, np.int64)
        distinct = np.unique(keys)
        seg_start = np.searchsorted(distinct, np.arange(segments + 1, dtype=np.int64) << UNIT_SHIFT)
        widest = int(np.diff(seg_start).max()) if segments else 0
        unit_bits, seg_bits = _bits(widest + 2), _bits(segments)
        if seg_bits + max_order * unit_bits > 63:
            return None
        index = cls(distinct, seg_start, unit_bits, seg_bits, [], ref_lengths, max_order)
        per_ref = [index._sorted_keys(u, ref_lengths[:, k]) for k, u in enumerate(refs)]
        for n in range(1, max_order + 1):
            grams = [index._order_runs(ordered, n) for ordered in per_ref]
            union = np.unique(np.concatenate([g for g, _ in grams]))
            counts = np.zeros((len(union), len(refs)), dtype=np.int64)
            for k, (g, c) in enumerate(grams):
                counts[np.searchsorted(union, g), k] = c
            index.orders.append((union, counts))
        return index

    def _local(self, units: np.ndarray, seg: np.ndarray) -> np.ndarray:
        """Per-segment ranks of units (1-based), ``unknown`` where the segment's references lack them."""
        keys = (seg << UNIT_SHIFT) | units
        at = np.searchsorted(self.distinct, keys)
        found = at < len(self.distinct)
        found[found] = self.distinct[at[found]] == keys[found]
        return np.where(found, at - self.seg_start[seg] + 1, self.unknown)

    def _sorted_keys(self, units: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """Sorted keys packing (segment, next ``max_order`` local units) of every position of a stream."""
        segments = len(lengths)
        seg = np.repeat(np.arange(segments, dtype=np.int64), lengths)
        if not len(units):
            return np.zeros(0, dtype=np.int64)
        room = np.repeat(np.cumsum(lengths), lengths) - np.arange(len(units), dtype=np.int64)
        packed = _window(self._local(units, seg), room, 0, self.max_order, self.unit_bits)
        return np.sort((seg << (self.max_order * self.unit_bits)) | packed)

    def _order_runs(self, ordered: np.ndarray, n: int) -> tuple:
        """(distinct (segment, n-gram) keys, their counts) from a stream's sorted keys."""
        gram = ordered >> ((self.max_order - n) * self.unit_bits)
        gram = gram[(gram & ((1 << self.unit_bits) - 1)) != 0]  # the n-gram ends inside the sentence
        if not len(gram):
            return gram, gram
        starts = np.flatnonzero(_run_starts(gram))
        return gram[starts], np.diff(np.append(starts, len(gram)))

    def matches(self, units: np.ndarray, lengths: np.ndarray, clip_to_max: bool = False) -> Iterator[np.ndarray]:
        """For n = 1..max_order, a hypothesis stream's clipped matches: ``segments x refs`` (or with
        ``clip_to_max`` a ``segments`` vector against the largest reference count), as
        :func:`~evalpipe.evaluators.ngram_batch.order_matches` gives them."""
        segments, refs = self.ref_lengths.shape
        ordered = self._sorted_keys(units, lengths)
        for n, (union, counts) in enumerate(self.orders, 1):
            gram, hyp = self._order_runs(ordered, n)
            at = np.searchsorted(union, gram)
            found = at < len(union)
            found[found] = union[at[found]] == gram[found]
            gram, hyp, ref = gram[found], hyp[found], counts[at[found]]
            seg = gram >> (n * self.unit_bits)
            if clip_to_max:
                yield _sum_by(seg, np.minimum(hyp, ref.max(axis=1) if refs > 1 else ref[:, 0]), segments)
            else:
                yield np.column_stack([_sum_by(seg, np.minimum(hyp, ref[:, k]), segments) for k in range(refs)]) \
                    if refs else np.zeros((segments, 0), dtype=np.int64)


def build(refs: Sequence[np.ndarray], ref_lengths: np.ndarray, max_order: int) -> Optional[object]:
    """The fastest index that fits: :class:`~evalpipe.evaluators.ngram_compiled.CompiledIndex` on the C kernel
    when it was built, else :class:`RefIndex`; None when none fits."""
    from evalpipe.evaluators import ngram_compiled

    index = ngram_compiled.CompiledIndex.build(ngram_native, refs, ref_lengths, max_order) \
        if ngram_native.AVAILABLE else None
    return index if index is not None else RefIndex.build(refs, ref_lengths, max_order)
