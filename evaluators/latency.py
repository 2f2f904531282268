"""Latency metric plugins for simultaneous translation: AP, AL, DAL, LAAL, ATD, StartOffset, EndOffset.

Each sentence contributes ``[value, 1, 0]`` (or ``[0, 0, 1]`` when its hypothesis is empty), so the
stats layout is ``value_sum, scored, empty`` and the corpus value is ``value_sum / scored`` -- the
mean over sentences, as SimulEval reports it.  Empty hypotheses are skipped by that documented rule
and counted in ``empty``; a corpus in which every hypothesis is empty is an error, not a number.

Options:

* ``convention``: ``simuleval`` (default; SimulEval 1.1) or ``iwslt2020`` (the IWSLT 2020 server:
  the source counts its end-of-sentence unit, |X| + 1; the hypothesis ends with ``</s>``, whose
  delay is |X| + 1; every delay is capped at |X| + 1; the target length is the hypothesis length
  including ``</s>``).  Text only.
* ``unit``: ``text`` (delays in source words) or ``speech`` (milliseconds of source audio).
* ``computation_aware``: use the elapsed wall-clock times (ms) instead of the delays (speech only).
* ``target_length``: |Y| for AP and AL: ``reference`` (word count of the reference, SimulEval's
  default -- AP can then exceed 1 when the hypothesis is longer than the reference),
  ``hypothesis``, or ``max`` of the two (keeps AP <= 1 when delays <= |X|).  LAAL always uses the
  maximum; DAL always the hypothesis.  A metric that needs the reference raises on a missing one
  (SimulEval counts it as length 1); reference length counts whitespace-separated words
  (SimulEval splits on single spaces).

Formulas and sources: :mod:`evalpipe.evaluators.latency_formulas`.

Protocol form: ``SCORE ||| SOURCE_LENGTH ||| REFERENCE ||| DELAYS [||| ELAPSED]`` (the reference
may be empty when the configuration does not use it).  Combined with a quality metric (e.g.
``bleu-0.1*al``): ``SCORE ||| SOURCE_LENGTH ||| REFERENCE ||| DELAYS ||| HYPOTHESIS``.
"""
from __future__ import annotations

import json
from typing import Any, ClassVar, Dict, List, Optional, Sequence

import numpy as np

from evalpipe.evaluators import latency_formulas as F
from evalpipe.sufficient_stats.base import Metric, Option, OptionError
from evalpipe.sufficient_stats.vectors import parse_number


def _numbers(text: str, what: str) -> List[float]:
    try:
        return [parse_number(t) for t in text.split()]
    except ValueError as exc:
        raise ValueError(f"{what}: {exc}") from None


