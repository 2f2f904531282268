"""Agents for simultaneous translation: a policy that reads (GET) or writes (SEND).

Subclass :class:`Agent` and implement :meth:`Agent.policy`; the driver calls ``init_states``
once per sentence, ``policy(states)`` until the agent writes ``</s>``, feeds every source segment
through ``update_states`` and asks ``finish_eval`` whether the sentence is done.  Abstract methods
raise ``NotImplementedError``.  Agents register in the entry-point group ``evalpipe.agents`` or load
from ``module:Class``.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional

EOS = "</s>"


@dataclass(frozen=True)
class Action:
    """``Action("GET")`` reads the next source segment; ``Action("SEND", word)`` writes a word."""

    kind: str
    value: Optional[str] = None

    def __post_init__(self) -> None:
        if self.kind not in ("GET", "SEND"):
            raise ValueError(f"expected an action GET or SEND, got {self.kind!r}")
        if self.kind == "SEND" and not isinstance(self.value, str):
            raise ValueError(f"SEND needs the word to write, got {self.value!r}")


GET = Action("GET")


def send(word: str) -> Action:
    return Action("SEND", word)


class Agent(ABC):
    """Base class of agents.  ``states`` is a dict with ``source`` (segments read), ``target``
    (words written) and ``finished_source`` (the server sent ``</s>``)."""

    #: milliseconds of audio per GET for speech agents; None for text
    segment_size: Optional[int] = None

    def init_states(self) -> Dict[str, Any]:
        return {"source": [], "target": [], "finished_source": False}

    def update_states(self, states: Dict[str, Any], new_state: Dict[str, Any]) -> None:
        """Record a segment the server sent (``{"sent_id", "segment_id", "segment"}``)."""
        segment = new_state.get("segment")
        if segment == EOS:
            states["finished_source"] = True
        else:
            states["source"].append(segment)

    @abstractmethod
    def policy(self, states: Dict[str, Any]) -> Action:
        """The next action: ``GET`` or ``send(word)``."""
        raise NotImplementedError

    def finish_eval(self, states: Dict[str, Any], new_state: Optional[Dict[str, Any]] = None) -> bool:
        """Whether this sentence is finished (by default: the agent wrote ``</s>``)."""
        return bool(states["target"]) and states["target"][-1] == EOS

    def reset(self) -> None:
        """Forget everything between evaluations (nothing by default)."""


Translator = Callable[[List[str], List[str], bool], Optional[str]]


class CopyTranslator:
    """A deterministic demo "translator": writes source word i as target word i (no model needed).

    Returns the next word, ``</s>`` when the source is finished and fully copied, or None when it
    needs more source.
    """

    def __call__(self, source: List[str], target: List[str], finished_source: bool) -> Optional[str]:
        if len(target) < len(source):
            return source[len(target)]
        return EOS if finished_source else None


class WaitKAgent(Agent):
    """Wait-k (Ma et al., 2019): read k words, then alternate write / read; write the rest at the end.

    ``translator(source_words, target_words, finished_source)`` gives the next target word (or None
    to read more); the default is :class:`CopyTranslator`.
    """

    def __init__(self, k: int = 3, translator: Optional[Translator] = None) -> None:
        k = int(k)
        if k < 1:
            raise ValueError(f"wait-k needs k >= 1, got {k}")
        self.k = k
        self.translator = translator or CopyTranslator()

    def policy(self, states: Dict[str, Any]) -> Action:
        lag = len(states["source"]) - len(states["target"])
        if not states["finished_source"] and lag < self.k:
            return GET
        word = self.translator(states["source"], states["target"], states["finished_source"])
        if word is None:
            return send(EOS) if states["finished_source"] else GET
        return send(word)
