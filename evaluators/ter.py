"""Translation Edit Rate (Snover et al., 2006) as sufficient statistics, computed by sacrebleu.

Stats layout: ``num_edits, ref_length`` -- the fewest Tercom edits (insertions, deletions,
substitutions and block shifts) over the references, and the *average* reference length (a float
when references differ in length).  Score (0-100, lower is better)::

    TER = 100 * sum(num_edits) / sum(ref_length)    (100 if no reference words but some edits)

Tokenization and normalization are sacrebleu's ``TER`` methods themselves.  The edit count is the C
kernel of :mod:`evalpipe.evaluators.kernels.tercom` when it was built at install (option ``kernel``:
``auto``, ``c``, ``python`` for the kernel's Python reference, or ``sacrebleu``), else sacrebleu's own
``translation_edit_rate`` -- the same integers (``tests/test_ter_kernel.py``), about 90x faster on real
WMT21 segments.  The shift search costs time in proportion to
hypothesis length x reference length; like sacrebleu, evalpipe scores any length by default (a 141,863-token
hypothesis among 1,002 WMT21 lines: 0.6 s through `evalpipe sacrebleu`, 8.9 s in sacrebleu).  A server that must answer quickly can
set ``max_tokens``: a segment with more whitespace tokens is then an error naming the option.  The float column is summed with
``math.fsum`` (exact, order-independent); sacrebleu adds it left to right, so with several
references of unequal length the two totals can differ in the last bit.
"""
from __future__ import annotations

from typing import Any, List, Optional, Tuple

import numpy as np

from evalpipe.errors import InputError, OptionError
from evalpipe.evaluators import sacrebleu_api as sb
from evalpipe.sufficient_stats.cache import LRUCache
from evalpipe.sufficient_stats.metric import Metric
from evalpipe.sufficient_stats.options import Option


class TER(Metric):
    """sacrebleu-identical TER (layout and formula in the module docstring)."""

    name = "ter"
    higher_is_better = False
    OPTIONS = {
        "normalized": Option(bool, False, "Tercom normalization"),
        "no_punct": Option(bool, False, "remove punctuation"),
        "asian_support": Option(bool, False, "CJK handling (with normalized / no_punct)"),
        "case_sensitive": Option(bool, False, "do not lowercase"),
        "cache_size": Option(int, 4096, "reference sets kept in the LRU cache (no effect on scores)", minimum=1),
        "max_tokens": Option(int, 0, "refuse a hypothesis or reference longer than this many tokens (0: no limit, as "
                                     "sacrebleu; a server may set one)", minimum=0),
        "kernel": Option(str, "auto", "edit counting: auto (C when built, else sacrebleu's own code), c, python "
                                      "(the C kernel's reference) or sacrebleu; the same numbers",
                         choices=("auto", "c", "python", "sacrebleu")),
    }
    STATS_FIELDS = ("num_edits", "ref_length")
    NONNEGATIVE_STATS = True

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        o = self.options
        if o["asian_support"] and not (o["normalized"] or o["no_punct"]):
            raise OptionError("ter: asian_support acts only with normalized=true or no_punct=true (sacrebleu's "
                              "tercom tokenizer ignores it otherwise)")
        self._sacre = sb.metric("ter", **{k: v for k, v in o.items() if k not in ("cache_size", "max_tokens", "kernel")})
        self._cache: LRUCache = LRUCache(o["cache_size"])
        from evalpipe.evaluators.kernels import tercom as ter_kernel

        kernel = o["kernel"]
        if kernel == "c" and not ter_kernel.NATIVE:
            raise OptionError("ter: kernel=c needs the C kernels, built by pip install when a C compiler is there")
        self._kernel = {"c": ter_kernel.native_edits, "python": ter_kernel.python_edits, "sacrebleu": None,
                        "auto": ter_kernel.native_edits if ter_kernel.NATIVE else None}[kernel]

    def segment_stats(self, hypothesis: str, refs: Tuple[str, ...]) -> List[Any]:
        """``[num_edits, average reference length]`` for one segment, by sacrebleu's own methods."""
        limit = self.options["max_tokens"]
        for what, text in (("hypothesis", hypothesis), *(("reference", r) for r in refs)) if limit else ():
            if len(text) > limit and len(text.split()) > limit:
                raise InputError(f"ter: expected at most {limit} tokens in a {what}, got {len(text.split())} "
                                 f"(the metric option max_tokens={limit}; 0 lifts the limit)")
        if self._kernel is None:
            info = self._cache.get_or_compute(refs, lambda r: sb.reference_info(self._sacre, r))
            return sb.segment_statistics(self._sacre, hypothesis, info)
        words, vocab, ref_ids = self._cache.get_or_compute(refs, self._reference_ids)
        unknown: dict = {}  # hypothesis words no reference has: ids below 0, distinct per word
        hyp = np.fromiter((vocab.get(w) if w in vocab else unknown.setdefault(w, -1 - len(unknown))
                           for w in sb.ter_words(self._sacre, hypothesis)), dtype=np.int64)
        best = min(self._kernel(hyp, ref) for ref in ref_ids)
        return [best, sum(map(len, words)) / len(words)]

    def _reference_ids(self, refs: Tuple[str, ...]) -> tuple:
        """(reference words, their vocabulary, each reference as an id array)."""
        from evalpipe.evaluators.kernels.ngram_matches import word_units

        words = [sb.ter_words(self._sacre, r) for r in refs]
        vocab: dict = {}
        return words, vocab, [word_units([ws], vocab) for ws in words]

    def score_from_stats(self, stats: List[Any]) -> float:
        """TER (0-100) from summed stats, by ``sacrebleu.TER``."""
        return sb.score_from_stats(self._sacre, stats)

    def display_name(self) -> str:
        return "TER"

    def signature(self, nrefs: Optional[int] = None) -> str:
        """sacrebleu's TER signature, e.g. ``nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:2.6.0``."""
        return sb.signature(self._sacre, nrefs)
