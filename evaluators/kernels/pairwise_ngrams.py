"""Clipped n-gram matches of every candidate against every pseudo-reference of its segment (minimum Bayes
risk decoding), or against the mean of the pseudo-references' n-gram counts (reference aggregation).

C: ``pairwise_ngrams.c`` (``_pairwise_ngrams``); this module is the facade and the Python reference
(``collections.Counter`` of n-gram tuples), which gives the same numbers -- the aggregate's float sums in the
same order -- and runs when the extension was not built or ``EVALPIPE_IMPLEMENTATION=python``.

Layout: ``units`` holds S sentences' unit ids end to end (characters for chrF, word ids for chrF++'s words
and BLEU; ids in 0 .. 2^32 - 1), ``starts`` their S + 1 offsets; segment g's candidates are sentences
``hyps[2g] .. hyps[2g+1]-1`` and its pseudo-references ``refs[2g] .. refs[2g+1]-1`` (the same range for
self-MBR), ``hyps`` and ``refs`` holding each segment's first and end sentence.

* :func:`pairwise` -> int64 ``[pairs, order]``: per pair (candidate-major within a segment, segments in
  order) and n = 1..order, sum over the candidate's n-grams of min(its count, the pseudo-reference's count).
* :func:`selected` -> int64 ``[pairs, order]``: the same for the (candidate, pseudo-reference) sentence pairs
  asked only (``pairs`` flat, segment g's ``at[g] .. at[g+1]-1``): each segment's n-grams counted once.
* :func:`profiles` -> one int64 ``[pseudo-references, V]`` a segment: each pseudo-reference's count of each of
  the segment's V distinct n-grams, columns in the order first met (pseudo-reference, order, position): the
  statistic vectors centroid MBR clusters.
* :func:`aggregate` -> float64 ``[candidates, order]``: the same against the mean count of each n-gram over
  the segment's pseudo-references (summed in reference order, then divided; 0 rows when it has none).
* :func:`bleu` -> float64: the sentence BLEU of every int64 stats row ``[hyp_len, ref_len, correct_1..N,
  total_1..N]``, computed as sacrebleu 2.x's ``compute_bleu`` does, step for step, with the C library's
  ``exp``/``log`` (CPython's ``math`` calls them too): the same bits, where numpy's vectorized ``exp`` is
  not always (it differs in the last bit for about 5% of arguments).
"""
from __future__ import annotations

from collections import Counter
from typing import Dict, List, Sequence, Tuple

import numpy as np

from evalpipe.evaluators.kernels import compiled
from evalpipe.evaluators.kernels.bleu_score import bleu_score


#: the largest unit id: the C kernel packs (prefix id, unit) into one 64-bit key
UNIT_MAX = 2 ** 32 - 1


def _arrays(units, starts, hyps, refs):
    return tuple(np.ascontiguousarray(a, dtype=np.int64) for a in (units, starts, hyps, refs))


def pairwise(units: Sequence[int], starts: Sequence[int], hyps: Sequence[int], refs: Sequence[int],
             order: int) -> np.ndarray:
    units, starts, hyps, refs = _arrays(units, starts, hyps, refs)
    native = compiled("pairwise_ngrams")
    pairs = int(((hyps[1::2] - hyps[0::2]) * (refs[1::2] - refs[0::2])).sum())
    if native is not None:
        return np.frombuffer(native.pairwise(units, starts, hyps, refs, order), dtype=np.int64).reshape(pairs, order)
    return _pairwise_reference(units, starts, hyps, refs, order).reshape(pairs, order)


def aggregate(units: Sequence[int], starts: Sequence[int], hyps: Sequence[int], refs: Sequence[int],
              order: int) -> np.ndarray:
    units, starts, hyps, refs = _arrays(units, starts, hyps, refs)
    native = compiled("pairwise_ngrams")
    rows = int((hyps[1::2] - hyps[0::2]).sum())
    if native is not None:
        return np.frombuffer(native.aggregate(units, starts, hyps, refs, order), dtype=np.float64).reshape(rows, order)
    return _aggregate_reference(units, starts, hyps, refs, order).reshape(rows, order)


