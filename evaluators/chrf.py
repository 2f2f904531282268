"""chrF and chrF++ (Popovic, 2015; 2017) as sufficient statistics, computed by sacrebleu.

Stats layout, all integers, three per order: first the character orders 1..char_order, then the
word orders 1..word_order (``word_order=2`` is chrF++)::

    c1_hyp, c1_ref, c1_match, ..., cK_hyp, cK_ref, cK_match, w1_hyp, w1_ref, w1_match, ...

With several references, the segment's stats are those of the reference with the best
sentence-level chrF (sacrebleu's rule).  Score (0-100): per order precision P_n = match/hyp and
recall R_n = match/ref are averaged over the orders with hyp > 0 and ref > 0 (or, with
``eps_smoothing``, F-scores per order are averaged with eps = 1e-16), then
``chrF = (1 + beta^2) P R / (beta^2 P + R)``.  Computed by sacrebleu's ``CHRF`` methods themselves.
"""
from __future__ import annotations

from typing import Any, List, Sequence

from sacrebleu.metrics.chrf import CHRF as _SacreCHRF

from evalpipe.evaluators.sacrebleu_wrap import SacrebleuSegments
from evalpipe.sufficient_stats.base import Metric, Option


class ChrF(Metric):
    """sacrebleu-identical chrF / chrF++ (layout and formula in the module docstring)."""

    name = "chrf"
    OPTIONS = {
        "char_order": Option(int, 6, "character n-gram order", minimum=1),
        "word_order": Option(int, 0, "word n-gram order (2 = chrF++)", minimum=0),
        "beta": Option(int, 2, "recall weight beta", minimum=1),
        "lowercase": Option(bool, False, "lowercase before matching"),
        "whitespace": Option(bool, False, "keep whitespace in character n-grams"),
        "eps_smoothing": Option(bool, False, "chrF++.py-style epsilon smoothing"),
        "cache_size": Option(int, 4096, "reference sets kept in the LRU cache (no effect on scores)", minimum=1),
    }
    STATS_FIELDS = tuple(f"c{n}_{k}" for n in range(1, 7) for k in ("hyp", "ref", "match"))

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        o = self.options
        self.stats_fields = tuple(f"c{n}_{k}" for n in range(1, o["char_order"] + 1) for k in ("hyp", "ref", "match")) \
            + tuple(f"w{n}_{k}" for n in range(1, o["word_order"] + 1) for k in ("hyp", "ref", "match"))
        sacre = _SacreCHRF(char_order=o["char_order"], word_order=o["word_order"], beta=o["beta"],
                           lowercase=o["lowercase"], whitespace=o["whitespace"], eps_smoothing=o["eps_smoothing"])
        self._seg = SacrebleuSegments(self.name, sacre, o["cache_size"])

    def stats(self, hypothesis: str, references: Sequence[str]) -> List[int]:
        """Per-order ``[hyp, ref, match]`` triples of the best-matching reference."""
        return self._seg.stats(hypothesis, references)

    def score(self, stats: Sequence[float]) -> float:
        """chrF (0-100) from summed stats, by ``sacrebleu.CHRF``."""
        self.check_stats(stats)
        return self._seg.score(stats)

    def signature(self) -> str:
        """sacrebleu's chrF signature, e.g. ``nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0``."""
        return self._seg.signature()
