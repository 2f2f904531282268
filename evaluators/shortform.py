"""Short-form YAAL and OmniSTEval's degeneracy check: ``yaal``, ``swf``, ``efsw``, ``dsptv``.

The IWSLT 2025/2026 simultaneous tracks score segment-level SimulEval outputs with OmniSTEval 0.1.10's
``shortform`` mode (``omnisteval/scoring.py``).  Per sentence, with delays d_1..d_|Y'| (source read when each
target unit was written), source length |X| and |Y| = max(|Y'|, |R|) (|R|: the reference in the target unit):

* **YAAL** (Papi et al., 2025, "Better Late Than Never", arXiv:2509.17349), ``is_longform=False``: gamma =
  |Y| / |X|; sum d_t - (t - 1) / gamma over t while d_t < |X| -- a unit written once the whole source was read
  does not count -- divided by the number of terms.  A sentence whose first delay already reaches |X| is not
  scored (nor is an empty one).  Stats ``value_sum scored skipped``, corpus value the mean.
* **SWF**, simultaneous words fraction: 100 x sum #{t: d_t < |X|} / sum |Y'| over every sentence.  Stats
  ``simultaneous units``.
* **EFSW**, expected fraction of simultaneous words: 100 x sum max(0, |X| - YAAL) / sum |X| over the sentences
  YAAL scores.  Stats ``numerator denominator``.
* **DSPTV**, the degenerate simultaneous policy test value: EFSW - SWF.  Stats ``simultaneous units numerator
  denominator``.  OmniSTEval flags a *likely degenerate simultaneous policy* (one that waits for the end of
  the source, or emits everything at once) when |DSPTV| > 20 (:data:`DEGENERATE_ABOVE`).

SWF, EFSW and DSPTV use the computation-unaware delays, as OmniSTEval does; YAAL takes
``computation_aware=true`` (elapsed times, ms) for its CA variant.  Sums of these stats are exact; OmniSTEval
adds them left to right (a difference far below the printed decimals).  A corpus where nothing is scored has
no value (:class:`~evalpipe.errors.Unscorable`; OmniSTEval prints ``nan``).
"""
from __future__ import annotations

from typing import Any, ClassVar, List, Sequence

import numpy as np

from evalpipe.errors import Unscorable
from evalpipe.evaluators.formulas import latency as F
from evalpipe.evaluators.latency import LAAL, LatencyMetric, Block, prepare_block
from evalpipe.sufficient_stats.options import Option
from evalpipe.sufficient_stats.vectors import Partial, partial_of_columns
from evalpipe.sufficient_stats.segments import SimulHypothesis

#: OmniSTEval's threshold on |DSPTV| (percentage points) for a likely degenerate policy
DEGENERATE_ABOVE = 20

_BASE = {key: LatencyMetric.OPTIONS[key] for key in ("unit", "computation_aware", "target_unit", "spm_model",
                                                     "reference_length")}
_CU = {key: LatencyMetric.OPTIONS[key] for key in ("unit", "target_unit", "spm_model", "reference_length")}
_SWF = {"unit": LatencyMetric.OPTIONS["unit"]}


class YAAL(LAAL):
    """Short-form YAAL (module docstring); |Y| = max(hypothesis, reference) in the target unit."""

    name, label = "yaal", "YAAL"
    OPTIONS = _BASE
    STATS_FIELDS = ("value_sum", "scored", "skipped")
    batch_formula = staticmethod(F.batch_yaal)

    def target_mode(self) -> str:
        return "max"

    def score_from_stats(self, stats: List[Any]) -> float:
        value_sum, scored, skipped = stats
        if scored == 0:
            raise Unscorable(f"{self.name}: no sentence writes a unit before its source ends ({int(skipped)} "
                             f"skipped); YAAL is undefined")
        return float(value_sum / scored)