class LatencyMetric(Metric):
    """Base of the latency plugins (layout, options and rules in the module docstring)."""

    is_latency: ClassVar[bool] = True
    higher_is_better = False
    OPTIONS = {
        "convention": Option(str, "simuleval", "simuleval (SimulEval 1.1) or iwslt2020 (IWSLT 2020 server)",
                             choices=("simuleval", "iwslt2020")),
        "unit": Option(str, "text", "text: delays in source words; speech: in ms", choices=("text", "speech")),
        "computation_aware": Option(bool, False, "use elapsed wall-clock times (speech only)"),
        "target_length": Option(str, "reference", "|Y| for AP / AL", choices=("reference", "hypothesis", "max")),
    }
    STATS_FIELDS = ("value_sum", "scored", "empty")
    uses_reference: ClassVar[bool] = True
    label: ClassVar[str] = ""
    #: (hypothesis, references) pairs for the plugin contract tests: DELAYS, [SOURCE_LENGTH, REFERENCE]
    CONTRACT_EXAMPLES = [("3 4 5 6 6", ["6", "a b c d e"]), ("1 2 2 3", ["3", "x y z"]), ("", ["4", "p q"]),
                         ("5 5", ["5", "one two three"]), ("2 3 4", ["4", "u v w x"])]

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        o = self.options
        if o["computation_aware"] and o["unit"] != "speech":
            raise OptionError(f"{self.name}: computation_aware needs unit=speech (elapsed times are in ms, "
                              f"text delays in words); got unit={o['unit']}")
        if o["convention"] == "iwslt2020" and o["unit"] != "text":
            raise OptionError(f"{self.name}: the iwslt2020 convention is defined for text; got unit={o['unit']}")

    # -- inputs --------------------------------------------------------------------------------
    def instance_stats(self, instance: Dict[str, Any]) -> List[float]:
        """Stats of one SimulEval instance (``delays``, ``source_length``, ``reference``, ``elapsed``)."""
        for key in ("delays", "source_length"):
            if key not in instance:
                raise ValueError(f"{self.name}: expected an instance with {key!r}; got keys {sorted(instance)}")
        delays = instance.get("elapsed") if self.options["computation_aware"] else instance["delays"]
        if self.options["computation_aware"] and delays is None:
            raise ValueError(f"{self.name}: computation_aware needs 'elapsed' in the instance")
        return self.sentence_stats(float(instance["source_length"]), instance.get("reference"), list(delays or []))

    def item_stats(self, item: Any) -> List[float]:
        return self.instance_stats(item)

    def protocol_stats(self, fields: Sequence[str]) -> List[float]:
        if len(fields) not in (3, 4):
            raise ValueError(f"{self.name}: SCORE expects SOURCE_LENGTH ||| REFERENCE ||| DELAYS [||| ELAPSED]; "
                             f"got {len(fields)} field(s)")
        return self.simul_stats(fields[0], fields[1], fields[2], fields[3] if len(fields) == 4 else None)

    def simul_stats(self, source_length: str, reference: str, delays: str, elapsed: Optional[str] = None,
                    hypothesis: Optional[str] = None) -> List[float]:
        """Stats from the text fields of a simultaneous SCORE request."""
        src = _numbers(source_length, "SOURCE_LENGTH")
        if len(src) != 1 or src[0] <= 0:
            raise ValueError(f"{self.name}: expected SOURCE_LENGTH to be one positive number, got {source_length!r}")
        values = _numbers(delays, "DELAYS")
        if self.options["computation_aware"]:
            if elapsed is None:
                raise ValueError(f"{self.name}: computation_aware expects an ELAPSED field after DELAYS")
            values = _numbers(elapsed, "ELAPSED")
        return self.sentence_stats(src[0], reference, values)

    def stats(self, hypothesis: str, references: Sequence[str]) -> List[float]:
        """Text-API form of :meth:`protocol_stats`: ``hypothesis`` = DELAYS, ``references`` =
        ``[SOURCE_LENGTH, REFERENCE]``."""
        if isinstance(references, str) or len(references) != 2:
            raise ValueError(f"{self.name}: expected references = [SOURCE_LENGTH, REFERENCE] and hypothesis = DELAYS "
                             f"(at least one reference field is needed)")
        return self.simul_stats(references[0], references[1], hypothesis)

    # -- the computation -----------------------------------------------------------------------
    def reference_length(self, reference: Optional[str]) -> int:
        words = len(reference.split()) if isinstance(reference, str) else 0
        if words == 0:
            raise ValueError(f"{self.name} with target_length={self.options['target_length']} needs a reference; "
                             f"got {'none' if reference is None else 'an empty one'} "
                             f"(use -o target_length=hypothesis to score without one)")
        return words

    def target_length(self, reference: Optional[str], hyp_len: int) -> int:
        mode = self.options["target_length"]
        if mode == "hypothesis":
            return hyp_len
        ref_len = self.reference_length(reference)
        return ref_len if mode == "reference" else max(ref_len, hyp_len)

    def sentence_stats(self, src_len: float, reference: Optional[str], delays: List[float]) -> List[float]:
        """``[value, 1, 0]`` for a sentence, ``[0, 0, 1]`` for an empty hypothesis."""
        if not delays:
            return [0, 0, 1]
        if any(b < a for a, b in zip(delays, delays[1:])):
            raise ValueError(f"{self.name}: expected non-decreasing delays, got {delays[:8]}...")
        return [self.value(src_len, reference, delays), 1, 0]

    def value(self, src_len: float, reference: Optional[str], delays: List[float]) -> float:
        raise NotImplementedError(f"{type(self).__name__} must implement value()")

    def batch_values(self, src_lens: np.ndarray, references: Sequence[Optional[str]],
                     delays: Sequence[List[float]], flat: Optional["F.Columns"] = None,
                     ref_lens: Optional[np.ndarray] = None) -> np.ndarray:
        """Per-sentence values of many non-empty sentences (numpy where implemented).  ``flat``
        and ``ref_lens`` (reference word counts) may be passed in to share them between metrics."""
        return np.array([self.value(s, r, d) for s, r, d in zip(src_lens, references, delays)], dtype=np.float64)

    def batch_target_lengths(self, references, delays, ref_lens=None) -> np.ndarray:
        mode = self.options["target_length"]
        hyp = _hypothesis_lengths(delays)
        if mode == "hypothesis":
            return hyp
        if ref_lens is None:
            ref_lens = np.array([self.reference_length(r) for r in references], dtype=np.float64)
        elif (ref_lens == 0).any():
            self.reference_length(references[int(np.argmax(ref_lens == 0))])  # raises, naming the problem
        return ref_lens if mode == "reference" else np.maximum(ref_lens, hyp)

    def score(self, stats: Sequence[float]) -> float:
        """Mean over scored sentences; an error when none was scored."""
        self.check_stats(stats)
        value_sum, scored, empty = stats
        if scored == 0:
            raise ValueError(f"{self.name}: no sentence has a non-empty hypothesis ({int(empty)} empty); "
                             f"latency is undefined")
        return float(value_sum / scored)

    def signature(self) -> str:
        o = self.options
        return (f"{self.label}|conv:{o['convention']}|unit:{o['unit']}|ca:{'yes' if o['computation_aware'] else 'no'}"
                f"|tgt:{o['target_length'] if self.uses_reference else 'hyp'}|evalpipe")

    def _iwslt(self, src_len: float, delays: List[float]):
        return F.iwslt2020_inputs(delays, src_len)


