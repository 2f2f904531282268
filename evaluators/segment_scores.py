"""Segment scores computed elsewhere as a metric: ``segment_scores``.

The hypothesis of a segment is its score (a number: a COMET, MetricX or BLEURT score, a human judgement), read from
a file by :mod:`evalpipe.score_files`.  Stats ``[sum, count]``: ``[score, 1]`` per segment; the corpus score is the
mean, sum / count -- the system score COMET, MetricX and MTME report.  A segment without a score (``None`` in an
MTME file: MQM rates a subset) is ``[0, 0]``, so the mean is over the scored segments, as MTME's system MQM is.  So confidence intervals, paired bootstrap
and approximate randomization, all pairs with Holm clusters and reports work on it as on any metric, and
``segment_mean`` lets comet-compare's paired t-test run on its segment scores.

Options: ``label`` (e.g. ``COMET``), ``origin`` (the signature of a model evalpipe ran, shown as this metric's),
``direction``: ``higher`` or ``lower`` is better, or ``auto`` --
lower for names of error-predicting metrics (MetricX, MQM-style error scores: :data:`LOWER_IS_BETTER`), higher
for the rest.
"""
from __future__ import annotations

import math
from typing import Any, List, Optional, Tuple

from evalpipe.errors import InputError, Unscorable
from evalpipe.sufficient_stats.metric import Metric
from evalpipe.sufficient_stats.options import Option

#: substrings of a name (lower-cased) whose scores are better when lower: MetricX predicts an error score
LOWER_IS_BETTER = ("metricx", "mqm-error", "ter", "wer")


def lower_is_better(name: str) -> bool:
    """Whether a metric of this name is better when lower, by :data:`LOWER_IS_BETTER`."""
    lowered = name.lower()
    return any(part in lowered for part in LOWER_IS_BETTER)


class SegmentScores(Metric):
    """Precomputed segment scores (module docstring)."""

    name = "segment_scores"
    hypothesis_kind = "score"
    min_references, max_references = 0, None
    uses_reference = False
    STATS_FIELDS = ("sum", "count")
    OPTIONS = {"label": Option(str, "scores", "what these scores are called (COMET, MetricX, ...)"),
               "direction": Option(str, "auto", "higher or lower is better; auto: lower for MetricX-like names",
                                   choices=("auto", "higher", "lower")),
               "origin": Option(str, "", "the signature of what computed the scores (a model evalpipe ran)")}
    #: the corpus score is the mean of the segment scores (comet-compare's t-test applies)
    segment_mean = True
    CONTRACT_EXAMPLES = [(0.8125, []), (0.25, []), (-1.5, []), (0.0, []), (3.0, [])]

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        direction = self.options["direction"]
        self.higher_is_better = not lower_is_better(self.options["label"]) if direction == "auto" \
            else direction == "higher"

    def check_hypothesis(self, hypothesis: Any, index: Optional[int] = None) -> Any:
        where = "" if index is None else f" (segment {index + 1})"
        if hypothesis is None:
            return None  # a segment without a score (MTME's None): [0, 0]
        if not isinstance(hypothesis, float) or not math.isfinite(hypothesis):
            raise InputError(f"{self.options['label']}{where}: expected the hypothesis to be a segment score (a finite "
                             f"float), got {hypothesis!r}")
        return float(hypothesis)

    def check_references(self, references: Any) -> Tuple[str, ...]:
        return tuple(references)  # scores carry no references; any given are not used

    def segment_stats(self, hypothesis: Optional[float], references: Tuple[str, ...]) -> List[Any]:
        return [0.0, 0] if hypothesis is None else [hypothesis, 1]

    def score_from_stats(self, stats: List[Any]) -> float:
        total, count = stats
        if count == 0:
            raise Unscorable(f"{self.options['label']}: no segment has a score")
        return float(total / count)

    def display_name(self) -> str:
        return self.options["label"]

    def signature(self, nrefs: Optional[int] = None) -> str:
        if self.options["origin"]:
            return self.options["origin"]
        return (f"label:{self.options['label']}|segment scores|mean|dir:{'higher' if self.higher_is_better else 'lower'}"
                f"|evalpipe")
