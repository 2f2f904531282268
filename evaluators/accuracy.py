"""Label accuracy for sequence labelling (tagging, dependency heads), position by position.

The hypothesis and the single reference are space-separated label sequences of equal length;
a length mismatch is an error for that segment, never a silent truncation.

Stats layout (integers): ``correct, gold, segments``.  Score::

    accuracy   = correct / gold
    attachment = (correct + segments) / (gold + segments)   (option ``attachment=true``: each
                 sentence's root attachment counted as correct, as in the sequence-labelling
                 evaluator API's "attachment" figure)

An empty corpus (denominator 0) scores 0.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

from evalpipe.errors import InputError
from evalpipe.sufficient_stats.metric import Metric
from evalpipe.sufficient_stats.options import Option


class Accuracy(Metric):
    """Position-by-position label accuracy (layout and formula in the module docstring)."""

    name = "accuracy"
    OPTIONS = {
        "attachment": Option(bool, False, "score (correct + segments) / (gold + segments)"),
        "lowercase": Option(bool, False, "compare labels case-insensitively"),
    }
    STATS_FIELDS = ("correct", "gold", "segments")
    NONNEGATIVE_STATS = True

    def stats_bounds(self) -> List[Tuple[str, str]]:
        return [("correct", "gold")]
    max_references = 1

    def segment_stats(self, hypothesis: str, refs: Tuple[str, ...]) -> List[int]:
        """``[correct, gold, 1]`` for one label sequence against its gold sequence."""
        if self.options["lowercase"]:
            hypothesis, gold_text = hypothesis.lower(), refs[0].lower()
        else:
            gold_text = refs[0]
        pred, gold = hypothesis.split(), gold_text.split()
        if len(pred) != len(gold):
            raise InputError(f"accuracy: expected {len(gold)} predicted labels (as many as gold labels), "
                             f"got {len(pred)}")
        return [sum(map(str.__eq__, pred, gold)), len(gold), 1]

    def score_from_stats(self, stats: List[float]) -> float:
        """correct / gold, or the attachment variant; 0 for an empty corpus."""
        correct, gold, segments = stats
        if self.options["attachment"]:
            correct, gold = correct + segments, gold + segments
        return float(correct / gold) if gold else 0.0

    def signature(self, nrefs: Optional[int] = None) -> str:
        o = self.options
        return f"attach:{'yes' if o['attachment'] else 'no'}|case:{'lc' if o['lowercase'] else 'mixed'}|evalpipe"
