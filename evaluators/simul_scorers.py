"""SimulEval 1.1.4's other latency scorers: ``num_chunks``, ``rtf``, ``discontinuity_sum``, ``discontinuity_ave``,
``discontinuity_num`` (``simuleval/evaluator/scorers/latency_scorer.py``).

Each is a mean over the sentences with output (stats ``value_sum scored empty``, as the other latency
plugins; SimulEval skips a sentence without delays):

* **NumChunks**: the number of delays -- target units for a text output, segments for a speech output.
* **RTF** (real-time factor): d_last / |X|; for a speech output the end of its last segment / |X|.  With
  ``computation_aware`` the last elapsed time (ms) / |X| (text output).
* **DiscontinuitySum / Ave / Num**, speech output only (a log with ``durations``, the length in ms of each
  output segment): SimulEval plays segment i at max(d_i, end of segment i - 1); each gap before a segment is a
  silence (:func:`~evalpipe.evaluators.formulas.latency.speech_intervals`, SimulEval's
  ``SpeechOutputInstance.summarize``).  Sum of the silences, their mean (0 without any) and their number.

RTF and EndOffset of a speech output use the segments' ends as SimulEval's live evaluation does (its
``--score-only`` reading of a log takes the last delay for RTF).
"""
from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from evalpipe.errors import InputError
from evalpipe.evaluators.formulas import latency as F
from evalpipe.evaluators.latency import LatencyMetric, Block, output_ends
from evalpipe.sufficient_stats.segments import SimulHypothesis

_UNIT = {"unit": LatencyMetric.OPTIONS["unit"]}


class NumChunks(LatencyMetric):
    """Number of output chunks (delays) per sentence."""

    name, label, uses_reference = "num_chunks", "NumChunks", False
    OPTIONS = _UNIT

    def batch_values(self, block: Block) -> np.ndarray:
        return block.columns.lengths.astype(np.float64)


class RTF(LatencyMetric):
    """Real-time factor: when the output ends / the source length."""

    name, label, uses_reference = "rtf", "RTF", False
    OPTIONS = {**_UNIT, "computation_aware": LatencyMetric.OPTIONS["computation_aware"]}

    def batch_values(self, block: Block) -> np.ndarray:
        return output_ends(block) / block.src


class _Discontinuity(LatencyMetric):
    """A value of each speech output's silences (module docstring)."""

    uses_reference = False
    OPTIONS: ClassVar[dict] = {}
    of_silences: ClassVar[Any] = None
    CONTRACT_EXAMPLES = [(SimulHypothesis([300, 900, 900, 2400], 3000, durations=[500, 200, 100, 400]), []),
                         (SimulHypothesis([1000], 1500, durations=[700]), []),
                         (SimulHypothesis([], 800, durations=[]), []),
                         (SimulHypothesis([0, 10, 5000], 4000, durations=[20, 30, 40]), [])]

    def signature(self, nrefs: Any = None) -> str:
        return f"{self.label}|unit:speech-output|evalpipe"

    def batch_values(self, block: Block) -> np.ndarray:
        if block.durations is None or any(d is None for d in block.durations):
            raise InputError(f"{self.name} needs a speech output: a log whose instances carry 'durations' "
                             f"(SimulEval's speech-to-speech logs)")
        return np.array([type(self).of_silences(F.speech_intervals(h.delays, d)[1])
                         for h, d in zip(block.hypotheses, block.durations)], dtype=np.float64)


def _sum(silences: Any) -> float:
    return sum(silences)


def _ave(silences: Any) -> float:
    return sum(silences) / len(silences) if len(silences) else 0


class DiscontinuitySum(_Discontinuity):
    """Sum of the silences in a speech output (ms)."""

    name, label = "discontinuity_sum", "DiscontinuitySum"
    of_silences = staticmethod(_sum)


class DiscontinuityAve(_Discontinuity):
    """Mean silence in a speech output (ms; 0 without silences)."""

    name, label = "discontinuity_ave", "DiscontinuityAve"
    of_silences = staticmethod(_ave)


class DiscontinuityNum(_Discontinuity):
    """Number of silences in a speech output."""

    name, label = "discontinuity_num", "DiscontinuityNum"
    of_silences = staticmethod(len)

