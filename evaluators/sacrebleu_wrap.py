"""Running a sacrebleu metric segment by segment with evalpipe's reference cache.

sacrebleu's metrics already split into ``_extract_reference_info`` (reference side),
``_compute_segment_statistics`` (one hypothesis against that info) and
``_compute_score_from_stats``; this helper calls those exact methods, so the numbers are
sacrebleu's own, and keeps the reference side in a bounded LRU cache keyed by the reference strings.
"""
from __future__ import annotations

from typing import Any, List, Sequence

from evalpipe.evaluators.refs import check_hypothesis, reference_tuple
from evalpipe.sufficient_stats.cache import LRUCache
from evalpipe.sufficient_stats.nrefs import RefCounter


class SacrebleuSegments:
    """Per-segment stats and scores of one configured sacrebleu metric object."""

    def __init__(self, name: str, sacre_metric: Any, cache_size: int) -> None:
        self.name = name
        self.metric = sacre_metric
        self.cache: LRUCache = LRUCache(cache_size)
        self.nrefs = RefCounter()

    def _reference_info(self, refs: Sequence[str]) -> Any:
        prep = self.metric._preprocess_segment
        return self.metric._extract_reference_info([prep(r) for r in refs])

    def stats(self, hypothesis: str, references: Sequence[str]) -> List[Any]:
        check_hypothesis(self.name, hypothesis)
        refs = reference_tuple(self.name, references)
        self.nrefs.add(len(refs))
        info = self.cache.get_or_compute(refs, self._reference_info)
        return self.metric._compute_segment_statistics(self.metric._preprocess_segment(hypothesis), info)

    def score(self, stats: Sequence[Any]) -> float:
        values = [v.item() if hasattr(v, "item") else v for v in stats]
        return self.metric._compute_score_from_stats(values).score

    def signature(self) -> str:
        return self.nrefs.signature(self.metric)
