"""Latency metric plugins for simultaneous translation: AP, AL, DAL, LAAL, ATD, StartOffset, EndOffset.

Each sentence contributes ``[value, 1, 0]`` (or ``[0, 0, 1]`` when its hypothesis or its source is empty), so the
stats layout is ``value_sum, scored, empty`` and the corpus value is ``value_sum / scored`` -- the
mean over sentences, as SimulEval reports it.  Empty hypotheses are skipped by that documented rule
and counted in ``empty``; a corpus in which every hypothesis is empty is an error, not a number.

Options:

* ``convention``: ``simuleval`` (default; SimulEval 1.1) or ``iwslt2020`` (the IWSLT 2020 server's
  scorer, fairseq commit 12d5e6ff, ``examples/simultaneous_translation/eval``: the source counts its
  end-of-sentence unit, |X| + 1; the delays are the server's steps -- a token written after the source's
  ``</s>`` was served has |X| + 1 -- with the hypothesis's own ``</s>`` last, each capped at |X| + 1; the
  target length counts that ``</s>``).  A hypothesis with ``server_delays`` (recorded by evalpipe's
  server) is scored on them; one without (a SimulEval log) gets SimulEval's delays with a final ``</s>``
  at |X| + 1, the closest those records allow.  Text only.
* ``unit``: ``text`` (delays in source words) or ``speech`` (milliseconds of source audio).
* ``computation_aware``: use the elapsed wall-clock times (ms) instead of the delays (speech only).
* ``target_length``: |Y| for AP and AL: ``reference`` (word count of the reference, SimulEval's
  default -- AP can then exceed 1 when the hypothesis is longer than the reference),
  ``hypothesis``, or ``max`` of the two (keeps AP <= 1 when delays <= |X|).  LAAL always uses the
  maximum; DAL always the hypothesis.  A metric that needs the reference raises on a missing one
  (SimulEval counts it as length 1); reference length counts whitespace-separated words
  (SimulEval splits on single spaces).
* ``target_unit``: ``word`` (default), ``char`` or ``spm`` -- SimulEval's ``--eval-latency-unit``: the unit of
  |R|, the reference's length, for AL, AP, LAAL (and YAAL); with ``spm`` the model is ``spm_model=FILE``
  (:mod:`evalpipe.evaluators.formulas.target_units`).  The delays are per target unit as the log or the
  server recorded them.  A speech output (a log with ``durations``) has no text units: char and spm are
  refused there.

Formulas and sources: :mod:`evalpipe.evaluators.formulas.latency`.

A segment is a :class:`~evalpipe.sufficient_stats.segments.SimulHypothesis` (delays, source length,
elapsed times, text) with at most one reference.  ``corpus_partial`` (the totals of every engine,
``score-corpus --instances`` and the simultaneous server) and ``block_stats`` (rows) compute AL,
LAAL, DAL and AP of a whole corpus or block with numpy, bit-identical per sentence to
``segment_stats`` and to SimulEval 1.1.4.  The protocol's wire form is parsed in
:mod:`evalpipe.protocol.requests`, SimulEval records in :mod:`evalpipe.simul.records`.
"""
from __future__ import annotations

import math
from typing import Any, ClassVar, Dict, List, Optional, Sequence, Tuple

import numpy as np

from evalpipe.errors import InputError, OptionError, Unscorable
from evalpipe.evaluators.formulas import latency as F
from evalpipe.evaluators.formulas.target_units import UNITS, reference_lengths, spm_processor
from evalpipe.sufficient_stats.metric import Metric
from evalpipe.sufficient_stats.options import Option
from evalpipe.sufficient_stats.vectors import Partial, partial_of_columns
from evalpipe.sufficient_stats.segments import SimulHypothesis

EMPTY = [0, 0, 1]


