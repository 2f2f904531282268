"""Long-form agents: a policy that reads a whole talk as it arrives, writes target tokens and may
retract what it wrote.

The driver (:mod:`evalpipe.stream.run`) calls :meth:`LongformAgent.reset` at the start of every talk,
then :meth:`LongformAgent.step` every chunk of the talk's clock with what arrived in it -- source
words (:class:`SourceWord`: a source word, the sentence it belongs to and when it ends, in s) in a
text run, one :class:`~evalpipe.stream.audio.AudioChunk` (samples with their timestamps) in an audio
run; ``SOURCES`` says which an agent reads -- and whether the source has ended; the agent answers with how many of its last tokens to retract and the
tokens to add.  Agents register in the entry-point group ``evalpipe.longform_agents`` or load from
``module:Class``; options come as keyword arguments.
"""
from __future__ import annotations

import random
from abc import ABC, abstractmethod
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from evalpipe.corpus import read_lines
from evalpipe.errors import OptionError


class SourceWord(NamedTuple):
    """One source word as it arrives: its text, its sentence (0-based, in the talk) and its end time (s)."""

    text: str
    sentence: int
    time: float


class LongformAgent(ABC):
    """Base class of long-form agents (see the module docstring)."""

    #: what the agent reads: ``text`` (source words), ``audio`` (recordings in chunks), or both
    SOURCES: Tuple[str, ...] = ("text",)

    def reset(self, talk: str, sentences: int) -> None:
        """A new talk of ``sentences`` source sentences begins."""

    @abstractmethod
    def step(self, new: Sequence[Any], finished: bool) -> Tuple[int, List[str]]:
        """``(tokens to retract from the end of the output, tokens to add)`` after reading ``new``."""
        raise NotImplementedError


class ReplayAgent(LongformAgent):
    """The demo agent: replays a real system's translations of the talk's sentences under a wait-k
    proportional schedule, and sometimes writes a draft it retracts at the next step.

    Options: ``hypothesis`` (file, one translation per source sentence of all talks, in order),
    ``drafts`` (optional file of other translations, parallel: draft words come from them), ``lag``
    (k: after r source words of a sentence, ``r - k`` of its target words are out, all of them once the
    next sentence starts), ``retract`` (probability of a draft at a step), ``seed``, ``tokens`` (``word``: a token a word,
    ``spm``: ``▁``-prefixed pieces).  The translations are read by sentence index over all talks, so
    the agent keeps a cursor over talks.

    From audio it finds the source words itself, by energy: a word starts where the sound comes back
    after silence (10 ms frames, RMS above ``threshold``), a sentence ends at a silence of ``pause``
    seconds or more.  That reads the demo's stand-in recordings (a tone burst a word,
    :func:`evalpipe.stream.audio.synthesize`) exactly; on speech it is a crude voice-activity segmenter."""

    SOURCES = ("text", "audio")

    def __init__(self, hypothesis: str, drafts: Optional[str] = None, lag: int = 2, retract: float = 0.0,
                 seed: int = 0, tokens: str = "word", pause: float = 0.15, threshold: float = 0.01) -> None:
        if tokens not in ("word", "spm"):
            raise OptionError(f"replay: expected tokens=word or spm, got {tokens!r}")
        self.hyps = read_lines(hypothesis, allow_empty=True)
        self.alts = read_lines(drafts, allow_empty=True) if drafts else None
        if self.alts is not None and len(self.alts) != len(self.hyps):
            raise OptionError(f"replay: drafts has {len(self.alts)} lines, hypothesis {len(self.hyps)}")
        self.lag, self.retract, self.tokens = int(lag), float(retract), tokens
        self.pause, self.threshold = float(pause), float(threshold)
        self.rng = random.Random(int(seed))
        self.base = 0  # the first sentence of the current talk in the translation files
        self.talk_sentences = 0

    def reset(self, talk: str, sentences: int) -> None:
        self.base += self.talk_sentences
        self.talk_sentences = sentences
        if self.base + sentences > len(self.hyps):
            raise OptionError(f"replay: the hypothesis file has {len(self.hyps)} lines, the talks need at least "
                              f"{self.base + sentences}")
        self.read: Dict[int, int] = {}
        self.written = [0] * sentences  # target words written per sentence
        self.draft = 0
        self.rest: Any = None  # audio: samples short of a frame, the sentence heard, silence so far
        self.sentence, self.silence, self.voiced, self.heard = 0, 0.0, False, False

    def hear(self, chunk: Any) -> List[SourceWord]:
        """The source words that start in an audio chunk (see the class docstring)."""
        import numpy as np

        frame = max(1, chunk.rate // 100)
        samples = chunk.samples if self.rest is None else np.concatenate([self.rest, chunk.samples])
        n = len(samples) // frame
        self.rest = samples[n * frame:]
        loud = np.sqrt(np.mean(np.square(samples[:n * frame].reshape(n, frame), dtype=np.float64), axis=1)) \
            > self.threshold
        words = []
        for k, voiced in enumerate(loud.tolist()):
            if voiced and not self.voiced:
                if self.heard and self.silence >= self.pause - 1e-9:
                    self.sentence = min(self.sentence + 1, self.talk_sentences - 1)
                self.heard = True
                words.append(SourceWord("", self.sentence, chunk.end))
            self.silence = 0.0 if voiced else self.silence + frame / chunk.rate
            self.voiced = voiced
        return words

    def piece(self, word: str) -> List[str]:
        if self.tokens == "word":
            return [word]
        if len(word) > 3:
            k = len(word) // 2
            return ["\u2581" + word[:k], word[k:]]
        return ["\u2581" + word]

    def step(self, new: Sequence[Any], finished: bool) -> Tuple[int, List[str]]:
        if new and not isinstance(new[0], SourceWord):
            new = [w for chunk in new for w in self.hear(chunk)]
        for w in new:
            self.read[w.sentence] = self.read.get(w.sentence, 0) + 1
        retract, self.draft = self.draft, 0
        out: List[str] = []
        for s in range(self.talk_sentences):
            words = self.hyps[self.base + s].split()
            if s not in self.read and not finished:
                break
            done = finished or (s + 1) in self.read
            due = len(words) if done else min(len(words), max(0, self.read[s] - self.lag))
            for word in words[self.written[s]:due]:
                out += self.piece(word)
            self.written[s] = max(self.written[s], due)
        if not finished and self.retract and self.rng.random() < self.retract:
            s = max(self.read) if self.read else 0
            pool = (self.alts[self.base + s] if self.alts else self.hyps[self.base + s]).split() or ["äh"]
            draft = [p for w in self.rng.sample(pool, min(len(pool), self.rng.randint(1, 3))) for p in self.piece(w)]
            out += draft
            self.draft = len(draft)
        return retract, out


def load_agent(name: str, options: Dict[str, Any]) -> LongformAgent:
    """An agent by entry-point name (``evalpipe.longform_agents``) or ``module:Class``, built with options."""
    from evalpipe.registry import build_with_settings, load_class

    return build_with_settings(load_class(name, "evalpipe.longform_agents"), options, f"agent {name!r}")
