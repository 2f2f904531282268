"""Long-form streaming metrics: latency of realigned sentences, and erasure and speed of whole talks.

A sentence metric (``hypothesis_kind = "stream"``) scores one realigned
:class:`~evalpipe.sufficient_stats.talks.Sentence`; a talk metric (``hypothesis_kind = "talk"``) one
:class:`~evalpipe.sufficient_stats.talks.Talk`.  Means over sentences become ``value_sum, scored,
skipped`` (score ``value_sum / scored``), ratios over talks ``numerator, denominator``.

**simulstream 1.0.0** (``stream_laal``, ``stream_laal_ca``; seconds).  StreamLAAL (Papi et al., 2024)
is LAAL per realigned sentence: delays d_t are taken from the sentence's start (d - offset), |X| is
its duration, gamma = max(|Y|, |R|) / |X| with |Y| the sentence's units and |R| the reference's
(words split on spaces, or characters); when d_1 > |X| the value is d_1, otherwise
1/tau sum_{t <= tau} (d_t - (t - 1) / gamma), tau the first t with d_t >= |X| (or |Y|).  A sentence
with no output is skipped (simulstream logs how many); ``_ca`` uses the computation-aware delays.

**OmniSTEval 0.1.10** (``long_yaal``, ``long_al``, ``long_laal``, ``long_ap``, ``long_dal`` and their
``_ca`` variants; milliseconds).  Emission times e_t = 1000 d - 1000 offset, |X| = 1000 duration,
|R| = the reference's words split on single spaces (empty pieces count) or its characters after
stripping, and the time to the recording's end E (its latest reference end minus this offset):

* YAAL: gamma = max(|Y|, |R|) / |X|; sum over t while e_t < E of e_t - (t - 1) / gamma, divided by
  the terms summed; skipped when e_1 >= E;
* AL: gamma = |R| / |X|; LAAL: gamma = max(|Y|, |R|) / |X|; both e_1 when e_1 > |X|, otherwise
  summed up to and including the first e_t >= |X|;
* AP: sum_t e_t / (|X| |R|), skipped when |R| = 0;
* DAL: gamma = |Y| / |X|, e'_1 = e_1, e'_t = max(e_t, e'_{t-1} + 1 / gamma), mean of e'_t - (t - 1) / gamma.

Sentences without output are skipped by every one of them.  Each anchor averages with
``statistics.mean`` (the exact sum rounded once); evalpipe sums exactly and divides once, within one
unit in the last place of it.  A zero-duration reference sentence is refused where the talks are
read (both anchors divide by it).

**Talk metrics** (simulstream's ``stats``): ``normalized_erasure`` (Arivazhagan et al., 2020):
units retracted over the whole log / units of the final outputs; ``real_time_factor``: computation
time summed over every step / audio processed at each talk's last step, summed over talks.
"""
from __future__ import annotations

from typing import Any, ClassVar, List, Optional, Sequence, Tuple

from evalpipe.errors import InputError, Unscorable
from evalpipe.evaluators.realign.stream_output import units_of
from evalpipe.sufficient_stats.metric import Metric
from evalpipe.sufficient_stats.options import Option
from evalpipe.sufficient_stats.talks import Sentence, Talk

_EXAMPLE_SENTENCES = [
    Sentence("ein kleiner Test", (1.5, 2.0, 2.5), (1.7, 2.4, 3.0), "a small test", 1.0, 2.0, 7000.0),
    Sentence("", (), (), "nothing came", 3.0, 1.5, 7000.0),
    Sentence("zu spät", (6.5, 6.9), (6.6, 7.2), "too late here", 4.0, 2.0, 7000.0),
]


