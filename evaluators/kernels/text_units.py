"""Text cut into the units the n-gram kernels count, in C (``text_units.c``, built at install
when a compiler is there).  ``AVAILABLE`` says whether it was; callers keep their Python expressions as
the fallback and the reference (``tests/test_text_units.py`` checks each against it):

* :func:`chars` -- chrF's characters without whitespace: the code points of ``"".join(line.split())`` of
  every line end to end, and each line's count;
* :func:`words` -- chrF++'s word split (sacrebleu's ``CHRF._remove_punctuation``) of every line.

(Token ids in a vocabulary are looked up by :func:`~evalpipe.evaluators.kernels.ngram_matches.ids`.)
"""
from __future__ import annotations

from typing import List, Sequence, Tuple

import numpy as np

from evalpipe.evaluators.kernels import compiled

_c = compiled("text_units")
AVAILABLE = _c is not None


def chars(lines: Sequence[str]) -> Tuple[np.ndarray, np.ndarray]:
    """(int64 code points of every line without its whitespace, end to end; int64 count per line)."""
    units, lengths = _c.chars(lines)
    return np.frombuffer(units, dtype=np.int64), np.frombuffer(lengths, dtype=np.int64)


def words(lines: Sequence[str], marks: str) -> Tuple[List[str], List[int]]:
    """(every line's chrF++ words end to end, each line's count), ``marks`` being sacrebleu's punctuation."""
    return _c.words(lines, marks)
