"""WER's two kernels, each a C function and its Python reference: words as ids, and the Levenshtein distance of
word-id sequences, many pairs at once.

:func:`word_ids` gives every line's words end to end as integer ids (a word's id is its order of first appearance
in the call) and each line's word count, the words split as ``mode`` says: ``raw`` is ``str.split()`` (SimulEval's
WERScorer), ``jiwer`` is jiwer 4.0.0's default transform (:func:`jiwer_words`).  Whitespace is Python's own
(``str.isspace``, which ``str.split``, ``str.strip`` and ``re``'s ``\\s`` share).

A block of n pairs travels as four int64 arrays: ``hyp_ids`` and ``ref_ids`` (every pair's word ids end to end)
and ``hyp_offsets``/``ref_offsets`` (n + 1 each: pair k is ``ids[offsets[k]:offsets[k + 1]]``).  The distance is
the fewest insertions, deletions and substitutions (each 1) turning one sequence into the other -- the edit count
of WER, as ``editdistance.eval`` and rapidfuzz's ``Levenshtein.distance`` (jiwer's) count it.

Two implementations, one algorithm (one row of the dynamic programme over the shorter sequence):
``edit_distance.c`` (the extension ``_edit_distance``, built at install when a C compiler is there) and
:func:`python_distances` below, the reference it is tested against (``tests/test_wer.py``, with editdistance and
jiwer as judges of both).  :func:`distances` is the C one when it was built (``NATIVE``), else the Python one;
``EVALPIPE_IMPLEMENTATION=python`` forces the reference (:func:`evalpipe.evaluators.kernels.compiled`).
"""
from __future__ import annotations

import re
from typing import Callable, Dict, List, Sequence, Tuple

import numpy as np

from evalpipe.evaluators.kernels import compiled

_C = compiled("edit_distance")
NATIVE = _C is not None
_RUNS = re.compile(r"\s\s+")
MODES = ("jiwer", "raw")


def jiwer_words(text: str) -> List[str]:
    """jiwer 4.0.0's ``wer_default`` words: RemoveMultipleSpaces (``\\s\\s+`` becomes one space), Strip,
    ReduceToListOfListOfWords (split at single spaces, empty words dropped)."""
    return [w for w in _RUNS.sub(" ", text).strip().split(" ") if w]


SPLIT: Dict[str, Callable[[str], List[str]]] = {"jiwer": jiwer_words, "raw": str.split}


def python_word_ids(lines: Sequence[str], mode: str) -> Tuple[np.ndarray, np.ndarray]:
    """(every line's word ids end to end, each line's word count), in Python."""
    split, vocab = SPLIT[mode], {}
    words = [split(line) for line in lines]
    ids = [vocab.setdefault(w, len(vocab)) for ws in words for w in ws]
    return np.array(ids, dtype=np.int64), np.array([len(ws) for ws in words], dtype=np.int64)


def native_word_ids(lines: Sequence[str], mode: str) -> Tuple[np.ndarray, np.ndarray]:
    """The same, in C (only where ``NATIVE``)."""
    ids, counts = _C.word_ids(list(lines), MODES.index(mode) ^ 1)  # C's mode 0 is raw, 1 jiwer
    return np.frombuffer(ids, dtype=np.int64), np.frombuffer(counts, dtype=np.int64)


def python_distances(hyp_ids: np.ndarray, hyp_offsets: np.ndarray, ref_ids: np.ndarray,
                     ref_offsets: np.ndarray) -> np.ndarray:
    """Every pair's distance (see the module docstring), in Python."""
    out = np.zeros(len(hyp_offsets) - 1, dtype=np.int64)
    h, r = hyp_ids.tolist(), ref_ids.tolist()
    for k in range(len(out)):
        a, b = h[hyp_offsets[k]:hyp_offsets[k + 1]], r[ref_offsets[k]:ref_offsets[k + 1]]
        if len(a) < len(b):
            a, b = b, a
        row = list(range(len(b) + 1))
        for i, x in enumerate(a, 1):
            diag, row[0] = row[0], i
            for j, y in enumerate(b, 1):
                up = row[j]
                row[j] = min(diag + (x != y), up + 1, row[j - 1] + 1)
                diag = up
        out[k] = row[-1]
    return out


def native_distances(hyp_ids: np.ndarray, hyp_offsets: np.ndarray, ref_ids: np.ndarray,
                     ref_offsets: np.ndarray) -> np.ndarray:
    """Every pair's distance, in C (only where ``NATIVE``)."""
    arrays = [np.ascontiguousarray(a, dtype=np.int64) for a in (hyp_ids, hyp_offsets, ref_ids, ref_offsets)]
    return np.frombuffer(_C.distances(*arrays), dtype=np.int64)


distances = native_distances if NATIVE else python_distances
word_ids = native_word_ids if NATIVE else python_word_ids