class LatencyMetric(Metric):
    """Base of the latency plugins (layout, options and rules in the module docstring)."""

    hypothesis_kind = "simul"
    min_references, max_references = 0, 1
    higher_is_better = False
    OPTIONS = {
        "convention": Option(str, "simuleval", "simuleval (SimulEval 1.1) or iwslt2020 (IWSLT 2020 server)",
                             choices=("simuleval", "iwslt2020")),
        "unit": Option(str, "text", "text: delays in source words; speech: in ms", choices=("text", "speech")),
        "computation_aware": Option(bool, False, "use elapsed wall-clock times (speech only)"),
        "target_length": Option(str, "reference", "|Y| for AP / AL", choices=("reference", "hypothesis", "max")),
        "target_unit": Option(str, "word", "unit of the reference's length: word, char or spm (SimulEval's "
                              "--eval-latency-unit)", choices=UNITS),
        "spm_model": Option(str, "", "sentencepiece model file for target_unit=spm"),
        "reference_length": Option(str, "words", "|R| in words: words (whitespace-separated) or omnisteval (split "
                                   "on single spaces, as SimulEval and OmniSTEval count; simuleval is the same)",
                                   choices=("words", "omnisteval"), aliases=(("simuleval", "omnisteval"),)),
    }
    STATS_FIELDS = ("value_sum", "scored", "empty")
    uses_reference: ClassVar[bool] = True
    label: ClassVar[str] = ""
    #: (hypothesis, references) pairs for the plugin contract tests
    CONTRACT_EXAMPLES = [(SimulHypothesis([3, 4, 5, 6, 6], 6), ["a b c d e"]),
                         (SimulHypothesis([1, 2, 2, 3], 3), ["x y z"]), (SimulHypothesis([], 4), ["p q"]),
                         (SimulHypothesis([5, 5], 5), ["one two three"]), (SimulHypothesis([2, 3, 4], 4), ["u v w x"])]

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        o = self.options
        if "target_unit" in o:
            if o["target_unit"] == "spm":
                spm_processor(o["spm_model"])  # a missing or bad model fails now, naming the file
            elif o["spm_model"]:
                raise OptionError(f"{self.name}: spm_model acts only with target_unit=spm; got "
                                  f"target_unit={o['target_unit']}")
            if o["target_unit"] != "word" and o.get("convention") == "iwslt2020":
                raise OptionError(f"{self.name}: the iwslt2020 convention counts words; got "
                                  f"target_unit={o['target_unit']}")
        if o.get("computation_aware") and o.get("unit") != "speech":
            raise OptionError(f"{self.name}: computation_aware needs unit=speech (elapsed times are in ms, "
                              f"text delays in words); got unit={o['unit']}")
        if o.get("convention") == "iwslt2020" and o["unit"] != "text":
            raise OptionError(f"{self.name}: the iwslt2020 convention is defined for text; got unit={o['unit']}")

    # -- one segment ---------------------------------------------------------------------------
    def checked_delays(self, hyp: SimulHypothesis) -> Sequence[float]:
        if not (isinstance(hyp.source_length, (int, float)) and math.isfinite(hyp.source_length)
                and hyp.source_length >= 0):
            raise InputError(f"{self.name}: expected the source length to be one number, 0 or more, "
                             f"got {hyp.source_length!r}")
        if not self.options.get("computation_aware"):
            return hyp.delays
        if hyp.elapsed is None:
            raise InputError(f"{self.name}: computation_aware needs the elapsed times of the hypothesis")
        return hyp.elapsed

    def segment_stats(self, hypothesis: SimulHypothesis, references: Tuple[str, ...]) -> List[Any]:
        """``[value, 1, 0]`` for a sentence, ``[0, 0, 1]`` for an empty hypothesis (the block path on one)."""
        return self.block_stats([hypothesis], [[r] for r in references])[0]

    def target_mode(self) -> str:
        if self.options.get("convention") == "iwslt2020":
            return "hypothesis"  # with its </s>
        return self.options["target_length"] if self.uses_reference else "hypothesis"

    # -- a corpus or block with numpy ----------------------------------------------------------
    def _values(self, hypotheses: Sequence[SimulHypothesis],
                references: Sequence[Sequence[str]]) -> Tuple[List[int], np.ndarray]:
        """(indices of the sentences with a hypothesis, their values) by :meth:`batch_values`."""
        block = prepare_block(self, hypotheses, references)
        if not block.kept:
            return [], np.empty(0)
        values = self.batch_values(block)
        scored = ~np.isnan(values)  # NaN: this metric does not score the sentence (YAAL's first delay at |X|)
        if scored.all():
            return block.kept, values
        return [k for k, ok in zip(block.kept, scored.tolist()) if ok], values[scored]

    def block_stats(self, hypotheses: Sequence[SimulHypothesis], references: Sequence[Sequence[str]]) -> List[list]:
        """Rows of a block, from the numpy values (:meth:`batch_values`)."""
        rows = [list(EMPTY) for _ in hypotheses]
        kept, values = self._values(hypotheses, references)
        for i, v in zip(kept, values.tolist()):
            rows[i] = [v, 1, 0]
        return rows

    def corpus_partial(self, hypotheses: Sequence[Any], references: Sequence[Sequence[str]]) -> Partial:
        """The exact column sums of the whole corpus from the numpy values, without building rows."""
        hypotheses = self.check_corpus(hypotheses, references)
        kept, values = self._values(hypotheses, references)
        return partial_of_columns([values, len(kept), len(hypotheses) - len(kept)], len(hypotheses))

    #: the batched formula: (columns, source lengths, target lengths) -> values
    batch_formula: ClassVar[Any] = None

    def batch_values(self, block: "Block") -> np.ndarray:
        """Per-sentence values of a block's sentences with a hypothesis."""
        columns, src = block.columns, block.src
        mode, hyp = self.target_mode(), columns.lengths.astype(np.float64)
        if mode == "hypothesis":
            return type(self).batch_formula(columns, src, hyp)
        ref_lens = block.reference_lengths(self.options["target_unit"], self.options["spm_model"],
                                           self.options["reference_length"])
        if (ref_lens == 0).any():
            missing = block.references[int(np.argmax(ref_lens == 0))]
            if "target_length" not in self.options:
                raise InputError(f"{self.name} needs a reference of at least one {self.options['target_unit']}; "
                                 f"got {'none' if missing is None else 'an empty one'}")
            raise InputError(f"{self.name} with target_length={self.options['target_length']} needs a reference; "
                             f"got {'none' if missing is None else 'an empty one'} "
                             f"(use -o target_length=hypothesis to score without one)")
        return type(self).batch_formula(columns, src, ref_lens if mode == "reference" else np.maximum(ref_lens, hyp))

    def score_from_stats(self, stats: List[Any]) -> float:
        """Mean over scored sentences; an error when none was scored."""
        value_sum, scored, empty = stats[:3]
        if scored == 0:
            raise Unscorable(f"{self.name}: no sentence has both a hypothesis and a source ({int(empty)} without); "
                             f"latency is undefined")
        return float(value_sum / scored)

    def signature(self, nrefs: Optional[int] = None) -> str:
        o = self.options
        parts = [self.label] + ([f"conv:{o['convention']}"] if "convention" in o else []) + [f"unit:{o['unit']}"]
        if "computation_aware" in o:
            parts.append(f"ca:{'yes' if o['computation_aware'] else 'no'}")
        if "target_length" in o or self.uses_reference:
            parts.append(f"tgt:{self.target_mode() if self.uses_reference else 'hyp'}")
        if o.get("target_unit", "word") != "word":
            parts.append(f"tu:{o['target_unit']}")
        if o.get("reference_length", "words") != "words":
            parts.append(f"rl:{o['reference_length']}")
        return "|".join(parts + ["evalpipe"])


