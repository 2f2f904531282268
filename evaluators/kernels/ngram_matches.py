"""Clipped n-gram matches of a block of segments against its references, indexed once: the C kernel
(``ngram_matches.c``) and its numpy reference (:class:`RefIndex`).

Scoring many systems against the same references (``score-corpus`` with 23 system files, a bench, a
tuner's repeated corpus scores) shares the reference half of the work, so a block's references are
indexed once (:func:`build`) and any number of hypothesis streams matched against the index
(``matches``): per order n, ``sum_g min(hyp count, ref count)`` for every segment and reference (or,
BLEU's multi-reference clipping, against the largest reference count).

**The numpy reference** (:class:`RefIndex`, what runs without a compiler):

* units renumbered per segment: unit u of segment s gets its rank among the distinct units of segment
  s's references, from 1 (0 marks "past the sentence end").  A hypothesis unit that none of its
  segment's references holds gets ``unknown`` (one more than the largest rank): an n-gram containing
  it cannot match, so merging such units changes no count.  Ids are small, so ``(segment, unit 1..K)``
  packs exactly into one 63-bit key even for CJK characters or a large word vocabulary;
* per order n: the sorted distinct ``(segment, n-gram)`` keys of all references and their count in
  each reference (a ``keys x refs`` matrix); a hypothesis stream is laid out the same way, its packed
  keys sorted once, and each distinct hypothesis n-gram looked up (``searchsorted``).

**The C kernel** (:class:`CompiledIndex`) computes the same integers one segment at a time, so every
sort and search is over a few hundred keys that stay in cache:

* reference side, once per block: each segment's alphabet (the sorted distinct units of all its
  references); each unit becomes its rank in it, from 1; each position of each reference one key
  packing its next K ranks (0 past the sentence end), ``bits`` bits each, sorted per reference.
  Sorting by the K-gram also sorts by every prefix, so one sorted array serves every order n <= K;
* hypothesis side: ranks looked up in a table holding the segment's alphabet (``unknown``, all ones,
  where no reference has the unit), keys packed and sorted the same way (a counting sort on the first
  rank, insertion sort in each bucket); then one merge of the hypothesis's and each reference's sorted
  keys per order.  BLEU's clipping walks the distinct hypothesis n-grams with a pointer per reference.

No segment number is packed in C, so K * bits <= 63 holds for up to 1,022 distinct units per segment
at K = 6; the reference packs the segment too.  :func:`build` gives None when the keys do not fit;
the plugins then count that block's segments one by one (:mod:`.ngram_line`'s dict reference).
``tests/test_batch_stats.py`` checks both implementations against each other and against sacrebleu.
The unit helpers (:func:`char_units`, :func:`word_units`, :func:`ids`) lay text out for them.
"""
from __future__ import annotations

from itertools import chain, repeat
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from evalpipe.evaluators.kernels import compiled

_c = compiled("ngram_matches")
AVAILABLE = _c is not None
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
    when it was built."""
    if AVAILABLE and type(tokens) is list:
        return np.frombuffer(_c.ids(tokens, vocab, NOT_IN_VOCABULARY), dtype=np.int64)
    return np.fromiter(map(vocab.get, tokens, repeat(NOT_IN_VOCABULARY)), dtype=np.int64, count=len(tokens))


def lengths_of(items: Sequence[Sequence]) -> np.ndarray:
    return np.fromiter(map(len, items), dtype=np.int64, count=len(items))


def ngram_totals(lengths: np.ndarray, n: int) -> np.ndarray:
    """Number of order-n grams of sentences of the given lengths: ``max(0, length - n + 1)``."""
    return np.maximum(lengths - (n - 1), 0)


def _bits(count: int) -> int:
    return max(1, (count - 1).bit_length())


def _run_starts(ordered: np.ndarray) -> np.ndarray:
    """True where a sorted array's value differs from the one before (and at 0)."""
    new = np.empty(len(ordered), dtype=bool)
    new[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    return new


def _window(a: np.ndarray, room: np.ndarray, start: int, take: int, unit_bits: int) -> np.ndarray:
    """Per position p, units p+start .. p+start+take-1 packed into one integer, 0 past the sentence end."""
    size = len(a)
    packed = np.zeros(size, dtype=np.int64)
    for j in range(start, start + take):
        column = np.zeros(size, dtype=np.int64)
        if j < size:  # a block of fewer units than the order has no unit j
            column[:size - j] = a[j:]
        column[room <= j] = 0
        packed = (packed << unit_bits) | column
    return packed


def _sum_by(index: np.ndarray, values: np.ndarray, length: int) -> np.ndarray:
    """int64 sums of ``values`` grouped by ``index`` (exact: float64 holds these counts exactly)."""
    return np.bincount(index, weights=values, minlength=length).astype(np.int64)


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
        ``clip_to_max`` a ``segments`` vector against the largest reference count), the integers
        :class:`CompiledIndex` gives."""
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


def _alphabets(ref_units: np.ndarray, ref_offsets: np.ndarray) -> Tuple[np.ndarray, np.ndarray, int]:
    """Per segment the sorted distinct units of its references: (alphabet, offsets, widest)."""
    refs, width = ref_offsets.shape
    alphabet = np.empty(len(ref_units), dtype=np.int64)
    offsets = np.empty(width, dtype=np.int64)
    size, widest = _c.alphabets(ref_units, np.ascontiguousarray(ref_offsets), refs, alphabet, offsets)
    return alphabet[:size].copy(), offsets, widest


def _reference_keys(ref_units: np.ndarray, ref_offsets: np.ndarray, alphabet: np.ndarray, a_offsets: np.ndarray,
                   order: int, bits: int) -> np.ndarray:
    """Each reference sentence's sorted packed keys, laid out like ``ref_units``."""
    keys = np.empty(len(ref_units), dtype=np.int64)
    _c.reference_keys(ref_units, np.ascontiguousarray(ref_offsets), ref_offsets.shape[0], alphabet, a_offsets,
                      order, bits, keys)
    return keys


