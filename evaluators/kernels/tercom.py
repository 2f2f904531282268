"""Tercom's edit count (Snover et al., 2006) on integer word ids: the C kernel and its Python reference.

The quantity is exactly the one sacrebleu 2.6's ``translation_edit_rate`` computes (its defaults:
shifts of at most 10 words over at most 50 positions, a beam of 25 cells around the length-ratio
diagonal, at most 1,000 shift candidates per segment):

1. ``d(h)``: edit distance from hypothesis h to the reference (insertion, deletion, substitution 1),
   row i filled only for columns ``floor(i * R / H) +- beam`` (all columns in the last row), cells
   outside at "infinity"; per cell the first of substitution/match, deletion, insertion that is
   strictly cheaper than what the cell holds wins.  Walking back from (H, R) gives the alignment:
   which hypothesis and reference words are in error, and the hypothesis position each reference
   word is aligned to.
2. A greedy loop: among the candidate shifts -- every hypothesis span of 1..10 words equal to a
   reference span starting at most 50 positions away (spans in hypothesis order, then reference
   order, then length), with an erroneous word on both sides, not already aligned inside itself,
   moved before each distinct aligned position of the reference span (or to the start) -- take the
   best by (gain d(h) - d(h'), length, earliest start, earliest target), apply it if it gains; stop
   when nothing gains or 1,000 candidates were tried in all (the shift that reached the cap is
   not applied).
3. Edits = shifts made + d(final h).  An empty reference gives H edits.

What makes it fast besides compilation: a candidate shares its first rows with the current
hypothesis (up to the first word that moved), so only the rows after that are recomputed, two at a
time.

Two implementations, one algorithm: ``tercom.c`` (the extension ``_tercom``, built at
install when a C compiler is there) and the Python functions below, the reference it is tested against
(``tests/test_ter_kernel.py``, with sacrebleu's own function as the judge of both, on real and random data).
:func:`edits` is the C one when it was built (``NATIVE``), else the Python one; the environment variable
``EVALPIPE_IMPLEMENTATION=python`` forces the reference (:func:`evalpipe.evaluators.kernels.compiled`).
"""
from __future__ import annotations

import math

import numpy as np

from evalpipe.evaluators.kernels import compiled

MAX_SHIFT_SIZE = 10
MAX_SHIFT_DIST = 50
BEAM = 25
MAX_CANDIDATES = 1000
INF = 10 ** 16
MATCH, SUB, DEL, INS, UNDEF = 0, 1, 2, 3, 4


def _beam(h: int, r: int) -> tuple:
    ratio = r / h if h else 1.0
    width = math.ceil(ratio / 2 + BEAM) if BEAM < ratio / 2 else BEAM
    return ratio, width


def _fill_row(i: int, hyp, ref, prev_cost, cost, op, ratio: float, width: int) -> None:
    """Row i of the banded matrix from row i - 1 (``cost``/``op`` are reset here)."""
    h, r = len(hyp), len(ref)
    diag = math.floor(i * ratio)
    lo = max(0, diag - width)
    hi = r + 1 if i == h else min(r + 1, diag + width)
    cost[:] = INF
    op[:] = UNDEF
    for j in range(lo, hi):
        if j == 0:
            cost[0] = prev_cost[0] + 1
            op[0] = DEL
            continue
        same = hyp[i - 1] == ref[j - 1]
        c = prev_cost[j - 1] + (0 if same else 1)
        if cost[j] > c:
            cost[j] = c
            op[j] = MATCH if same else SUB
        c = prev_cost[j] + 1
        if cost[j] > c:
            cost[j] = c
            op[j] = DEL
        c = cost[j - 1] + 1
        if cost[j] > c:
            cost[j] = c
            op[j] = INS


def _matrix(hyp, ref, costs, ops) -> None:
    """The whole banded matrix of ``hyp`` into ``costs``/``ops`` ((H + 1) x (R + 1))."""
    ratio, width = _beam(len(hyp), len(ref))
    for j in range(len(ref) + 1):
        costs[0, j] = j
        ops[0, j] = INS
    for i in range(1, len(hyp) + 1):
        _fill_row(i, hyp, ref, costs[i - 1], costs[i], ops[i], ratio, width)


def _distance_from(hyp, ref, start: int, row, a, b, sink) -> int:
    """d(hyp) given row ``start`` of its matrix (rows 0..start depend only on hyp[:start])."""
    h = len(hyp)
    if start == h:
        return row[len(ref)]
    ratio, width = _beam(h, len(ref))
    prev = row
    for i in range(start + 1, h + 1):
        cur = a if i % 2 else b
        _fill_row(i, hyp, ref, prev, cur, sink, ratio, width)
        prev = cur
    return prev[len(ref)]


