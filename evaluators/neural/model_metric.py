"""What every metric scored by a neural model shares (``comet``, ``cometkiwi``, ``metricx``).

Stats ``[sum, count]``: ``[score, 1]`` per segment; the corpus score is the mean of the segment scores.  A segment's
fields are the **source first**, then the reference when the model reads one (``SCORE ||| source ||| reference |||
hypothesis``).  Subclasses load their model and give ``score_rows(sources, hypotheses, references)`` (one float32
score a row) and ``_fields()`` (what a segment's fields must be, for the one-line error).
"""
from __future__ import annotations

from typing import Any, Dict, List, Sequence, Tuple

from evalpipe.errors import InputError, Unscorable
from evalpipe.sufficient_stats.metric import Metric
from evalpipe.sufficient_stats.options import Option


def running_options(batch_size: int) -> Dict[str, Option]:
    """The options of how a model runs, the same in every neural plugin (``batch_size`` its default)."""
    return {"batch_size": Option(int, batch_size, "inputs per forward pass", minimum=1),
            "batch_tokens": Option(int, 0, "padded tokens per forward pass at most, short inputs many to a batch (0: "
                                           "batch_size inputs only)", minimum=0),
            "device": Option(str, "auto", "auto (the GPU torch sees, else the CPU), cpu, cuda, cuda:N, or a list "
                                          "(cuda:0,cuda:1: inputs split over them)"),
            "threads": Option(int, 0, "CPU threads for torch (0: every core for batches of 16 inputs or more, one "
                                      "for smaller ones)", minimum=0)}


def on_long_option(limit: str, cut_as: str) -> Option:
    """``on_long``: what happens to an input past ``limit`` (evaluators/neural/windows.py for ``window``)."""
    return Option(str, "truncate", f"an input past {limit}: truncate (as {cut_as}, counted), error, or window "
                                   f"(scored in sentence windows, counted)", choices=("truncate", "error", "window"))


class ModelMetric(Metric):
    """A neural model's segment scores and their mean (module docstring)."""

    STATS_FIELDS = ("sum", "count")
    #: places in score-corpus's table unless -w is given (comet-score prints 4)
    decimals = 4
    #: the corpus score is the mean of the segment scores (comet-compare's t-test applies)
    segment_mean = True
    #: scores many segments per forward pass: serve scores the SCORE lines that arrive together as one batch
    batched = True
    #: reads the source of each segment (the first of its reference fields)
    reads_source = True
    #: a segment scored alone or in a batch of other lengths differs in the last float32 bits (~1e-7: matrix products
    #: of other shapes), as the anchors' own scores move with their batch size; totals are exact sums of what came
    EXACT_ACROSS_BATCHES = False

    def _fields(self) -> str:
        raise NotImplementedError

    def check_references(self, references: Sequence[str]) -> Tuple[str, ...]:
        refs = tuple(references)
        if not self.min_references <= len(refs) <= (self.max_references or len(refs)):
            raise InputError(f"{self.name}: expected {self._fields()} before the hypothesis, got {len(refs)} "
                             f"field{'s' if len(refs) != 1 else ''}")
        for r in refs:
            if not isinstance(r, str):
                raise InputError(f"{self.name}: expected strings, got {type(r).__name__}")
        return refs

    def segment_stats(self, hypothesis: str, references: Tuple[str, ...]) -> List[Any]:
        return self.block_stats([hypothesis], [[r] for r in references])[0]

    def own_scores(self, candidates: Sequence[Sequence[str]], sources: Sequence[str]) -> List[Any]:
        """Each segment's candidates scored without references, as one column (MBR by a reranker: each candidate's
        own score, mbrs's ``DecoderRerank``)."""
        flat = [c for cands in candidates for c in cands]
        scores = self.score_rows([src for cands, src in zip(candidates, sources) for _ in cands], flat, None)
        out, at = [], 0
        for cands in candidates:
            out.append(scores[at:at + len(cands)].reshape(len(cands), 1))
            at += len(cands)
        return out

    def score_from_stats(self, stats: List[Any]) -> float:
        total, count = stats
        if count == 0:
            raise Unscorable(f"{self.name}: no segment to score")
        return float(total / count)