class Block:
    """What AL, AP, DAL and LAAL share about one block: the sentences with a hypothesis (``kept``),
    their delays' :class:`~evalpipe.evaluators.formulas.latency.Columns`, source lengths and
    references; reference word counts are counted on first use."""

    def __init__(self, metric: LatencyMetric, hypotheses: Sequence[SimulHypothesis],
                 references: Sequence[Sequence[str]]) -> None:
        checked = metric.options.get("computation_aware") or {type(h.source_length) for h in hypotheses} - {int, float}
        delays = [metric.checked_delays(h) if checked else h.delays for h in hypotheses]  # checks name what is wrong
        iwslt = metric.options.get("convention") == "iwslt2020"
        if iwslt:  # the server's steps where it recorded them, else derived from SimulEval's delays
            delays = [[min(d, h.source_length + 1) for d in h.server_delays] if h.server_delays is not None
                      else F.iwslt2020_delays(d, h.source_length) if len(d) else d
                      for h, d in zip(hypotheses, delays)]
        src = np.array([float(h.source_length) for h in hypotheses])
        if not (np.isfinite(src).all() and (src >= 0).all()):
            bad = int(np.argmin(np.isfinite(src) & (src >= 0)))
            metric.checked_delays(hypotheses[bad])  # raises, naming the problem
        # an empty source (|X| = 0) has no latency: not scored, as an empty hypothesis (OmniSTEval skips it too)
        self.kept = [i for i, d in enumerate(delays) if len(d) and src[i] > 0]
        everything = len(self.kept) == len(delays)
        self.src = src if everything else src[self.kept]
        delays = delays if everything else [delays[i] for i in self.kept]
        if iwslt:
            self.src = self.src + 1  # the end-of-sentence unit counts in the source
        self.columns = F.Columns(delays)
        stream = references[0] if references else [None] * len(hypotheses)
        self.references = list(stream) if everything else [stream[i] for i in self.kept]
        kept = hypotheses if everything else [hypotheses[i] for i in self.kept]
        self.hypotheses = kept
        self.durations = [h.durations for h in kept] if any(h.durations is not None for h in kept) else None
        self._lengths: Dict[Tuple[str, str, str], np.ndarray] = {}

    def reference_lengths(self, unit: str = "word", spm_model: str = "", count: str = "words") -> np.ndarray:
        """|R| of the kept sentences in ``unit`` (counted on first use); ``count``: how words are counted."""
        if self.durations is not None:
            raise InputError("this log has a speech output (durations): its delays are when speech segments start, "
                             "not target words, so a metric that sets them against the reference's length (AL, LAAL, "
                             "AP, YAAL) means nothing on it (SimulEval aligns speech to words first); score "
                             "start_offset, end_offset, rtf or discontinuity_* instead")
        key = (unit, spm_model, count)
        if key not in self._lengths:
            self._lengths[key] = reference_lengths(self.references, unit, spm_model, count == "omnisteval")
        return self._lengths[key]