def selected(units: Sequence[int], starts: Sequence[int], hyps: Sequence[int], refs: Sequence[int], order: int,
             pairs: Sequence[int], at: Sequence[int]) -> np.ndarray:
    units, starts, hyps, refs = _arrays(units, starts, hyps, refs)
    pairs, at = (np.ascontiguousarray(a, dtype=np.int64) for a in (pairs, at))
    native = compiled("pairwise_ngrams")
    if native is not None:
        return np.frombuffer(native.selected(units, starts, hyps, refs, order, pairs, at),
                             dtype=np.int64).reshape(-1, order)
    return _selected_reference(units, starts, hyps, refs, order, pairs, at).reshape(-1, order)


def _selected_reference(units, starts, hyps, refs, order, pairs, at) -> np.ndarray:
    _check(units, starts, hyps, refs, order)
    n_pairs, segments = len(pairs) // 2, len(hyps) // 2
    bad = len(pairs) % 2 or len(at) != segments + 1 or at[0] != 0 or at[-1] != n_pairs or (np.diff(at) < 0).any()
    for g in range(segments if not bad else 0):
        for p in range(at[g], at[g + 1]):
            h, r = pairs[2 * p], pairs[2 * p + 1]
            bad = bad or not (hyps[2 * g] <= h < hyps[2 * g + 1] and refs[2 * g] <= r < refs[2 * g + 1])
    if bad:
        raise ValueError("pairwise_ngrams: expected pairs of (candidate, pseudo-reference) sentence numbers within "
                         "their segment's ranges, and at of G + 1 rising offsets from 0 to the number of pairs")
    out: List[int] = []
    for p in range(n_pairs):
        c, r = _counts(units, starts, pairs[2 * p], order), _counts(units, starts, pairs[2 * p + 1], order)
        out += [sum(min(v, r[n].get(key, 0)) for key, v in c[n].items()) for n in range(order)]
    return np.array(out, dtype=np.int64)


def profiles(units: Sequence[int], starts: Sequence[int], refs: Sequence[int], order: int) -> List[np.ndarray]:
    units, starts, refs, _ = _arrays(units, starts, refs, refs)
    native = compiled("pairwise_ngrams")
    if native is not None:
        counts, widths = native.profiles(units, starts, refs, refs, order)
        flat, widths = np.frombuffer(counts, dtype=np.int64), np.frombuffer(widths, dtype=np.int64)
    else:
        flat, widths = _profiles_reference(units, starts, refs, order)
    out, at = [], 0
    for g, width in enumerate(widths.tolist()):
        n = int(refs[2 * g + 1] - refs[2 * g])
        out.append(flat[at:at + n * width].reshape(n, width))
        at += n * width
    return out


