"""A third-party metric with a bug: it raises ZeroDivisionError on the hypothesis ``boom``."""
from evalpipe.sufficient_stats import Metric


class Broken(Metric):
    """Counts words; divides by zero on ``boom`` (a plugin bug, not bad input)."""

    name = "broken"
    STATS_FIELDS = ("hyp_words", "ref_words")

    def segment_stats(self, hypothesis, references):
        if hypothesis == "boom":
            raise ZeroDivisionError("the plugin divided by zero")
        return [len(hypothesis.split()), len(references[0].split())]

    def score_from_stats(self, stats):
        return stats[0] / stats[1]
