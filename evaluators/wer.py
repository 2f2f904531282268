"""Word error rate as sufficient statistics, jiwer's and SimulEval's.

Stats layout: ``edits, ref_words`` -- the Levenshtein distance between the hypothesis's and the reference's words
(insertions, deletions and substitutions, each 1) and the number of reference words.  Score (a percentage, lower
is better)::

    WER = 100 * sum(edits) / sum(ref_words)

the corpus definition of jiwer 4.0.0 (``jiwer.wer`` of lists: (S + D + I) / (H + S + D), times 100 here) and of
SimulEval 1.1.4's ``WER`` quality scorer.  Without reference words (an empty reference; a corpus of them) the
denominator is 1, as jiwer 4.0 counts it: WER = 100 * the inserted words (0 when the hypothesis is empty too), so a
sentence-level WER of an empty reference is a number, as TER's 100 is.

Words (option ``normalize``):

* ``jiwer`` (default) -- jiwer's default transform ``wer_default``: runs of two or more whitespace characters
  become one space, the text is stripped, and words are what lies between single spaces (a lone tab or
  no-break space stays inside a word);
* ``raw`` -- SimulEval's ``WERScorer``: Python's ``str.split()`` of the raw text (any whitespace separates).

No case folding or punctuation removal in either (both anchors score raw text by default).  With several
references (neither anchor has them) a segment counts against the reference with the fewest edits, the first on
ties, and that reference's words.  Both steps are the C kernels of :mod:`evalpipe.evaluators.kernels.edit_distance` (their Python references
without a compiler): a block's references and hypotheses are cut into words and given integer ids in one C call,
and every pair's distance is counted in another.
"""
from __future__ import annotations

from typing import Any, List, Sequence, Tuple

import numpy as np

from evalpipe.evaluators.kernels import edit_distance
from evalpipe.sufficient_stats.metric import Metric
from evalpipe.sufficient_stats.options import Option

class WER(Metric):
    """Word error rate (layout, formula and word splitting in the module docstring)."""

    name = "wer"
    higher_is_better = False
    OPTIONS = {
        "normalize": Option(str, "jiwer", "words: jiwer (jiwer's default transform) or raw (SimulEval: str.split)",
                            choices=edit_distance.MODES),
    }
    STATS_FIELDS = ("edits", "ref_words")
    NONNEGATIVE_STATS = True

    def segment_stats(self, hypothesis: str, refs: Tuple[str, ...]) -> List[Any]:
        """``[edits, reference words]`` of one segment."""
        return self.block_stats([hypothesis], [[r] for r in refs])[0]

    def block_stats(self, hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> List[List[Any]]:
        return self.block_matrix(hypotheses, references).tolist()

    def block_matrix(self, hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> np.ndarray:
        """The rows of a block as an int64 matrix: every word given an id once, every distance in one kernel call."""
        n, k = len(hypotheses), len(references)
        lines = [line for stream in references for line in stream] + list(hypotheses)
        ids, counts = edit_distance.word_ids(lines, self.options["normalize"])
        offsets = np.zeros(len(lines) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        h_off = offsets[k * n:] - offsets[k * n]
        edits = np.stack([edit_distance.distances(ids[offsets[k * n]:], h_off, ids, offsets[j * n:(j + 1) * n + 1])
                          for j in range(k)])  # references x segments
        best = np.argmin(edits, axis=0)  # the first reference with the fewest edits
        out = np.empty((n, 2), dtype=np.int64)
        out[:, 0] = edits[best, np.arange(n)]
        out[:, 1] = counts[:k * n].reshape(k, n)[best, np.arange(n)]
        return out

    def score_from_stats(self, stats: List[Any]) -> float:
        """100 * edits / reference words (jiwer 4.0's denominator of at least 1: without reference words, 100 * the
        inserted words)."""
        edits, words = stats
        return 100.0 * edits / max(words, 1)

    def display_name(self) -> str:
        return "WER"

    def signature(self, nrefs: Any = None) -> str:
        """``wer|norm:jiwer|evalpipe``: the word splitting (jiwer 4.0.0's default or SimulEval's raw split)."""
        return f"wer|norm:{self.options['normalize']}|evalpipe"
