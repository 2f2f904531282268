"""What a long-form (unsegmented) streaming evaluation works on: talks, and sentences realigned from them.

A :class:`Talk` is one recording's whole output -- the final text after every retraction, the time
each of its units (words or characters) was emitted, ideal and computation-aware -- with the
reference sentences of that recording and their place on its clock.  Rebuilding a talk from a log
(:mod:`evalpipe.evaluators.realign.stream_output`) and realigning its output to the reference sentences
(:mod:`evalpipe.evaluators.realign.mwer`, :mod:`evalpipe.evaluators.realign.soft`) are not additive:
they need the whole talk.  So the talk is the unit of work (engines split by talk) and every metric's
stats are computed per realigned sentence (:class:`Sentence`) or per talk, then summed.

Times are in seconds, as in simulstream's logs and audio definitions.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Tuple


@dataclass(frozen=True)
class RefSentence:
    """One reference sentence: its text, its start on the talk's clock and its duration (s)."""

    content: str
    offset: float = 0.0
    duration: float = 0.0


@dataclass
class Talk:
    """One recording's rebuilt output and its references.

    ``delays[i]`` / ``ca_delays[i]``: when unit i of ``text`` was emitted (audio processed, and audio
    processed plus computation time, s).  ``deleted_units``: units retracted over the whole log;
    ``computation``: the summed computation time; ``audio_end``: the audio processed at the last step
    (both for the real-time factor).  ``unit``: ``word`` or ``char``."""

    name: str
    text: str
    delays: List[float]
    ca_delays: List[float]
    references: List[RefSentence]
    unit: str = "word"
    deleted_units: int = 0
    computation: float = 0.0
    audio_end: float = 0.0
    steps: int = 0
    #: where the talk came from (the log file), for error messages
    source: str = ""
    #: how the output is realigned to the references: ``omnisteval`` or ``mweralign``, and the
    #: language OmniSTEval's Moses tokenization uses (None: none)
    resegmenter: str = "omnisteval"
    lang: Optional[str] = None
    #: ``s`` (simulstream logs) or ``ms`` (SimulEval JSONL logs); no delays at all: text only
    time_unit: str = "s"
    cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __getstate__(self) -> dict:  # the realignment cache stays in this process
        state = dict(self.__dict__)
        state["cache"] = {}
        return state


@dataclass(frozen=True)
class Sentence:
    """One reference sentence with the part of the talk's output realigned to it.

    ``text``: the realigned output; ``delays`` / ``ca_delays``: the emission times (s, on the talk's
    clock) of its units; ``reference``: the reference as the realigner's anchor scores it (OmniSTEval
    removes spaces at the character level); ``offset`` / ``duration``: the reference's place (s);
    ``recording_end``: the end of the recording in ms, computed as OmniSTEval does (the largest
    ``1000 offset + 1000 duration`` among the talk's references); ``unit``: ``word`` or ``char``."""

    text: str
    delays: Tuple[float, ...]
    ca_delays: Tuple[float, ...]
    reference: str
    offset: float
    duration: float
    recording_end: float
    unit: str = "word"
    talk: str = ""
    index: int = 0
    #: the unit of ``delays`` / ``ca_delays``: ``s`` or ``ms`` (offsets and durations are always s)
    time_unit: str = "s"