def _matches(hyp_units: np.ndarray, hyp_offsets: np.ndarray, alphabet: np.ndarray, a_offsets: np.ndarray,
            ref_keys: np.ndarray, ref_offsets: np.ndarray, order: int, bits: int, clip_to_max: bool) -> np.ndarray:
    """``out[s, n - 1, k]``: clipped order-n matches of segment s against reference k (k = 0 only,
    against the largest reference count, with ``clip_to_max``)."""
    refs = ref_offsets.shape[0]
    out = np.empty((len(hyp_offsets) - 1, order, 1 if clip_to_max else refs), dtype=np.int64)
    _c.matches(hyp_units, hyp_offsets, alphabet, a_offsets, ref_keys, np.ascontiguousarray(ref_offsets), refs,
               order, bits, clip_to_max, out)
    return out


def _offsets(lengths: np.ndarray) -> np.ndarray:
    return np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)


class CompiledIndex:
    """A block's references prepared for the C kernel's ``matches`` (the interface of ``RefIndex``)."""

    def __init__(self, alphabet: np.ndarray, a_offsets: np.ndarray, keys: np.ndarray, ref_offsets: np.ndarray,
                 bits: int, max_order: int, ref_lengths: np.ndarray) -> None:
        self.alphabet, self.a_offsets, self.keys, self.ref_offsets = alphabet, a_offsets, keys, ref_offsets
        self.bits, self.max_order, self.ref_lengths = bits, max_order, ref_lengths

    @classmethod
    def build(cls, refs: Sequence[np.ndarray], ref_lengths: np.ndarray, max_order: int) -> Optional["CompiledIndex"]:
        """Index reference streams (``refs[k]``: units of reference k of every segment, end to end;
        ``ref_lengths``: segments x refs), or None when there is no reference or a segment has too many
        distinct units for 63-bit keys."""
        if not len(refs):
            return None
        units = np.concatenate(list(refs)).astype(np.int64)
        starts = np.cumsum([0] + [len(r) for r in refs[:-1]])
        ref_offsets = np.stack([start + _offsets(ref_lengths[:, k]) for k, start in enumerate(starts)])
        alphabet, a_offsets, widest = _alphabets(units, ref_offsets)
        bits = max(1, int(widest + 1).bit_length())  # ranks 1..widest and unknown = all ones
        if bits * max_order > 63:
            return None
        keys = _reference_keys(units, ref_offsets, alphabet, a_offsets, max_order, bits)
        return cls(alphabet, a_offsets, keys, ref_offsets, bits, max_order, ref_lengths)

    def matches(self, units: np.ndarray, lengths: np.ndarray, clip_to_max: bool = False) -> Iterator[np.ndarray]:
        """Per order n = 1..max_order: ``segments x refs`` matches (a vector with ``clip_to_max``)."""
        out = _matches(np.ascontiguousarray(units, dtype=np.int64), _offsets(lengths), self.alphabet,
                                   self.a_offsets, self.keys, self.ref_offsets, self.max_order, self.bits, clip_to_max)
        for n in range(self.max_order):
            yield out[:, n, 0] if clip_to_max else out[:, n, :]


def build(refs: Sequence[np.ndarray], ref_lengths: np.ndarray, max_order: int) -> Optional[Any]:
    """The index of a block's reference streams: :class:`CompiledIndex` when the C kernel was built, else
    :class:`RefIndex`; None when the keys do not fit."""
    return (CompiledIndex if AVAILABLE else RefIndex).build(refs, ref_lengths, max_order)
