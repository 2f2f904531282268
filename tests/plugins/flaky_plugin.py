"""A third-party metric that fails once: the first time any process scores the hypothesis ``FLAKY`` it
creates the file named by ``$EVALPIPE_FLAKY_MARKER`` and raises; every later time it scores it (a task
retried by Spark, in a fresh attempt) it succeeds.  Stats as ``dying_plugin`` (word counts)."""
import os

from evalpipe.sufficient_stats import Metric


class Flaky(Metric):
    name = "flaky"
    STATS_FIELDS = ("hyp_words", "ref_words")

    def segment_stats(self, hypothesis, references):
        if hypothesis == "FLAKY":
            try:
                with open(os.environ["EVALPIPE_FLAKY_MARKER"], "x"):
                    pass
            except FileExistsError:
                pass
            else:
                raise RuntimeError("injected fault: this task fails on its first attempt")
        return [len(hypothesis.split()), len(references[0].split())]

    def score_from_stats(self, stats):
        return stats[0] / stats[1]
