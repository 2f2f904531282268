"""The layout of minimum Bayes risk pairs: every candidate of a segment against every pseudo-reference.

Segments are laid end to end as sentences -- each segment's candidates, then its pseudo-references unless
they are the candidates themselves (self-MBR: the same list object, or an equal one) -- with, per segment,
the candidates' and the pseudo-references' sentence ranges.  Pairs are candidate-major within a segment,
segments in order; :func:`pair_sentences` gives each pair's two sentence numbers.
"""
from __future__ import annotations

from typing import List, Sequence, Tuple

import numpy as np


def pair_layout(candidates: Sequence[Sequence[str]], pseudo_references: Sequence[Sequence[str]]
                ) -> Tuple[List[str], np.ndarray, np.ndarray]:
    """(sentences end to end, candidate ranges ``hyps[g]..hyps[g+1]``, pseudo-reference ranges ``refs``)."""
    if len(candidates) != len(pseudo_references):
        raise ValueError(f"{len(candidates)} segments of candidates but {len(pseudo_references)} of "
                         f"pseudo-references")
    texts: List[str] = []
    hyps = np.zeros(2 * len(candidates), dtype=np.int64)
    refs = np.zeros(2 * len(candidates), dtype=np.int64)
    for g, (cands, pseudo) in enumerate(zip(candidates, pseudo_references)):
        hyps[2 * g] = len(texts)
        texts.extend(cands)
        hyps[2 * g + 1] = len(texts)
        if pseudo is cands or list(pseudo) == list(cands):
            refs[2 * g], refs[2 * g + 1] = hyps[2 * g], hyps[2 * g + 1]
        else:
            refs[2 * g] = len(texts)
            texts.extend(pseudo)
            refs[2 * g + 1] = len(texts)
    return texts, hyps, refs


def ranges(bounds: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Each segment's (first sentences, end sentences) from the layout's ``[first, end, first, end, ...]``."""
    return bounds[0::2], bounds[1::2]


def pair_sentences(hyps: np.ndarray, refs: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(candidate sentence, pseudo-reference sentence) of every pair, candidate-major, segments in order."""
    h_lo, h_hi = ranges(hyps)
    r_lo, r_hi = ranges(refs)
    n_h, n_r = h_hi - h_lo, r_hi - r_lo
    per = n_h * n_r
    seg = np.repeat(np.arange(len(n_h)), per)
    k = np.arange(int(per.sum())) - np.repeat(np.cumsum(per) - per, per)
    n_r_of = n_r[seg]
    return h_lo[seg] + k // np.maximum(n_r_of, 1), r_lo[seg] + k % np.maximum(n_r_of, 1)


def cell_sentences(hyps: np.ndarray, refs: np.ndarray, cells: Sequence[Tuple[Sequence[int], Sequence[int]]]
                   ) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The cells asked -- ``cells[g]``: segment g's (candidate indices, pseudo-reference indices), one a cell --
    as (candidate sentence, pseudo-reference sentence) of each, in order, and each segment's offsets into them
    (G + 1)."""
    h_lo, _ = ranges(hyps)
    r_lo, _ = ranges(refs)
    rows = [np.asarray(c[0], dtype=np.int64) for c in cells]
    cols = [np.asarray(c[1], dtype=np.int64) for c in cells]
    at = np.r_[0, np.cumsum([len(r) for r in rows])].astype(np.int64)
    empty = np.zeros(0, np.int64)
    h = np.concatenate([h_lo[g] + r for g, r in enumerate(rows)] + [empty])
    r = np.concatenate([r_lo[g] + c for g, c in enumerate(cols)] + [empty])
    return h, r, at


def candidate_segments(hyps: np.ndarray) -> np.ndarray:
    """The segment of every candidate, in order."""
    h_lo, h_hi = ranges(hyps)
    return np.repeat(np.arange(len(h_lo)), h_hi - h_lo)


def candidate_sentences(hyps: np.ndarray) -> np.ndarray:
    """The sentence number of every candidate, in order."""
    return np.concatenate([np.arange(a, b) for a, b in zip(*ranges(hyps))] + [np.zeros(0, np.int64)])


def pseudo_reference_means(values: np.ndarray, refs: np.ndarray) -> np.ndarray:
    """Per segment, the mean of ``values`` (integer counts, one per sentence) over its pseudo-references; 0
    without any.  The integer sums are exact, so each mean has the bits of numpy's ``values[a:b].mean()``."""
    lo, hi = ranges(refs)
    ints = np.asarray(values, dtype=np.int64)
    sums = np.r_[0, np.cumsum(ints)]
    n = hi - lo
    return np.where(n > 0, (sums[hi] - sums[lo]).astype(np.float64) / np.maximum(n, 1), 0.0)