def _alignment(ops, h: int, r: int, hyp_err, ref_err, align) -> None:
    """Walk back from (h, r): error flags of both sides, and each reference word's hypothesis position."""
    i, j = h, r
    hyp_err[:] = 0
    ref_err[:] = 0
    while i > 0 or j > 0:
        o = ops[i, j]
        if o == MATCH or o == SUB:
            i -= 1
            j -= 1
            align[j] = i
            if o == SUB:
                hyp_err[i] = 1
                ref_err[j] = 1
        elif o == DEL:  # a hypothesis word with no reference word
            i -= 1
            hyp_err[i] = 1
        elif o == INS:  # a reference word with no hypothesis word: aligned after the words before it
            j -= 1
            align[j] = i - 1
            ref_err[j] = 1
        else:
            raise ValueError("TER: a path through an unfilled cell")


def _shifted(words, start: int, length: int, target: int, out) -> int:
    """``words`` with ``words[start:start+length]`` moved (Tercom's three cases) into ``out``; returns
    the first position where ``out`` differs from ``words`` (len if none)."""
    n = len(words)
    k = 0
    if target < start:
        pieces = ((0, target), (start, start + length), (target, start), (start + length, n))
    elif target > start + length:
        pieces = ((0, start), (start + length, target), (start, start + length), (target, n))
    else:
        pieces = ((0, start), (start + length, length + target), (start, start + length), (length + target, n))
    for a, b in pieces:
        for x in range(a, min(b, n)):
            out[k] = words[x]
            k += 1
    first = 0
    while first < n and out[first] == words[first]:
        first += 1
    return first


def python_edits(hyp, ref) -> int:
    """Tercom's edit count of ``hyp`` against ``ref`` (int arrays of word ids; see the module docstring)."""
    h, r = len(hyp), len(ref)
    if r == 0:
        return h
    words = hyp.copy()
    costs = np.empty((h + 1, r + 1), dtype=np.int64)
    ops = np.empty((h + 1, r + 1), dtype=np.int8)
    a = np.empty(r + 1, dtype=np.int64)
    b = np.empty(r + 1, dtype=np.int64)
    sink = np.empty(r + 1, dtype=np.int8)
    hyp_err = np.zeros(h, dtype=np.int64)
    ref_err = np.zeros(r, dtype=np.int64)
    align = np.zeros(r, dtype=np.int64)
    candidate = np.empty(h, dtype=hyp.dtype)
    best_words = np.empty(h, dtype=hyp.dtype)
    shifts = 0
    checked = 0
    while True:
        _matrix(words, ref, costs, ops)
        before = costs[h, r]
        _alignment(ops, h, r, hyp_err, ref_err, align)
        found = False
        best = (0, 0, 0, 0)
        capped = False
        for sh in range(h):
            for sr in range(max(0, sh - MAX_SHIFT_DIST), min(r, sh + MAX_SHIFT_DIST + 1)):
                length = 0
                while length < MAX_SHIFT_SIZE and words[sh + length] == ref[sr + length]:
                    length += 1
                    if hyp_err[sh:sh + length].sum() == 0 or ref_err[sr:sr + length].sum() == 0 \
                            or sh <= align[sr] < sh + length:
                        if sh + length == h or sr + length == r:
                            break
                        continue
                    last = -1
                    for offset in range(-1, length):
                        target = 0 if sr + offset == -1 else align[sr + offset] + 1
                        if target == last:
                            continue
                        last = target
                        first = _shifted(words, sh, length, target, candidate)
                        gain = before - _distance_from(candidate, ref, first, costs[first], a, b, sink)
                        checked += 1
                        key = (gain, length, -sh, -target)
                        if not found or key > best:
                            found = True
                            best = key
                            best_words[:] = candidate
                    if checked >= MAX_CANDIDATES:
                        capped = True
                        break
                    if sh + length == h or sr + length == r:
                        break
                if capped:
                    break
            if capped:
                break
        if capped or not found or best[0] <= 0:
            break
        shifts += 1
        words[:] = best_words
    _matrix(words, ref, costs, ops)
    return shifts + costs[h, r]


_c = compiled("tercom")
NATIVE = _c is not None
native_edits = _c.edits if NATIVE else None
#: Tercom's edit count of two int64 arrays of word ids: C when it was built, else the Python reference
edits = native_edits if NATIVE else python_edits
