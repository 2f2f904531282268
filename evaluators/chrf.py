"""chrF and chrF++ (Popovic, 2015; 2017) as sufficient statistics, identical to sacrebleu's.

Stats layout, all integers, three per order: first the character orders 1..char_order, then the
word orders 1..word_order (``word_order=2`` is chrF++)::

    c1_hyp, c1_ref, c1_match, ..., cK_hyp, cK_ref, cK_match, w1_hyp, w1_ref, w1_match, ...

Per order: ``hyp`` = number of hypothesis n-grams (0 when the reference has none of that order,
as sacrebleu counts it), ``ref`` = number of reference n-grams, ``match`` = clipped matches.
Characters: the segment with whitespace removed (unless ``whitespace``); words: whitespace tokens
with one leading or trailing punctuation mark split off (sacrebleu's ``_remove_punctuation``).
With several references the segment's stats are those of the reference with the best
sentence-level chrF (first on ties, sacrebleu's rule).

Score (0-100): P_n = match/hyp and R_n = match/ref are averaged over the orders with hyp > 0 and
ref > 0 (or, with ``eps_smoothing``, per-order F-scores are averaged with eps = 1e-16); then
``chrF = (1 + beta^2) P R / (beta^2 P + R)``, computed by ``sacrebleu.CHRF._compute_f_score``.

N-grams are counted as tuples of characters / words (equal exactly when sacrebleu's substrings
and space-joined words are equal) with C-level counting, which is faster than sacrebleu's lists.
``block_stats`` computes the same rows for blocks of segments at once, the references indexed once
(:mod:`evalpipe.evaluators.kernels.ngram_matches`, C or its numpy reference); a block whose keys do not
fit there is counted segment by segment.
"""
from __future__ import annotations

from collections import _count_elements
from typing import Any, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from evalpipe.evaluators import sacrebleu_api as sb
from evalpipe.evaluators.formulas.pairs import (candidate_segments, candidate_sentences, cell_sentences, pair_layout,
                                                pair_sentences, pseudo_reference_means)
from evalpipe.evaluators.kernels import ngram_matches, pairwise_ngrams, text_units
from evalpipe.evaluators.kernels.chrf_words import words_block, words_flat
from evalpipe.evaluators.kernels.ngram_line import Counts, clipped
from evalpipe.sufficient_stats.cache import LRUCache
from evalpipe.errors import OptionError
from evalpipe.sufficient_stats.metric import Metric
from evalpipe.sufficient_stats.options import Option

_MARKS = "".join(sorted(sb.chrf_punctuation()))  # what chrF++'s word split takes off a word's edge

Side = Tuple[List[Counts], List[int]]  # per-order counts and per-order totals


def _counts(items: Sequence[str], max_order: int) -> Side:
    length = len(items)
    counts, totals = [], []
    for n in range(1, max_order + 1):
        c: Counts = {}
        _count_elements(c, items if n == 1 else zip(*[items[i:] for i in range(n)]))
        counts.append(c)
        totals.append(max(0, length - n + 1))
    return counts, totals