def _hypothesis_lengths(delays: Any) -> np.ndarray:
    if isinstance(delays, F.Columns):
        return delays.lengths.astype(np.float64)
    return np.fromiter(map(len, delays), dtype=np.float64, count=len(delays))


class AP(LatencyMetric):
    """Average Proportion: sum of delays / (|X| |Y|)."""

    name, label = "ap", "AP"

    def value(self, src_len, reference, delays):
        if self.options["convention"] == "iwslt2020":
            d, src = self._iwslt(src_len, delays)
            return F.average_proportion(d, src, len(d))
        return F.average_proportion(delays, src_len, self.target_length(reference, len(delays)))

    def batch_values(self, src_lens, references, delays, flat=None, ref_lens=None):
        if self.options["convention"] != "simuleval":
            return super().batch_values(src_lens, references, delays)
        tgt = self.batch_target_lengths(references, flat or delays, ref_lens)
        return F.batch_average_proportion(flat or delays, np.asarray(src_lens, dtype=np.float64), tgt)


class AL(LatencyMetric):
    """Average Lagging (STACL)."""

    name, label = "al", "AL"

    def value(self, src_len, reference, delays):
        if self.options["convention"] == "iwslt2020":
            d, src = self._iwslt(src_len, delays)
            return F.average_lagging(d, src, len(d))
        return F.average_lagging(delays, src_len, self.target_length(reference, len(delays)))

    def batch_values(self, src_lens, references, delays, flat=None, ref_lens=None):
        if self.options["convention"] != "simuleval":
            return super().batch_values(src_lens, references, delays)
        tgt = self.batch_target_lengths(references, flat or delays, ref_lens)
        return F.batch_average_lagging(flat or delays, np.asarray(src_lens, dtype=np.float64), tgt)