def output_ends(block: "Block") -> np.ndarray:
    """When each kept sentence's output ends: its last delay, or for a speech output the end of its last
    segment (start + duration, SimulEval's intervals)."""
    ends = block.columns.last()
    if block.durations is not None:
        for i, durations in enumerate(block.durations):
            if durations is not None:
                start, duration = F.speech_intervals(block.hypotheses[i].delays, durations)[0][-1]
                ends[i] = start + duration
    return ends


def prepare_block(metric: LatencyMetric, hypotheses: Sequence[SimulHypothesis],
             references: Sequence[Sequence[str]]) -> Block:
    """The :class:`Block` of a block, kept in the input's hypothesis cache
    (:class:`~evalpipe.sufficient_stats.segments.Hypotheses`) where there is one: AL, LAAL, DAL and AP
    of one input lay it out once."""
    stream = references[0] if references else None
    cache = getattr(hypotheses, "cache", None)
    key = ("latency", bool(metric.options.get("computation_aware")), metric.options.get("convention") == "iwslt2020",
           id(stream))
    if cache is not None and key in cache:
        return cache[key][1]
    block = Block(metric, hypotheses, references)
    if cache is not None:
        cache[key] = (stream, block)  # the stream is kept, so its id is not reused while the entry lives
    return block


def _reads(*keys: str) -> dict:
    """The shared options a latency metric reads (one that cannot change its value is not offered: refused)."""
    return {key: LatencyMetric.OPTIONS[key] for key in keys}


