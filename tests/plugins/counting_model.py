"""A third-party metric that "runs a model on the source" (``reads_source``, as COMET and MetricX) and records every
time it is built: the process id, one line, appended to the file named by ``$EVALPIPE_MODEL_LOADS``.  A model
that an engine loads once per process writes one line per process, however many segments it scores.  Its
utility is word overlap: shared words / candidate words, plus one thousandth of the source's word count."""
import os

import numpy as np

from evalpipe.sufficient_stats import Metric


class CountingModel(Metric):
    name = "counting_model"
    STATS_FIELDS = ("score", "count")
    reads_source = True
    uses_reference = True

    def __init__(self, **options):
        super().__init__(**options)
        with open(os.environ["EVALPIPE_MODEL_LOADS"], "a") as log:
            log.write(f"{os.getpid()}\n")

    def score_rows(self, sources, hypotheses, references):
        out = []
        for s, h, r in zip(sources, hypotheses, references):
            words, ref = h.split(), set(r.split())
            out.append(sum(w in ref for w in words) / max(len(words), 1) + len(s.split()) / 1000)
        return np.asarray(out, dtype=np.float32)

    def utility_matrices(self, candidates, pseudo_references, sources, aggregate=False):
        refs = candidates if pseudo_references is None else pseudo_references
        out = []
        for cands, rs, src in zip(candidates, refs, sources):
            flat = self.score_rows([src] * (len(cands) * len(rs)), [h for h in cands for _ in rs],
                                   [r for _ in cands for r in rs])
            out.append(flat.reshape(len(cands), len(rs)))
        return out

    def segment_stats(self, hypothesis, references):
        return [float(self.score_rows([references[0]], [hypothesis], [references[1]])[0]), 1]

    def score_from_stats(self, stats):
        return stats[0] / stats[1]