class ChrF(Metric):
    """sacrebleu-identical chrF / chrF++ (layout and formula in the module docstring)."""

    name = "chrf"
    OPTIONS = {
        "char_order": Option(int, 6, "character n-gram order (0: words only, with word_order)", minimum=0),
        "word_order": Option(int, 0, "word n-gram order (2 = chrF++)", minimum=0),
        "beta": Option(int, 2, "recall weight beta (0: precision only, as sacrebleu)", minimum=0),
        "lowercase": Option(bool, False, "lowercase before matching"),
        "whitespace": Option(bool, False, "keep whitespace in character n-grams"),
        "eps_smoothing": Option(bool, False, "chrF++.py-style epsilon smoothing"),
        "cache_size": Option(int, 4096, "reference sets kept in the LRU cache (no effect on scores)", minimum=1),
    }
    STATS_FIELDS = tuple(f"c{n}_{k}" for n in range(1, 7) for k in ("hyp", "ref", "match"))

    NONNEGATIVE_STATS = True

    def stats_bounds(self) -> List[Tuple[str, str]]:
        return [(f.rsplit("_", 1)[0] + "_match", f) for f in self.stats_fields if not f.endswith("_match")]

    def fields(self) -> Tuple[str, ...]:
        o = self.options
        return tuple(f"c{n}_{k}" for n in range(1, o["char_order"] + 1) for k in ("hyp", "ref", "match")) \
            + tuple(f"w{n}_{k}" for n in range(1, o["word_order"] + 1) for k in ("hyp", "ref", "match"))

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        o = self.options
        if o["char_order"] + o["word_order"] == 0:
            raise OptionError(f"{self.name}: char_order and word_order are both 0: no n-gram to count")
        self._sacre = sb.metric("chrf", **{k: v for k, v in o.items() if k != "cache_size"})  # the options are sacrebleu's
        self._cache: LRUCache = LRUCache(o["cache_size"])
        self._block_index: Tuple[tuple, tuple] = ((), (None, None, {}))  # the last block's references, indexed

    def _side(self, text: str) -> Side:
        o = self.options
        if o["lowercase"]:
            text = text.lower()
        chars = text if o["whitespace"] else "".join(text.split())
        counts, totals = _counts(chars, o["char_order"])
        if o["word_order"]:
            wc, wt = _counts(sb.remove_punctuation(self._sacre, text), o["word_order"])
            counts, totals = counts + wc, totals + wt
        return counts, totals

    def profile_rows(self, pseudo_references: Sequence[Sequence[str]]) -> List[np.ndarray]:
        """Each segment's pseudo-references as their statistic vectors, for centroid MBR: one float64 row each, the
        count of every n-gram the metric counts (character n-grams, then chrF++'s word n-grams), columns the
        segment's distinct n-grams in the order first met (the ``pairwise_ngrams`` kernel's ``profiles``)."""
        texts, _, refs = pair_layout(pseudo_references, pseudo_references)
        blocks = [pairwise_ngrams.profiles(units, starts, refs, order)
                  for units, _, starts, order in self._pair_blocks(texts)]
        return [np.hstack(parts).astype(np.float64) for parts in zip(*blocks)]

    def _pair_blocks(self, texts: Sequence[str]) -> List[Tuple[Any, np.ndarray, np.ndarray, int]]:
        """What the ``pairwise_ngrams`` kernel reads of ``texts``, a block an n-gram kind: ``(units end to end,
        each text's count, their S + 1 starts, order)`` for the characters, then chrF++'s words."""
        texts = self._prepared(texts)
        o = self.options
        blocks = []
        if o["char_order"]:
            units, lengths = self._char_units(texts)
            blocks.append((units, lengths, o["char_order"]))
        if o["word_order"]:
            words = self._words(texts)
            blocks.append((ngram_matches.word_units(words, {}), ngram_matches.lengths_of(words), o["word_order"]))
        out = []
        for units, lengths, order in blocks:
            lengths = np.asarray(lengths, dtype=np.int64)
            out.append((units, lengths, np.r_[0, np.cumsum(lengths)].astype(np.int64), order))
        return out

    def segment_stats(self, hypothesis: str, refs: Tuple[str, ...]) -> List[int]:
        """Per-order ``[hyp, ref, match]`` triples of the best-matching reference."""
        hyp = self._side(hypothesis)
        per_ref = (self._triples(hyp, ref) for ref in self._cache.get_or_compute(refs, lambda rs: [self._side(r) for r in rs]))
        return next(per_ref) if len(refs) == 1 else self._best_reference(per_ref)

    @staticmethod
    def _triples(hyp: Side, ref: Side) -> List[int]:
        stats: List[int] = []
        for h, ht, r, rt in zip(hyp[0], hyp[1], ref[0], ref[1]):
            stats += [ht if r else 0, rt, clipped(h, r, ht)]
        return stats

    def _best_reference(self, candidates: Iterable[List[int]]) -> List[int]:
        """The stats of the reference with the best sentence chrF, the first on ties (sacrebleu's rule)."""
        best: List[int] = []
        best_f = -1.0
        for stats in candidates:
            f = sb.chrf_f_score(self._sacre, stats)
            if f > best_f:
                best_f, best = f, stats
        return best

    def block_stats(self, hyps: Sequence[str], refs: Sequence[Sequence[str]]) -> List[List[int]]:
        """The ``segment_stats`` rows of a block of segments, computed at once with numpy.  The
        references' n-grams are indexed once (:mod:`~evalpipe.evaluators.kernels.ngram_matches`) and kept for
        the next block with the same references (the next system)."""
        if not hyps:
            return []
        rows = self._block(hyps, refs)
        return rows.tolist() if isinstance(rows, np.ndarray) else rows

    def block_matrix(self, hyps: Sequence[str], refs: Sequence[Sequence[str]]) -> Any:
        """:meth:`block_stats` as an int64 matrix (segments x stats)."""
        if not hyps:
            return np.zeros((0, self.num_stats), dtype=np.int64)
        rows = self._block(hyps, refs)
        return rows if isinstance(rows, np.ndarray) else np.array(rows, dtype=np.int64).reshape(len(hyps), -1)

    def _block(self, hyps: Sequence[str], refs: Sequence[Sequence[str]]) -> Any:
        """A block's rows: an int64 matrix with one reference, a list of rows with several (the best one each)."""
        o = self.options
        key = tuple(map(tuple, refs))
        cached = self._block_index  # one read: another thread may replace it meanwhile
        if cached[0] != key:
            cached = self._block_index = (key, self._index([self._prepared(stream) for stream in refs]))
        chars_index, words_index, vocab = cached[1]
        hyp_texts = self._prepared(hyps)
        if chars_index is None or (o["word_order"] and words_index is None):  # keys too wide (or char_order 0):
            return [self.segment_stats(h, r) for h, r in zip(hyps, zip(*refs))]  # segment by segment
        columns: List[list] = [[] for _ in refs]
        units, lengths = self._char_units(hyp_texts)
        self._add_orders(chars_index.matches(units, lengths), lengths, chars_index.ref_lengths, columns)
        if o["word_order"]:
            words, counts = words_flat(hyp_texts, _MARKS, self._one_line)
            lengths = np.array(counts, dtype=np.int64)
            self._add_orders(words_index.matches(ngram_matches.ids(words, vocab), lengths), lengths,
                             words_index.ref_lengths, columns)
        return self._rows(columns, len(hyps))

    def _prepared(self, texts: Sequence[str]) -> List[str]:
        return [t.lower() for t in texts] if self.options["lowercase"] else list(texts)

    def _one_line(self, line: str) -> List[str]:
        return sb.remove_punctuation(self._sacre, line)

    def _words(self, texts: List[str]) -> List[List[str]]:
        return words_block(texts, _MARKS, self._one_line)

    def _char_units(self, texts: List[str]) -> Tuple[np.ndarray, np.ndarray]:
        """(code points of every text, whitespace removed unless ``whitespace``, end to end; count per text);
        in C (:func:`~evalpipe.evaluators.kernels.text_units.chars`) when it was built."""
        if text_units.AVAILABLE and not self.options["whitespace"]:
            return text_units.chars(texts)
        chars = self._chars(texts)
        return ngram_matches.char_units(chars), ngram_matches.lengths_of(chars)

    def _chars(self, texts: List[str]) -> List[str]:
        return texts if self.options["whitespace"] else list(map("".join, map(str.split, texts)))

    def _index(self, refs: List[List[str]]) -> tuple:
        """(character index, word index or None, word vocabulary) of prepared reference streams."""
        o = self.options
        units = [self._char_units(stream) for stream in refs]
        lengths = np.column_stack([length for _, length in units])
        chars_index = ngram_matches.build([u for u, _ in units], lengths, o["char_order"]) if o["char_order"] else None
        vocab: dict = {}
        words_index = None
        if o["word_order"]:
            words = [self._words(stream) for stream in refs]
            lengths = np.column_stack([ngram_matches.lengths_of(w) for w in words])
            words_index = ngram_matches.build([ngram_matches.word_units(w, vocab) for w in words], lengths,
                                            o["word_order"])
        return chars_index, words_index, vocab

    def _rows(self, columns: List[list], segments: int) -> Any:
        if len(columns) == 1:
            return np.column_stack(columns[0]).astype(np.int64, copy=False)
        rows = [np.column_stack(c).tolist() for c in columns]  # per reference
        return [self._best_reference(r[i] for r in rows) for i in range(segments)]

    @staticmethod
    def _add_orders(matches: Iterable[np.ndarray], hyp_lengths: np.ndarray, ref_lengths: np.ndarray,
                    columns: List[list]) -> None:
        for n, found in enumerate(matches, 1):
            hyp_total = ngram_matches.ngram_totals(hyp_lengths, n)
            for k in range(found.shape[1]):
                ref_total = ngram_matches.ngram_totals(ref_lengths[:, k], n)
                columns[k] += [np.where(ref_total > 0, hyp_total, 0), ref_total, found[:, k]]

    def pairwise_rows(self, candidates: Sequence[Sequence[str]], pseudo_references: Sequence[Sequence[str]],
                      aggregate: bool = False, cells: Optional[Sequence[Tuple[Any, Any]]] = None) -> np.ndarray:
        """Minimum Bayes risk: the stats row of every candidate against every pseudo-reference of its segment
        (candidate-major, segments in order; int64), or with ``aggregate`` against the mean n-gram counts of the
        segment's pseudo-references (one float row per candidate: matches ``min(count, mean count)``, reference
        totals the mean totals; Vamvas & Sennrich, 2024), or with ``cells`` (segment g's (candidate indices,
        pseudo-reference indices)) the rows of those pairs only, in order.  Counted by the ``pairwise_ngrams``
        kernel."""
        if aggregate and cells is not None:
            raise ValueError("pairwise_rows: aggregate rows are per candidate; cells are pairs (give one)")
        o = self.options
        texts, hyps, refs = pair_layout(candidates, pseudo_references)
        blocks = self._pair_blocks(texts)
        if aggregate:
            segment, h = candidate_segments(hyps), candidate_sentences(hyps)
        elif cells is not None:
            h, r, at = cell_sentences(hyps, refs, cells)
        else:
            h, r = pair_sentences(hyps, refs)
        columns = []
        for units, lengths, starts, order in blocks:
            if aggregate:
                found = pairwise_ngrams.aggregate(units, starts, hyps, refs, order)
                for n in range(1, order + 1):
                    ref_total = pseudo_reference_means(ngram_matches.ngram_totals(lengths, n), refs)[segment]
                    hyp_total = ngram_matches.ngram_totals(lengths[h], n)
                    columns += [np.where(ref_total > 0, hyp_total, 0), ref_total, found[:, n - 1]]
            else:
                found = pairwise_ngrams.pairwise(units, starts, hyps, refs, order) if cells is None else \
                    pairwise_ngrams.selected(units, starts, hyps, refs, order, np.column_stack([h, r]).ravel(), at)
                for n in range(1, order + 1):
                    ref_total = ngram_matches.ngram_totals(lengths[r], n)
                    columns += [np.where(ref_total > 0, ngram_matches.ngram_totals(lengths[h], n), 0), ref_total,
                                found[:, n - 1]]
        width = 3 * (o["char_order"] + o["word_order"])
        if not columns or not len(columns[0]):
            return np.zeros((0, width), dtype=np.float64 if aggregate else np.int64)
        return np.column_stack(columns).astype(np.float64 if aggregate else np.int64)

    def score_from_stats(self, stats: List[Any]) -> float:
        """chrF (0-100) from summed stats, by ``sacrebleu.CHRF``."""
        return sb.score_from_stats(self._sacre, stats)

    def score_many(self, sums: Any) -> Any:
        """chrF of every row of a matrix of summed stats (vectorized; for resampling tests)."""
        from evalpipe.evaluators.formulas.scores import chrf_scores

        o = self.options
        return chrf_scores(sums, o["char_order"] + o["word_order"], o["beta"], o["eps_smoothing"])

    def display_name(self) -> str:
        """sacrebleu's name: chrF2, chrF2++ (beta, then one + per word order)."""
        return f"chrF{self.options['beta']}" + "+" * self.options["word_order"]

    def signature(self, nrefs: Optional[int] = None) -> str:
        """sacrebleu's chrF signature, e.g. ``nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0``."""
        return sb.signature(self._sacre, nrefs)