class SentenceMetric(Metric):
    """A mean over realigned sentences (``value_sum scored skipped``)."""

    hypothesis_kind = "stream"
    higher_is_better = False
    min_references, max_references = 0, 1
    STATS_FIELDS = ("value_sum", "scored", "skipped")
    OPTIONS = {"computation_aware": Option(bool, False, "use the computation-aware delays")}
    CONTRACT_EXAMPLES = [(s, [s.reference]) for s in _EXAMPLE_SENTENCES]
    #: the sentence carries its reference (as the realigner's anchor reads it); the references argument is unused
    uses_reference: ClassVar[bool] = False
    #: the ``_ca`` plugins fix computation_aware
    aware: ClassVar[Optional[bool]] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("aware") is not None:  # a _ca plugin: its listing shows the value it fixes
            cls.OPTIONS = {**cls.OPTIONS, "computation_aware": Option(
                bool, cls.aware, f"computation-aware delays (fixed to {cls.aware} for this metric)")}

    def __init__(self, **options: Any) -> None:
        if self.aware is not None:
            options.setdefault("computation_aware", self.aware)
            if options["computation_aware"] not in (self.aware, str(self.aware).lower()):
                raise InputError(f"{self.name} fixes computation_aware={self.aware}")
        super().__init__(**options)

    #: the anchor whose conventions the metric follows, and its time unit
    conventions: ClassVar[str] = "omnisteval-0.1.10"
    time_unit: ClassVar[str] = "ms"

    def signature(self, nrefs: Optional[int] = None) -> str:
        aware = "yes" if self.options["computation_aware"] else "no"
        length = self.options.get("reference_length", "omnisteval")
        extra = f"|reflen:{length}" if length != "omnisteval" else ""
        return f"{self.name}|ca:{aware}|time:{self.time_unit}{extra}|conventions:{self.conventions}|evalpipe"

    def check_hypothesis(self, hypothesis: Any, index: Optional[int] = None) -> Any:
        if not isinstance(hypothesis, Sentence):
            raise InputError(f"{self.name}: expected a hypothesis that is a realigned sentence of a talk, "
                             f"got {type(hypothesis).__name__}")
        return hypothesis

    def delays(self, sentence: Sentence) -> Sequence[float]:
        return sentence.ca_delays if self.options["computation_aware"] else sentence.delays

    def segment_stats(self, hypothesis: Sentence, references: Tuple[str, ...]) -> List[Any]:
        delays = self.delays(hypothesis)
        if delays and not hypothesis.duration > 0:
            raise InputError(f"{self.name}: sentence {hypothesis.index + 1} of talk {hypothesis.talk!r} has no duration "
                             f"(text segmentation has no times: score quality only)")
        value = self.value(hypothesis, delays) if delays else None
        return [0, 0, 1] if value is None else [value, 1, 0]

    def value(self, sentence: Sentence, delays: Sequence[float]) -> Optional[float]:
        raise NotImplementedError

    def score_from_stats(self, stats: List[Any]) -> float:
        total, scored, skipped = stats
        if not scored:
            raise Unscorable(f"{self.name}: no sentence could be scored ({skipped} skipped: no output, or no "
                             f"emission times in the input)")
        return total / scored


def _lagging(delays: Sequence[float], source: float, gamma: float) -> float:
    """AL's sum as SimulEval writes it: d_1 when d_1 > |X|, else the mean lag up to the first d >= |X|."""
    if delays[0] > source:
        return delays[0]
    total, tau = 0.0, 0
    for t, d in enumerate(delays):
        total += d - t / gamma
        tau = t + 1
        if d >= source:
            break
    return total / tau


class StreamLAAL(SentenceMetric):
    """simulstream's StreamLAAL (s); see the module docstring."""

    name = "stream_laal"
    conventions, time_unit = "simulstream-1.0.0", "s"

    def value(self, sentence: Sentence, delays: Sequence[float]) -> Optional[float]:
        shifted = [(d / 1000 if sentence.time_unit == "ms" else d) - sentence.offset for d in delays]
        target = len(units_of(sentence.reference, sentence.unit))
        return _lagging(shifted, sentence.duration, max(len(shifted), target) / sentence.duration)


class StreamLAALCA(StreamLAAL):
    """simulstream's StreamLAAL on computation-aware delays (s)."""

    name = "stream_laal_ca"
    aware = True


class LongMetric(SentenceMetric):
    """OmniSTEval's long-form latency (ms); see the module docstring.  Option ``reference_length``:
    ``omnisteval`` (its count: words split on single spaces, so a double space adds an empty word) or
    ``words`` (words split on any whitespace); characters are counted after stripping either way."""

    OPTIONS = {**SentenceMetric.OPTIONS,
               "reference_length": Option(str, "omnisteval", "|R|: omnisteval (split on single spaces) or words",
                                          choices=("omnisteval", "words"))}

    def value(self, sentence: Sentence, delays: Sequence[float]) -> Optional[float]:
        offset = sentence.offset * 1000
        emissions = [(d if sentence.time_unit == "ms" else d * 1000) - offset for d in delays]
        source = sentence.duration * 1000
        ref = sentence.reference
        if sentence.unit != "word":
            target = len(ref.strip())
        else:
            target = len(ref.split(" ")) if self.options["reference_length"] == "omnisteval" else len(ref.split())
        return self.formula(emissions, source, target, sentence.recording_end - offset)

    def formula(self, e: List[float], source: float, target: int, end: float) -> Optional[float]:
        raise NotImplementedError


class LongYAAL(LongMetric):
    """YAAL (Papi et al., 2024) of each realigned sentence, OmniSTEval 0.1.10's LongYAAL: delays up to the source's end, in ms."""

    name = "long_yaal"

    def formula(self, e: List[float], source: float, target: int, end: float) -> Optional[float]:
        if e[0] >= end:
            return None
        gamma = max(len(e), target) / source
        total, tau = 0.0, 0
        for t, d in enumerate(e):
            if d >= end:
                break
            total += d - t / gamma
            tau = t + 1
        return total / tau