class AP(LatencyMetric):
    """Average Proportion: sum of delays / (|X| |Y|)."""

    name, label = "ap", "AP"
    batch_formula = staticmethod(F.batch_average_proportion)


class AL(LatencyMetric):
    """Average Lagging (STACL)."""

    name, label = "al", "AL"
    batch_formula = staticmethod(F.batch_average_lagging)


class LAAL(AL):
    """Length-Adaptive Average Lagging: AL with |Y| = max(|hypothesis|, |reference|)."""

    name, label = "laal", "LAAL"
    # |Y| is max(|hypothesis|, |reference|) by definition: no target_length
    OPTIONS = _reads("convention", "unit", "computation_aware", "target_unit", "spm_model", "reference_length")

    def target_mode(self) -> str:
        return "hypothesis" if self.options["convention"] == "iwslt2020" else "max"


class DAL(LatencyMetric):
    """Differentiable Average Lagging (|Y| = hypothesis length)."""

    name, label, uses_reference = "dal", "DAL", False
    # SimulEval's DALScorer takes |Y| = the number of delays: no reference length counts
    OPTIONS = _reads("convention", "unit", "computation_aware")
    batch_formula = staticmethod(lambda columns, src, tgt: F.batch_differentiable_average_lagging(columns, src))


class StartOffset(LatencyMetric):
    """Delay of the first target token."""

    name, label, uses_reference = "start_offset", "StartOffset", False
    OPTIONS = _reads("unit", "computation_aware")  # the first delay: no length, no convention
    batch_formula = staticmethod(lambda columns, src, tgt: columns.unranked(columns.column(0).copy()))


class EndOffset(LatencyMetric):
    """Delay of the last target token minus the source length (for a speech output, the end of its last segment
    minus the source length).  The segments of a speech output (``durations``) are laid out as SimulEval lays them
    out: :func:`~evalpipe.evaluators.formulas.latency.speech_intervals`."""

    name, label, uses_reference = "end_offset", "EndOffset", False
    OPTIONS = _reads("convention", "unit", "computation_aware")  # the last delay minus |X|: no reference length
    batch_formula = staticmethod(lambda columns, src, tgt: columns.last() - src)

    def batch_values(self, block: "Block") -> np.ndarray:
        return output_ends(block) - block.src


class ATD(LatencyMetric):
    """Average Token Delay (SimulEval 1.1's algorithm, text output).

    Text input: source and target tokens last 1 unit.  Speech input: source tokens last 300 ms,
    target text tokens 0 ms.  With ``computation_aware`` the computation time between outputs
    (elapsed - delays) is added to each target token, as SimulEval does.
    """

    name, label, uses_reference = "atd", "ATD", False
    OPTIONS = _reads("unit", "computation_aware")  # token durations: no reference length, no convention
    block_stats, corpus_partial = Metric.block_stats, Metric.corpus_partial  # per sentence

    def segment_stats(self, hypothesis: SimulHypothesis, references: Tuple[str, ...]) -> List[Any]:
        delays = list(hypothesis.delays)
        if not delays:
            return list(EMPTY)
        compute = [0.0] * len(delays)
        if self.options["computation_aware"]:
            elapsed = hypothesis.elapsed
            if not elapsed:
                raise InputError(f"{self.name}: computation_aware needs the elapsed times of the hypothesis")
            if list(elapsed) != [0] * len(delays):  # all-zero elapsed times: no computation time
                spent = [e - d for e, d in zip(elapsed, delays)]
                compute = [a - b for a, b in zip(spent, [0] + spent[:-1])]
        text = self.options["unit"] == "text"
        return [F.average_token_delay(delays, compute, 1 if text else 300, 1 if text else 0, text), 1, 0]
