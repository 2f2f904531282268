"""A third-party metric whose process dies (``os._exit``) on the hypothesis ``DIE``: a worker killed
mid-chunk, as by the OOM killer."""
import os

from evalpipe.sufficient_stats import Metric


class Dying(Metric):
    """Counts words; the process exits abruptly on ``DIE``."""

    name = "dying"
    STATS_FIELDS = ("hyp_words", "ref_words")

    def segment_stats(self, hypothesis, references):
        if hypothesis == "DIE":
            os._exit(3)
        return [len(hypothesis.split()), len(references[0].split())]

    def score_from_stats(self, stats):
        return stats[0] / stats[1]