class LAAL(AL):
    """Length-Adaptive Average Lagging: AL with |Y| = max(|hypothesis|, |reference|)."""

    name, label = "laal", "LAAL"

    def target_length(self, reference, hyp_len):
        return max(hyp_len, self.reference_length(reference))

    def batch_target_lengths(self, references, delays, ref_lens=None):
        hyp = _hypothesis_lengths(delays)
        if ref_lens is None or (ref_lens == 0).any():
            ref_lens = np.array([self.reference_length(r) for r in references], dtype=np.float64)
        return np.maximum(ref_lens, hyp)


class DAL(LatencyMetric):
    """Differentiable Average Lagging (|Y| = hypothesis length)."""

    name, label = "dal", "DAL"
    uses_reference = False

    def value(self, src_len, reference, delays):
        if self.options["convention"] == "iwslt2020":
            d, src = self._iwslt(src_len, delays)
            return F.differentiable_average_lagging(d, src)
        return F.differentiable_average_lagging(delays, src_len)

    def batch_values(self, src_lens, references, delays, flat=None, ref_lens=None):
        if self.options["convention"] != "simuleval":
            return super().batch_values(src_lens, references, delays)
        return F.batch_differentiable_average_lagging(flat or delays, np.asarray(src_lens, dtype=np.float64))


class StartOffset(LatencyMetric):
    """Delay of the first target token."""

    name, label = "start_offset", "StartOffset"
    uses_reference = False

    def value(self, src_len, reference, delays):
        return self._iwslt(src_len, delays)[0][0] if self.options["convention"] == "iwslt2020" else delays[0]


class EndOffset(LatencyMetric):
    """Delay of the last target token minus the source length."""

    name, label = "end_offset", "EndOffset"
    uses_reference = False

    def value(self, src_len, reference, delays):
        if self.options["convention"] == "iwslt2020":
            d, src = self._iwslt(src_len, delays)
            return d[-1] - src
        return delays[-1] - src_len


class ATD(LatencyMetric):
    """Average Token Delay (SimulEval 1.1's algorithm, text output).

    Text input: source and target tokens last 1 unit.  Speech input: source tokens last 300 ms,
    target text tokens 0 ms.  With ``computation_aware`` the computation time between outputs
    (elapsed - delays) is added to each target token, as SimulEval does.
    """

    name, label = "atd", "ATD"
    uses_reference = False

    def instance_stats(self, instance):
        delays = list(instance.get("delays") or [])
        if not delays:
            return [0, 0, 1]
        compute = [0.0] * len(delays)
        if self.options["computation_aware"]:
            elapsed = instance.get("elapsed")
            if not elapsed:
                raise ValueError(f"{self.name}: computation_aware needs 'elapsed' in the instance")
            if list(elapsed) != [0] * len(delays):
                spent = [e - d for e, d in zip(elapsed, delays)]
                compute = [a - b for a, b in zip(spent, [0] + spent[:-1])]
            else:
                compute = list(elapsed)
        return [self._atd(delays, compute), 1, 0]

    def simul_stats(self, source_length, reference, delays, elapsed=None, hypothesis=None):
        instance = {"delays": _numbers(delays, "DELAYS"), "source_length": _numbers(source_length, "SOURCE_LENGTH")}
        if elapsed is not None:
            instance["elapsed"] = _numbers(elapsed, "ELAPSED")
        return self.instance_stats(instance)

    def value(self, src_len, reference, delays):
        return self._atd(delays, [0.0] * len(delays))

    def _atd(self, delays, compute):
        text = self.options["unit"] == "text"
        return F.average_token_delay(delays, compute, 1 if text else 300, 1 if text else 0, text)


def read_instances(path: str) -> List[Dict[str, Any]]:
    """The records of a SimulEval ``instances.log`` (JSON lines); errors name the line."""
    out = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}, line {number}: expected a JSON object, {exc}") from None
            if not isinstance(record, dict) or "delays" not in record:
                raise ValueError(f"{path}, line {number}: expected a SimulEval instance with 'delays'")
            out.append(record)
    if not out:
        raise ValueError(f"{path} holds no instances")
    return out
