"""N-gram matches of a whole block of segments at once, vectorized with numpy.

The per-segment metrics (:mod:`evalpipe.evaluators.bleu`, :mod:`evalpipe.evaluators.chrf`) count
n-grams in dicts, one sentence at a time.  For corpus scoring the same integer counts are computed
for every segment of a block in a few array passes (:func:`order_matches`):

* every unit (a token id or a character code point) of every sentence -- segment by segment, the
  hypothesis then each reference -- is laid out in one array, with its segment number, its stream
  and the end of its sentence; units are renumbered densely from 1 (0 = past the sentence end);
* every position gets one 64-bit key packing (segment, its next K units, stream); after one sort
  the occurrences of each (segment, n-gram) are a contiguous run for every n <= K, and prefix
  sums of the stream labels give the run's count in the hypothesis and in each reference;
* when K units do not fit, the (segment, K-gram) prefixes are replaced by their exact dense rank
  and the next orders are packed after it.  Keys are exact -- no hashing, no collisions.

Clipped matches are then ``minimum(hyp, ref)`` summed per segment, the integers the per-segment
code gives; ``tests/test_batch_stats.py`` checks both paths against each other and against
sacrebleu on real data.
"""
from __future__ import annotations

from itertools import chain, count
from typing import Dict, Iterator, NamedTuple, Sequence, Tuple

import numpy as np


class Streams(NamedTuple):
    """Units of one block of segments, laid out segment by segment: for segment i the hypothesis
    (stream 0), then each reference (streams 1..k).  Keys built from the segment number then come
    out nearly sorted, which makes numpy's sorts cheap."""

    units: np.ndarray  # int64 unit ids
    seg: np.ndarray  # segment number of each unit
    side: np.ndarray  # stream number of each unit
    end: np.ndarray  # index one past the end of the unit's sentence
    lengths: np.ndarray  # segments x streams: the length (units) of every sentence


def _frame(lengths: np.ndarray) -> tuple:
    flat = lengths.ravel()
    segments, streams = lengths.shape
    seg = np.repeat(np.repeat(np.arange(segments, dtype=np.int64), streams), flat)
    side = np.repeat(np.tile(np.arange(streams, dtype=np.int64), segments), flat)
    end = np.repeat(np.cumsum(flat), flat)
    return seg, side, end


def _lengths(rows: Sequence[Sequence[Sequence]]) -> np.ndarray:
    streams = len(rows[0]) if rows else 1
    flat = np.fromiter(map(len, chain.from_iterable(rows)), dtype=np.int64, count=len(rows) * streams)
    return flat.reshape(len(rows), streams)


def layout_ids(streams: Sequence[Sequence[Sequence[str]]]) -> Streams:
    """:class:`Streams` of token lists ``streams[k][i]`` (stream k, segment i); every distinct token
    gets an integer id (C-level dict work)."""
    rows = list(zip(*streams))
    lengths = _lengths(rows)
    vocab: Dict[str, int] = {}
    tokens = chain.from_iterable(chain.from_iterable(rows))
    units = np.fromiter(map(vocab.setdefault, tokens, count()), dtype=np.int64, count=int(lengths.sum()))
    return Streams(units, *_frame(lengths), lengths)


def layout_chars(streams: Sequence[Sequence[str]]) -> Streams:
    """:class:`Streams` of strings ``streams[k][i]`` as sequences of Unicode code points."""
    rows = list(zip(*streams))
    lengths = _lengths(rows)
    text = "".join(chain.from_iterable(rows)).encode("utf-32-le", "surrogatepass")
    units = np.frombuffer(text, dtype=np.uint32).astype(np.int64)
    return Streams(units, *_frame(lengths), lengths)


