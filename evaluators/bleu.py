"""BLEU (Papineni et al., 2002) with sacrebleu's tokenizers, smoothing and signature.

Stats layout for ``max_ngram_order = N`` (default 4), all integers, length 2 + 2N::

    hyp_len, ref_len, correct_1 .. correct_N, total_1 .. total_N

``ref_len`` is the length of the reference closest to the hypothesis (shorter wins ties);
``correct_n`` the clipped n-gram matches against the element-wise maximum of the references'
counts; ``total_n = max(0, hyp_len - n + 1)``.  Score (0-100)::

    BLEU = BP * exp(sum_n log p_n / N),  p_n = 100 * correct_n / total_n,
    BP = 1 if hyp_len >= ref_len else exp(1 - ref_len / hyp_len)

computed by :func:`~evalpipe.evaluators.kernels.bleu_score.bleu_score`, sacrebleu's ``BLEU.compute_bleu`` step
for step, so summed stats give sacrebleu's ``corpus_score`` to the last bit; the signature of 13a BLEU is
composed as sacrebleu composes it (:func:`~evalpipe.evaluators.sacrebleu_api.bleu_13a_signature`), so scoring
13a BLEU does not import sacrebleu.

``block_stats`` computes the same rows for blocks of segments at once: the references indexed once
(:mod:`evalpipe.evaluators.kernels.ngram_matches`, C or its numpy reference), a block whose keys do not
fit there segment by segment; ``segment_stats`` serves one segment (the line protocol) with
:mod:`evalpipe.evaluators.kernels.ngram_line` (C or its dict reference), the reference side in an LRU cache.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from evalpipe.evaluators import sacrebleu_api as sb
from evalpipe.evaluators.kernels import ngram_line, tokenize_13a
from evalpipe.evaluators.kernels.bleu_score import SMOOTH_DEFAULTS, bleu_score
from evalpipe.evaluators.kernels.ngram_line import clipped_matches, max_merge, ngram_table
from evalpipe.evaluators.kernels.tokenize_13a import tokens_13a, tokens_13a_flat
from evalpipe.errors import OptionError
from evalpipe.sufficient_stats.cache import LRUCache
from evalpipe.sufficient_stats.metric import Metric
from evalpipe.sufficient_stats.options import Option


def _closest_ref_len(hyp_len: int, ref_lens: Sequence[int]) -> int:
    """The reference length closest to ``hyp_len``; the shorter one on a tie (sacrebleu's rule)."""
    return min(ref_lens, key=lambda r: (abs(hyp_len - r), r))


def _as_number(value: Any) -> Any:
    value = value.item() if hasattr(value, "item") else value
    return int(value) if isinstance(value, float) and value.is_integer() else value


class BLEU(Metric):
    """sacrebleu-identical BLEU as sufficient statistics (layout and formula in the module docstring)."""

    name = "bleu"
    OPTIONS = {
        "tokenize": Option(str, "13a", "sacrebleu tokenizer", choices=sb.BLEU_TOKENIZERS),
        "lowercase": Option(bool, False, "lowercase hypothesis and references"),
        "smooth_method": Option(str, "exp", "smoothing (Chen & Cherry, 2014)", choices=sb.BLEU_SMOOTHING),
        "smooth_value": Option(float, None, "value for floor / add-k smoothing (None: sacrebleu's default)", optional=True),
        "max_ngram_order": Option(int, 4, "largest n-gram order N", minimum=1),
        "effective_order": Option(bool, False, "drop orders with no n-grams (use for sentence-level BLEU)"),
        "cache_size": Option(int, 4096, "reference sets kept in the LRU cache (no effect on scores)", minimum=1),
    }
    STATS_FIELDS = ("hyp_len", "ref_len", "correct_1", "correct_2", "correct_3", "correct_4",
                    "total_1", "total_2", "total_3", "total_4")

    NONNEGATIVE_STATS = True

    def stats_bounds(self) -> List[Tuple[str, str]]:
        return [(f"correct_{i}", f"total_{i}") for i in range(1, self.options["max_ngram_order"] + 1)]

    def fields(self) -> Tuple[str, ...]:
        n = self.options["max_ngram_order"]
        return ("hyp_len", "ref_len") + tuple(f"correct_{i}" for i in range(1, n + 1)) + tuple(
            f"total_{i}" for i in range(1, n + 1))

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        o = self.options
        n = o["max_ngram_order"]
        if o["smooth_value"] is not None and o["smooth_method"] not in ("floor", "add-k"):
            raise OptionError(f"bleu: smooth_value acts only with smooth_method floor or add-k; got "
                              f"smooth_method={o['smooth_method']}")
        self._sacre_bleu: Any = None
        if o["tokenize"] == "13a":  # sacrebleu is imported when a signature asks for it, not before
            self._split = tokens_13a
        else:
            tokenizer = self._sacre.tokenizer
            self._split = lambda s: tokenizer(s).split()
        self._order = n
        self._cache: LRUCache = LRUCache(o["cache_size"])
        self._block_refs: Tuple[tuple, tuple] = ((), (None, {}))  # the last block's references, indexed

    @property
    def _sacre(self) -> Any:
        """sacrebleu's BLEU with these options (they are sacrebleu's), built on first use."""
        if self._sacre_bleu is None:
            self._sacre_bleu = sb.metric("bleu", **{k: v for k, v in self.options.items() if k != "cache_size"})
        return self._sacre_bleu

    def _tokens(self, sentence: str) -> List[str]:
        if self.options["lowercase"]:
            sentence = sentence.lower()
        return self._split(sentence.rstrip())

    def _flat_tokens(self, sentences: Sequence[str]) -> Tuple[List[str], List[int]]:
        """(every sentence's tokens end to end, each sentence's count); 13a tokenizes the block at once."""
        if self.options["tokenize"] != "13a":
            per_line = [self._tokens(s) for s in sentences]
            return [t for line in per_line for t in line], [len(line) for line in per_line]
        lower = self.options["lowercase"]
        return tokens_13a_flat([(s.lower() if lower else s).rstrip() for s in sentences])

    def _reference_info(self, refs: Tuple[str, ...]) -> Tuple[Any, List[int]]:
        """(the references prepared for :func:`ngram_line.matches`, or their merged n-gram counts when the C
        kernel is not built or the keys do not fit; their lengths)."""
        tokenized = [self._tokens(r) for r in refs]
        lengths = [len(t) for t in tokenized]
        prepared = ngram_line.reference(tokenized, self._order) if ngram_line.AVAILABLE else None
        if prepared is not None:
            return prepared, lengths
        tables = [ngram_table(t, self._order) for t in tokenized]
        return (tables[0] if len(tables) == 1 else max_merge(tables)), lengths

    def _pair_units(self, texts: Sequence[str]) -> Tuple[Any, Any, Any]:
        """(word ids end to end, each text's count, their S + 1 starts): what the ``pairwise_ngrams`` kernel reads,
        after the tokenizer (13a by the C tokenizer)."""
        import numpy as np

        from evalpipe.evaluators.kernels import ngram_matches

        if self.options["tokenize"] == "13a":
            units, lengths = self._ids_13a(texts, tokenize_13a.vocabulary(), grow=True)
        else:
            tokens, counts = self._flat_tokens(texts)
            units, lengths = ngram_matches.flat_word_units(tokens, {}), np.asarray(counts, dtype=np.int64)
        return units, lengths, np.r_[0, np.cumsum(lengths)].astype(np.int64)

    def profile_rows(self, pseudo_references: Sequence[Sequence[str]]) -> List[Any]:
        """Each segment's pseudo-references as their statistic vectors, for centroid MBR: one float64 row each, the
        count of every word n-gram (orders 1..max_ngram_order, after the tokenizer), columns the segment's distinct
        n-grams in the order first met (the ``pairwise_ngrams`` kernel's ``profiles``)."""
        import numpy as np

        from evalpipe.evaluators.formulas.pairs import pair_layout
        from evalpipe.evaluators.kernels import pairwise_ngrams

        texts, _, refs = pair_layout(pseudo_references, pseudo_references)
        units, lengths, starts = self._pair_units(texts)
        return [m.astype(np.float64) for m in pairwise_ngrams.profiles(units, starts, refs, self._order)]

    def segment_stats(self, hypothesis: str, refs: Tuple[str, ...]) -> List[int]:
        """``[hyp_len, ref_len, correct_1..N, total_1..N]`` for one segment."""
        ref_counts, ref_lens = self._cache.get_or_compute(refs, self._reference_info)
        tokens = self._tokens(hypothesis)
        hyp_len = len(tokens)
        order = self._order
        out = [hyp_len, ref_lens[0] if len(ref_lens) == 1 else _closest_ref_len(hyp_len, ref_lens)]
        out += ngram_line.matches(tokens, ref_counts, order) if type(ref_counts) is tuple \
            else clipped_matches(tokens, ref_counts, order)
        out += [hyp_len - n if hyp_len > n else 0 for n in range(order)]
        return out

    def block_stats(self, hyps: Sequence[str], refs: Sequence[Sequence[str]]) -> List[List[int]]:
        """The ``segment_stats`` rows of a block of segments, computed at once with numpy."""
        return self.block_matrix(hyps, refs).tolist() if hyps else []

    def block_matrix(self, hyps: Sequence[str], refs: Sequence[Sequence[str]]) -> Any:
        """:meth:`block_stats` as an int64 matrix (segments x stats)."""
        import numpy as np

        if not hyps:
            return np.zeros((0, self.num_stats), dtype=np.int64)  # here, not at import: the line protocol's per-segment path does without it

        from evalpipe.evaluators.kernels import ngram_matches

        ref_key = tuple(map(tuple, refs))
        cached = self._block_refs  # one read: another thread may replace it meanwhile
        if cached[0] != ref_key:  # several systems against the same references: tokenized and indexed once
            cached = self._block_refs = (ref_key, self._index(refs))
        index, vocab = cached[1]
        if index is None:  # keys too wide for the index: segment by segment
            return np.array([self.segment_stats(h, r) for h, r in zip(hyps, zip(*refs))], dtype=np.int64)
        segments = len(hyps)
        if self.options["tokenize"] == "13a":  # ids straight from the text
            units, hyp_len = self._ids_13a(hyps, vocab, grow=False)
        else:
            tokens, counts = self._flat_tokens(hyps)
            hyp_len = np.array(counts, dtype=np.int64)
            units = ngram_matches.ids(tokens, vocab)
        ref_lens = index.ref_lengths
        correct = list(index.matches(units, hyp_len, clip_to_max=True))
        if ref_lens.shape[1] == 1:
            ref_len = ref_lens[:, 0]
        else:  # closest reference length, the shorter one on a tie
            rank = np.abs(hyp_len[:, None] - ref_lens) * (int(ref_lens.max()) + 1) + ref_lens
            ref_len = ref_lens[np.arange(segments), rank.argmin(axis=1)]
        totals = [ngram_matches.ngram_totals(hyp_len, n) for n in range(1, self._order + 1)]
        return np.column_stack([hyp_len, ref_len] + correct + totals).astype(np.int64, copy=False)

    def _ids_13a(self, lines: Sequence[str], vocab: Any, grow: bool) -> Tuple[Any, Any]:
        """(every line's 13a word ids end to end, each line's count) as int64 arrays, by
        :func:`~evalpipe.evaluators.kernels.tokenize_13a.ids_flat` (C: no Python object per token)."""
        import numpy as np

        from evalpipe.evaluators.kernels.ngram_matches import NOT_IN_VOCABULARY

        lines = [s.lower() for s in lines] if self.options["lowercase"] else lines
        ids, counts = tokenize_13a.ids_flat(lines, vocab, grow, NOT_IN_VOCABULARY)  # (each line.rstrip()'s tokens)
        return np.frombuffer(ids, dtype=np.int64), np.frombuffer(counts, dtype=np.int64)

    def _index(self, refs: Sequence[Sequence[str]]) -> tuple:
        """(the reference streams' n-gram index or None, their word vocabulary)."""
        import numpy as np

        from evalpipe.evaluators.kernels import ngram_matches

        if self.options["tokenize"] == "13a":
            vocab = tokenize_13a.vocabulary()
            laid = [self._ids_13a(stream, vocab, grow=True) for stream in refs]
        else:
            vocab = {}
            flats = [self._flat_tokens(stream) for stream in refs]
            laid = [(ngram_matches.flat_word_units(tokens, vocab), np.asarray(counts, dtype=np.int64))
                    for tokens, counts in flats]
        lengths = np.column_stack([counts for _, counts in laid])
        return ngram_matches.build([units for units, _ in laid], lengths, self._order), vocab

    def pairwise_rows(self, candidates: Sequence[Sequence[str]], pseudo_references: Sequence[Sequence[str]],
                      aggregate: bool = False, cells: Optional[Sequence[Tuple[Any, Any]]] = None) -> Any:
        """Minimum Bayes risk: the stats row of every candidate against every pseudo-reference of its segment
        (candidate-major, segments in order), each pseudo-reference a single reference; counted by the
        ``pairwise_ngrams`` kernel on word ids.  With ``aggregate``: one float row per candidate against the
        mean n-gram counts and the mean length of the segment's pseudo-references (DeNero et al., 2009).  With
        ``cells`` (segment g's (candidate indices, pseudo-reference indices)): the rows of those pairs only."""
        import numpy as np

        from evalpipe.evaluators.formulas.pairs import (candidate_segments, candidate_sentences, cell_sentences,
                                                        pair_layout, pair_sentences, pseudo_reference_means)
        from evalpipe.evaluators.kernels import ngram_matches, pairwise_ngrams

        if aggregate and cells is not None:
            raise ValueError("pairwise_rows: aggregate rows are per candidate; cells are pairs (give one)")
        texts, hyps, refs = pair_layout(candidates, pseudo_references)
        units, lengths, starts = self._pair_units(texts)
        order = self._order
        if aggregate:
            h = candidate_sentences(hyps)
            found = pairwise_ngrams.aggregate(units, starts, hyps, refs, order)
            ref_len = pseudo_reference_means(lengths, refs)[candidate_segments(hyps)]
        elif cells is not None:
            h, r, at = cell_sentences(hyps, refs, cells)
            found = pairwise_ngrams.selected(units, starts, hyps, refs, order, np.column_stack([h, r]).ravel(), at)
            ref_len = lengths[r]
        else:
            h, r = pair_sentences(hyps, refs)
            found = pairwise_ngrams.pairwise(units, starts, hyps, refs, order)
            ref_len = lengths[r]
        totals = [ngram_matches.ngram_totals(lengths[h], n) for n in range(1, order + 1)]
        rows = np.column_stack([lengths[h], ref_len, found] + totals) if len(h) else np.zeros((0, 2 + 2 * order))
        return rows.astype(np.float64 if aggregate else np.int64)

    def sentence_scores(self, rows: Any) -> Any:
        """BLEU of every row of stats, each equal to :meth:`score` of it to the last bit (the ``pairwise_ngrams``
        kernel's ``bleu``, sacrebleu's steps with the C library's exp and log); rows of fractional counts (reference
        aggregation) take the same steps in Python, the reference length kept fractional."""
        from evalpipe.evaluators.kernels import pairwise_ngrams

        import numpy as np

        o = self.options
        value = o["smooth_value"] if o["smooth_value"] is not None else SMOOTH_DEFAULTS[o["smooth_method"]] or 0.0
        rows = np.asarray(rows)
        if rows.dtype.kind == "f" and not (rows == np.round(rows)).all():  # aggregated: mean counts and length
            return np.array([pairwise_ngrams.bleu_of_floats(r, self._order, o["smooth_method"], value,
                                                            o["effective_order"]) for r in rows.tolist()])
        return pairwise_ngrams.bleu(rows, self._order, o["smooth_method"], value, o["effective_order"])

    def score_from_stats(self, stats: List[Any]) -> float:
        """BLEU (0-100) from summed stats, as ``sacrebleu.BLEU.compute_bleu`` computes it."""
        o = self.options
        values = [_as_number(v) for v in stats]
        values[:2] = [int(values[0]), int(values[1])]
        return bleu_score(values, self._order, o["smooth_method"], o["smooth_value"], o["effective_order"])

    def score_many(self, sums: Any) -> Any:
        """BLEU of every row of a matrix of summed stats (vectorized; for resampling tests)."""
        from evalpipe.evaluators.formulas.scores import bleu_scores

        o = self.options
        return bleu_scores(sums, self._order, o["smooth_method"], o["smooth_value"], o["effective_order"])

    def display_name(self) -> str:
        return "BLEU"

    def signature(self, nrefs: Optional[int] = None) -> str:
        """sacrebleu's BLEU signature, e.g. ``nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0``."""
        o = self.options
        if o["tokenize"] == "13a":
            return sb.bleu_13a_signature(nrefs, o["lowercase"], o["effective_order"], o["smooth_method"],
                                         o["smooth_value"])
        return sb.signature(self._sacre, nrefs)


def matches_of_token_lists(ref: Sequence[List[str]], systems: Sequence[Sequence[List[str]]], order: int = 4
                           ) -> Optional[List[List[List[int]]]]:
    """Clipped n-gram matches (orders 1..``order``) of each sentence of each system against its one reference,
    on token lists as given (no tokenizer: compare-mt's space-split tokens, say): ``[system][order - 1][sentence]``,
    the references indexed once for all systems by the n-gram kernel; None when its keys do not fit (a sentence
    with over a thousand distinct tokens), for the caller to count those itself."""
    from itertools import chain

    from evalpipe.evaluators.kernels import ngram_matches

    vocab: Dict[str, int] = {}
    index = ngram_matches.build([ngram_matches.word_units(ref, vocab)], ngram_matches.lengths_of(ref)[:, None], order)
    if index is None:
        return None
    return [[m[:, 0].tolist() for m in index.matches(ngram_matches.ids(list(chain.from_iterable(out)), vocab),
                                                      ngram_matches.lengths_of(out))] for out in systems]

