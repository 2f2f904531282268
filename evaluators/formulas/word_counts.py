"""``len(text.split())`` for many texts at once.

ASCII texts are joined, each preceded by a space and separated by NUL; ``bytes.translate`` maps
every whitespace byte to ``b" "`` and every other byte to ``b"x"``, and a text's word count is its
number of ``b" x"`` pairs, found and counted per text with numpy -- C loops only.  Texts with non-ASCII characters (``str.split`` also
splits on U+0085, U+00A0, U+2000... ) or a NUL are counted with ``str.split`` itself.
"""
from __future__ import annotations

from itertools import compress
from typing import Any, Sequence

import numpy as np

_TABLE = bytes(0 if c == 0 else 32 if c < 128 and chr(c).isspace() else 120 for c in range(256))


def word_counts(texts: Sequence[Any]) -> np.ndarray:
    """``len(t.split())`` of every text as float64 (0 for an entry that is not a string)."""
    if set(map(type, texts)) != {str}:
        return np.array([len(t.split()) if isinstance(t, str) else 0 for t in texts], dtype=np.float64)
    ascii_ = np.fromiter(map(str.isascii, texts), dtype=bool, count=len(texts))
    simple = list(compress(texts, ascii_))
    joined = " " + "\0 ".join(simple)
    counts = np.empty(len(texts), dtype=np.float64)
    if joined.count("\0") == len(simple) - 1:
        buffer = np.frombuffer(joined.encode("ascii").translate(_TABLE), dtype=np.uint8)
        word_starts = np.flatnonzero((buffer[1:] == 120) & (buffer[:-1] == 32))
        ends = np.append(np.flatnonzero(buffer == 0), len(buffer))
        counts[ascii_] = np.diff(np.searchsorted(word_starts, ends), prepend=0)
    else:
        ascii_[:] = False
    others = np.flatnonzero(~ascii_)
    counts[others] = [len(texts[i].split()) for i in others]
    return counts