def _run_starts(ordered: np.ndarray) -> np.ndarray:
    """True where a sorted array's value differs from the one before (and at 0)."""
    new = np.empty(len(ordered), dtype=bool)
    new[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    return new


def _dense(key: np.ndarray) -> tuple:
    """(sorted distinct values, rank of each value among them) -- ``np.unique(return_inverse=True)``
    with a stable sort, fast on nearly sorted keys."""
    order = key.argsort(kind="stable")
    ordered = key[order]
    new = _run_starts(ordered)
    ranks = np.empty(len(key), dtype=np.int64)
    ranks[order] = np.cumsum(new) - 1
    return ordered[new], ranks


def _compact(units: np.ndarray) -> Tuple[np.ndarray, int]:
    """Units renumbered densely 0..A-1 (order kept), and A."""
    present = np.zeros(int(units.max()) + 1, dtype=bool)
    present[units] = True
    table = np.cumsum(present) - 1
    return table[units], int(table[-1]) + 1


def _bits(count: int) -> int:
    return max(1, (count - 1).bit_length())


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


def order_matches(streams: Streams, max_order: int, clip_to_max: bool = False) -> Iterator[np.ndarray]:
    """For n = 1..``max_order``, the clipped n-gram matches of every segment: a ``segments x refs``
    int64 matrix of sum_g min(hyp[g], ref_k[g]) per reference k, or with ``clip_to_max`` a
    ``segments`` vector of sum_g min(hyp[g], max_k ref_k[g]) (BLEU's multi-reference clipping).

    Each position's key packs ``(segment, unit 1, ..., unit K, stream)`` with units numbered from 1
    and 0 past the end of the sentence.  After one sort, the occurrences of every order-n gram
    (n <= K) of a segment are one contiguous run; prefix sums of the stream labels give each run's
    count in every stream.  When the units of all orders do not fit in 62 bits, the first K orders
    are done this way, the (segment, K-gram) prefixes are replaced by their exact dense rank, and
    the next orders are packed after that rank."""
    units = streams.units
    segments, width = streams.lengths.shape
    refs = width - 1
    if not len(units):
        for _ in range(max_order):
            yield np.zeros(segments if clip_to_max else (segments, refs), dtype=np.int64)
        return
    a, alphabet = _compact(units)
    a += 1  # 0 marks "past the end of the sentence"
    unit_bits, side_bits = _bits(alphabet + 1), _bits(width)
    room = streams.end - np.arange(len(units), dtype=np.int64)  # units left in the sentence
    where = np.arange(len(units), dtype=np.int64)  # positions taking part in this phase
    prefix, prefix_bits, seg_of_prefix = streams.seg, _bits(segments), None
    done = 0
    while done < max_order:
        take = min(max_order - done, (62 - prefix_bits - side_bits) // unit_bits)
        if take < 1:
            raise OverflowError(f"block too large for exact 64-bit n-gram keys ({len(units)} units, "
                                f"{alphabet} distinct units)")
        full = (prefix << (take * unit_bits)) | _window(a, room, done, take, unit_bits)[where]
        ordered = np.sort((full << side_bits) | streams.side[where])
        side = ordered & ((1 << side_bits) - 1)
        below = [np.concatenate(([0], np.cumsum(side == k))) for k in range(width)]  # stream counts so far
        for m in range(1, take + 1):
            yield _run_matches(ordered, below, (take - m) * unit_bits + side_bits, m * unit_bits, unit_bits,
                               segments, seg_of_prefix, clip_to_max)
        done += take
        if done < max_order:  # rank the (prefix, done-gram) of positions that have a longer gram
            longer = room[where] > done
            distinct, prefix = _dense(full[longer])
            lead = distinct >> (take * unit_bits)
            seg_of_prefix = lead if seg_of_prefix is None else seg_of_prefix[lead]
            where, prefix_bits = where[longer], _bits(len(distinct))


def _run_matches(ordered: np.ndarray, below: list, shift: int, unit_shift: int, unit_bits: int, segments: int,
                 seg_of_prefix, clip_to_max: bool) -> np.ndarray:
    """Matches of one order from the sorted keys (see :func:`order_matches`)."""
    gram = ordered >> shift
    starts = np.flatnonzero(_run_starts(gram))
    first = gram[starts]
    real = (first & ((1 << unit_bits) - 1)) != 0  # the gram's last unit is inside the sentence
    ends = np.append(starts[1:], len(gram))[real]
    starts, first = starts[real], first[real]
    seg = first >> unit_shift
    if seg_of_prefix is not None:
        seg = seg_of_prefix[seg]
    per_stream = [b[ends] - b[starts] for b in below]
    hyp = per_stream[0]
    if clip_to_max:
        ref = per_stream[1] if len(per_stream) == 2 else np.maximum.reduce(per_stream[1:])
        return _sum_by(seg, np.minimum(hyp, ref), segments)
    return np.column_stack([_sum_by(seg, np.minimum(hyp, ref), segments) for ref in per_stream[1:]])


def _sum_by(index: np.ndarray, values: np.ndarray, length: int) -> np.ndarray:
    """int64 sums of ``values`` grouped by ``index`` (exact: float64 holds these counts exactly)."""
    return np.bincount(index, weights=values, minlength=length).astype(np.int64)


def ngram_totals(lengths: np.ndarray, n: int) -> np.ndarray:
    """Number of order-n grams of sentences of the given lengths: ``max(0, length - n + 1)``."""
    return np.maximum(lengths - (n - 1), 0)