class _Degeneracy(LatencyMetric):
    """Sums over a whole block of the computation-unaware delays (module docstring)."""

    OPTIONS = _CU
    parts: ClassVar[Sequence[str]] = ()

    def block_columns(self, hypotheses: Sequence[SimulHypothesis],
                      references: Sequence[Sequence[str]]) -> List[np.ndarray]:
        """Per-sentence values of each stats field."""
        n = len(hypotheses)
        simultaneous, numerator, denominator = np.zeros(n), np.zeros(n), np.zeros(n)
        units = np.fromiter((len(h.delays) for h in hypotheses), dtype=np.float64, count=n)  # empty sources too
        block = prepare_block(self, hypotheses, references)
        if block.kept:
            kept = np.array(block.kept)
            simultaneous[kept] = _before_end(block)
            if "numerator" in self.parts:
                ref = block.reference_lengths(self.options["target_unit"], self.options["spm_model"],
                                              self.options["reference_length"])
                if (ref == 0).any():
                    YAAL(**self.options).batch_values(block)  # raises, naming the missing reference
                yaal = F.batch_yaal(block.columns, block.src, np.maximum(ref, block.columns.lengths))
                scored = ~np.isnan(yaal)
                gap = block.src - yaal
                numerator[kept[scored]] = np.where(gap > 0.0, gap, 0.0)[scored]
                denominator[kept[scored]] = block.src[scored]
        columns = {"simultaneous": simultaneous, "units": units, "numerator": numerator, "denominator": denominator}
        return [columns[p] for p in self.parts]

    def block_stats(self, hypotheses: Sequence[SimulHypothesis], references: Sequence[Sequence[str]]) -> List[list]:
        return np.column_stack(self.block_columns(hypotheses, references)).tolist() if len(hypotheses) else []

    def corpus_partial(self, hypotheses: Sequence[Any], references: Sequence[Sequence[str]]) -> Partial:
        hypotheses = self.check_corpus(hypotheses, references)
        return partial_of_columns(self.block_columns(hypotheses, references), len(hypotheses))

    def signature(self, nrefs: Any = None) -> str:
        o = self.options
        unit = "" if o.get("target_unit", "word") == "word" else f"|tu:{o['target_unit']}"
        return f"{self.label}|unit:{o['unit']}{unit}|omnisteval-0.1.10|evalpipe"

    @staticmethod
    def swf(simultaneous: float, units: float) -> float:
        if units == 0:
            raise Unscorable("swf: no output units; the simultaneous words fraction is undefined")
        return 100.0 * simultaneous / units

    @staticmethod
    def efsw(numerator: float, denominator: float) -> float:
        if denominator == 0:
            raise Unscorable("efsw: YAAL scores no sentence; the expected simultaneous words fraction is undefined")
        return 100.0 * numerator / denominator


def _before_end(block: Block) -> np.ndarray:
    """Per kept sentence: how many of its (computation-unaware) delays are below its source length."""
    c = block.columns
    src = c.ranked(block.src)
    counts = np.zeros(len(src))
    for t in range(len(c.alive)):
        m = c.alive[t]
        counts[:m] += c.column(t) < src[:m]
    return c.unranked(counts)


class SWF(_Degeneracy):
    """Simultaneous words fraction, % (module docstring)."""

    name, label, higher_is_better, uses_reference = "swf", "SWF", True, False
    STATS_FIELDS = parts = ("simultaneous", "units")
    OPTIONS = _SWF

    def score_from_stats(self, stats: List[Any]) -> float:
        return self.swf(*stats)


class EFSW(_Degeneracy):
    """Expected fraction of simultaneous words, % (module docstring)."""

    name, label, higher_is_better = "efsw", "EFSW", True
    STATS_FIELDS = parts = ("numerator", "denominator")

    def score_from_stats(self, stats: List[Any]) -> float:
        return self.efsw(*stats)


class DSPTV(_Degeneracy):
    """Degenerate simultaneous policy test value: EFSW - SWF, percentage points (module docstring)."""

    name, label = "dsptv", "DSPTV"
    STATS_FIELDS = parts = ("simultaneous", "units", "numerator", "denominator")

    def score_from_stats(self, stats: List[Any]) -> float:
        simultaneous, units, numerator, denominator = stats
        swf = self.swf(simultaneous, units)
        return self.efsw(numerator, denominator) - swf