def _profiles_reference(units, starts, refs, order) -> Tuple[np.ndarray, np.ndarray]:
    _check(units, starts, refs, refs, order)
    flat: List[int] = []
    widths: List[int] = []
    for g in range(len(refs) // 2):
        column: Dict[tuple, int] = {}  # n-grams in the order first met: sentence, order, position
        rows = []
        for k in range(refs[2 * g], refs[2 * g + 1]):
            u = units[starts[k]:starts[k + 1]].tolist()
            row: Dict[int, int] = {}
            for n in range(1, order + 1):
                for p in range(len(u) - n + 1):
                    c = column.setdefault(tuple(u[p:p + n]), len(column))
                    row[c] = row.get(c, 0) + 1
            rows.append(row)
        for row in rows:
            dense = [0] * len(column)
            for c, v in row.items():
                dense[c] = v
            flat += dense
        widths.append(len(column) if rows else 0)
    return np.array(flat, dtype=np.int64), np.array(widths, dtype=np.int64)


def _counts(units: np.ndarray, starts: np.ndarray, k: int, order: int) -> List[Counter]:
    u = units[starts[k]:starts[k + 1]].tolist()
    return [Counter(tuple(u[p:p + n]) for p in range(len(u) - n + 1)) for n in range(1, order + 1)]


def _check(units, starts, hyps, refs, order):
    if order < 1 or len(starts) < 1 or len(hyps) != len(refs) or len(hyps) % 2 or starts[0] != 0 \
            or starts[-1] != len(units) or (np.diff(starts) < 0).any():
        raise ValueError("pairwise_ngrams: expected order >= 1, starts of S + 1 values and hyps, refs of 2 G values "
                         "(each segment's first and end sentence)")
    if len(units) and (units.min() < 0 or units.max() > UNIT_MAX):
        raise ValueError("pairwise_ngrams: units must be ids in 0 .. 2^32 - 1")
    for lo, hi in ((hyps[0::2], hyps[1::2]), (refs[0::2], refs[1::2])):
        if (lo < 0).any() or (lo > hi).any() or (hi > len(starts) - 1).any():
            raise ValueError("pairwise_ngrams: each segment's hyps and refs must be ranges of sentence numbers")


def _segments(units, starts, hyps, refs, order):
    """Each segment's (candidates' counts, pseudo-references' counts), after the same checks as the C kernel."""
    _check(units, starts, hyps, refs, order)
    for g in range(len(hyps) // 2):
        yield ([_counts(units, starts, k, order) for k in range(hyps[2 * g], hyps[2 * g + 1])],
               [_counts(units, starts, k, order) for k in range(refs[2 * g], refs[2 * g + 1])])


def _pairwise_reference(units, starts, hyps, refs, order) -> np.ndarray:
    out: List[int] = []
    for cands, pseudo in _segments(units, starts, hyps, refs, order):
        for c in cands:
            for r in pseudo:
                out += [sum(min(v, r[n].get(key, 0)) for key, v in c[n].items()) for n in range(order)]
    return np.array(out, dtype=np.int64)


def _aggregate_reference(units, starts, hyps, refs, order) -> np.ndarray:
    out: List[float] = []
    for cands, pseudo in _segments(units, starts, hyps, refs, order):
        if not pseudo:
            out += [0.0] * (len(cands) * order)
            continue
        mean: List[dict] = [{} for _ in range(order)]
        for r in pseudo:
            for n in range(order):
                for key, v in r[n].items():
                    mean[n][key] = mean[n].get(key, 0.0) + float(v)
        for n in range(order):
            mean[n] = {key: v / len(pseudo) for key, v in mean[n].items()}
        for c in cands:
            for n in range(order):
                m = 0.0
                for key, v in c[n].items():
                    m += min(float(v), mean[n].get(key, 0.0))
                out.append(m)
    return np.array(out, dtype=np.float64)


SMOOTHING = {"none": 0, "floor": 1, "add-k": 2, "exp": 3}


def bleu(rows: np.ndarray, order: int, smooth_method: str, smooth_value: float, effective_order: bool) -> np.ndarray:
    rows = np.ascontiguousarray(rows, dtype=np.int64).reshape(-1, 2 + 2 * order)
    native = compiled("pairwise_ngrams")
    if native is not None:
        return np.frombuffer(native.bleu(rows, order, SMOOTHING[smooth_method], float(smooth_value),
                                         bool(effective_order)), dtype=np.float64)
    return np.array([bleu_of_floats(r, order, smooth_method, float(smooth_value), effective_order)
                     for r in rows.tolist()], dtype=np.float64)


def bleu_of_floats(row: Sequence[float], order: int, smooth_method: str, value: float, effective_order: bool) -> float:
    """:func:`bleu` of one row whose counts and lengths may be fractional (reference aggregation)."""
    return bleu_score([float(v) for v in row], order, smooth_method, value, effective_order)
