"""What one segment of a metric's input is.

A text metric (``hypothesis_kind = "text"``) scores a hypothesis string against a tuple of reference
strings.  A simultaneous-translation metric (``hypothesis_kind = "simul"``) scores a
:class:`SimulHypothesis` -- when each target token was written -- against at most one reference.  A
text metric given a :class:`SimulHypothesis` scores its ``text`` (quality + latency combinations).
Wire forms (protocol fields, SimulEval records) are turned into these by the front ends that read them.
"""
from __future__ import annotations

from typing import Any, Dict, Iterable, NamedTuple, Optional, Sequence


class SimulHypothesis(NamedTuple):
    """A simultaneous hypothesis: ``delays[i]`` is the source read (words, or ms of speech) when target
    token i was written; ``source_length`` is |X|; ``elapsed`` the wall-clock times (ms) of the tokens
    for computation-aware latency; ``text`` the target words, for quality metrics; ``server_delays``, when
    an IWSLT 2020-style server recorded them, its steps of every target token and of the final ``</s>``
    (serving the source's ``</s>`` counts one step, so a token written after it has |X| + 1); ``durations``, for
    a speech output (SimulEval's speech-to-speech logs), the length in ms of each output segment."""

    delays: Sequence[float]
    source_length: float
    elapsed: Optional[Sequence[float]] = None
    text: Optional[str] = None
    server_delays: Optional[Sequence[float]] = None
    durations: Optional[Sequence[float]] = None


class Hypotheses(list):
    """The hypotheses of one input: a list that carries ``cache``, where a vectorised metric keeps what
    it derives from the whole corpus once and shares among metrics and calls (latency's delay layout).
    An input never changes its hypotheses; slices are plain lists, without the cache."""

    def __init__(self, items: Iterable[Any] = ()) -> None:
        super().__init__(items)
        self.cache: Dict[Any, Any] = {}

    def __reduce__(self) -> Any:  # the cache stays in this process
        return Hypotheses, (list(self),)