class LongAL(LongMetric):
    """AL (Ma et al., 2019) of each realigned sentence, OmniSTEval 0.1.10's LongAL, in ms."""

    name = "long_al"

    def formula(self, e: List[float], source: float, target: int, end: float) -> Optional[float]:
        if target == 0 and e[0] <= source:
            raise InputError(f"{self.name}: a reference with no units (AL divides by its length)")
        return _lagging(e, source, target / source) if e[0] <= source else e[0]


class LongLAAL(LongMetric):
    """LAAL (Papi et al., 2022) of each realigned sentence, OmniSTEval 0.1.10's LongLAAL, in ms."""

    name = "long_laal"

    def formula(self, e: List[float], source: float, target: int, end: float) -> Optional[float]:
        return _lagging(e, source, max(len(e), target) / source)


class LongAP(LongMetric):
    """AP (Cho and Esipova, 2016) of each realigned sentence, OmniSTEval 0.1.10's LongAP."""

    name = "long_ap"

    def formula(self, e: List[float], source: float, target: int, end: float) -> Optional[float]:
        return sum(e) / (source * target) if target else None


class LongDAL(LongMetric):
    """DAL (Cherry and Foster, 2019) of each realigned sentence, OmniSTEval 0.1.10's LongDAL, in ms."""

    name = "long_dal"

    def formula(self, e: List[float], source: float, target: int, end: float) -> Optional[float]:
        gamma = len(e) / source
        total, last = 0.0, 0.0
        for t, g in enumerate(e):
            last = g if t == 0 else max(g, last + 1 / gamma)
            total += last - t / gamma
        return total / len(e)


class LongYAALCA(LongYAAL):
    """YAAL of each realigned sentence on computation-aware delays (OmniSTEval 0.1.10's _CA variant), in ms."""

    name, aware = "long_yaal_ca", True


class LongALCA(LongAL):
    """AL of each realigned sentence on computation-aware delays (OmniSTEval 0.1.10's _CA variant), in ms."""

    name, aware = "long_al_ca", True


class LongLAALCA(LongLAAL):
    """LAAL of each realigned sentence on computation-aware delays (OmniSTEval 0.1.10's _CA variant), in ms."""

    name, aware = "long_laal_ca", True


class LongAPCA(LongAP):
    """AP of each realigned sentence on computation-aware delays (OmniSTEval 0.1.10's _CA variant), in ms."""

    name, aware = "long_ap_ca", True


class LongDALCA(LongDAL):
    """DAL of each realigned sentence on computation-aware delays (OmniSTEval 0.1.10's _CA variant), in ms."""

    name, aware = "long_dal_ca", True


def _example_talks() -> List[Talk]:
    return [Talk("a", "one two three", [1.0, 2.0, 3.0], [1.5, 2.5, 3.5], [], deleted_units=2, computation=0.5,
                 audio_end=4.0),
            Talk("b", "", [], [], [], deleted_units=0, computation=0.25, audio_end=2.0),
            Talk("c", "vier fünf", [2.5, 2.75], [2.5, 3.0], [], deleted_units=1, computation=0.125, audio_end=3.0)]


class TalkMetric(Metric):
    """A ratio of sums over talks (``numerator denominator``)."""

    hypothesis_kind = "talk"
    higher_is_better = False
    min_references, max_references = 0, 0
    NONNEGATIVE_STATS = True
    uses_reference: ClassVar[bool] = False

    def check_hypothesis(self, hypothesis: Any, index: Optional[int] = None) -> Any:
        if not isinstance(hypothesis, Talk):
            raise InputError(f"{self.name}: expected a hypothesis that is a talk, got {type(hypothesis).__name__}")
        return hypothesis

    def signature(self, nrefs: Optional[int] = None) -> str:
        return f"{self.name}|conventions:simulstream-1.0.0|evalpipe"

    def score_from_stats(self, stats: List[Any]) -> float:
        numerator, denominator = stats
        if not denominator:
            raise Unscorable(f"{self.name}: {self.STATS_FIELDS[1]} is 0 over every talk")
        return numerator / denominator


class NormalizedErasure(TalkMetric):
    """Normalized erasure (simulstream): output units deleted by retractions per unit of final output, per talk."""

    name = "normalized_erasure"
    STATS_FIELDS = ("deleted_units", "final_units")
    CONTRACT_EXAMPLES = [(t, []) for t in _example_talks()]

    def segment_stats(self, hypothesis: Talk, references: Tuple[str, ...]) -> List[Any]:
        return [hypothesis.deleted_units, len(units_of(hypothesis.text, hypothesis.unit))]


class RealTimeFactor(TalkMetric):
    """Real-time factor: computation time over audio duration, summed over talks."""

    name = "real_time_factor"
    STATS_FIELDS = ("computation_s", "audio_s")
    CONTRACT_EXAMPLES = [(t, []) for t in _example_talks()]

    def segment_stats(self, hypothesis: Talk, references: Tuple[str, ...]) -> List[Any]:
        return [hypothesis.computation, hypothesis.audio_end]
