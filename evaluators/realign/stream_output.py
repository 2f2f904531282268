"""Rebuild a talk's final output, and when each of its units was emitted, from a streaming log's steps.

A step (one line of a simulstream ``metrics.jsonl`` log) appends ``generated_tokens`` to the output
after retracting ``deleted_tokens`` from its end, at ``total_audio_processed`` seconds of audio and
after ``computation_time`` seconds of computation.  The text is the detokenized token list
(simulstream's ``simuleval`` detokenizer: ``word`` joins tokens with spaces, ``char`` concatenates
them, ``spm`` concatenates and turns ``▁`` into spaces, then strips); units are its words (split on
spaces) or characters.  The rules are simulstream 1.0.0's (``LogReader.final_outputs_and_latencies``):

* the first step of a talk gives every unit of its text the step's delay;
* a step that adds units gives the new ones its delay; at the word level, when the step changes the
  previous last word (a subword continued it), that word takes the step's delay too;
* a retraction drops the delays of the units it removed; at the word level, when it cuts the new
  last word short, that word takes the step's delay.

The ideal delay is the audio processed; the computation-aware one adds the step's computation time.
simulstream re-detokenizes and re-splits the whole output at every step (quadratic in a talk's
length); here the text is kept as completed words (or a length) plus the unfinished tail, with a
snapshot after every token so that a retraction restores the state in constant time per token --
the same delays, in linear time (``tests/test_stream_score.py`` compares with simulstream itself).

Refused, with the log's file, line and talk named (simulstream asserts or crashes on them): a
retraction that is not the end of the current output, a token holding whitespace other than the
space (a line break inside a token would break the realigner's one-line-per-sentence input), a step
missing a field.
"""
from __future__ import annotations

from typing import Iterable, List, NamedTuple, Optional, Sequence, Tuple

from evalpipe.errors import InputError

DETOKENIZERS = ("word", "char", "spm")
UNITS = ("word", "char")


class Step(NamedTuple):
    """One log line of a talk: tokens added and retracted, audio processed and computation time (s)."""

    generated: Sequence[str]
    deleted: Sequence[str]
    audio: float
    computation: float
    line: int = 0


class Output(NamedTuple):
    """A rebuilt talk: final text, ideal and computation-aware delays per unit, units retracted."""

    text: str
    delays: List[float]
    ca_delays: List[float]
    deleted_units: int


def detokenize(tokens: Sequence[str], detokenizer: str) -> str:
    """simulstream's ``simuleval`` detokenizer (``word``, ``char`` or ``spm``)."""
    if detokenizer == "word":
        return " ".join(tokens)
    if detokenizer == "char":
        return "".join(tokens)
    return "".join(tokens).replace("\u2581", " ").strip()


def units_of(text: str, unit: str) -> List[str]:
    """The latency units of a text: its words (split on spaces, empty pieces dropped) or characters."""
    return [w for w in text.split(" ") if w] if unit == "word" else list(text)


class _Words:
    """The words of the detokenized text as completed words plus the tail after the last space."""

    def __init__(self) -> None:
        self.done: List[str] = []
        self.tail = ""
        self.marks: List[Tuple[int, str]] = []  # (len(done), tail) after each token

    def push(self, piece: str) -> None:
        parts = (self.tail + piece).split(" ")
        self.done.extend(p for p in parts[:-1] if p)
        self.tail = parts[-1]
        self.marks.append((len(self.done), self.tail))

    def state(self, tokens: int) -> Tuple[int, str]:
        return self.marks[tokens - 1] if tokens else (0, "")

    def restore(self, tokens: int) -> None:
        done, self.tail = self.state(tokens)
        del self.done[done:], self.marks[tokens:]

    @staticmethod
    def count_of(state: Tuple[int, str]) -> int:
        return state[0] + (1 if state[1] else 0)

    def count(self) -> int:
        return len(self.done) + (1 if self.tail else 0)

    def word(self, index: int, state: Optional[Tuple[int, str]] = None) -> str:
        done, tail = state or (len(self.done), self.tail)
        return self.done[index] if index < done else tail

    def last(self, state: Optional[Tuple[int, str]] = None) -> str:
        done, tail = state or (len(self.done), self.tail)
        return tail if tail else self.done[done - 1]


class _Chars:
    """The length of the detokenized text: raw length, leading and trailing spaces (``spm`` strips)."""

    def __init__(self, strip: bool) -> None:
        self.strip = strip
        self.marks: List[Tuple[int, int, int]] = []  # (length, leading spaces, trailing spaces)

    def push(self, piece: str) -> None:
        length, lead, trail = self.marks[-1] if self.marks else (0, 0, 0)
        blank = piece.strip(" ") == ""
        if lead == length:  # everything so far is spaces
            lead += len(piece) if blank else len(piece) - len(piece.lstrip(" "))
        trail = trail + len(piece) if blank else len(piece) - len(piece.rstrip(" "))
        self.marks.append((length + len(piece), lead, trail))

    def count_of(self, tokens: int) -> int:
        length, lead, trail = self.marks[tokens - 1] if tokens else (0, 0, 0)
        if not self.strip:
            return length
        return 0 if lead == length else length - lead - trail

    def restore(self, tokens: int) -> None:
        del self.marks[tokens:]


def _check_tokens(tokens: Iterable[str], where: str, line: int) -> None:
    for token in tokens:
        if not isinstance(token, str):
            raise InputError(f"expected tokens that are strings, got {token!r}", where, line)
        if any(c.isspace() and c != " " for c in token):
            raise InputError(f"expected tokens without line breaks, tabs or other whitespace than the space, "
                             f"got {token!r}", where, line)


class Rebuild:
    """A talk's output being rebuilt step by step (:meth:`feed`), so that a log's steps need not be kept:
    only the tokens, the text state and the delays of the talks in progress are."""

    def __init__(self, detokenizer: str = "word", unit: str = "word", where: str = "") -> None:
        if detokenizer not in DETOKENIZERS:
            raise InputError(f"expected a detokenizer among {', '.join(DETOKENIZERS)}, got {detokenizer!r}")
        if unit not in UNITS:
            raise InputError(f"expected a latency unit among {', '.join(UNITS)}, got {unit!r}")
        self.detokenizer, self.unit, self.where = detokenizer, unit, where
        self.words = unit == "word"
        self.text = _Words() if self.words else _Chars(strip=detokenizer == "spm")
        self.tokens: List[str] = []
        self.delays: List[float] = []
        self.ca_delays: List[float] = []
        self.deleted_units = 0
        self.steps = 0
        self.computation = 0.0
        self.audio = 0.0

    def _piece(self, token: str) -> str:
        if self.detokenizer == "word":
            return token if not self.tokens else " " + token
        return token.replace("\u2581", " ") if self.detokenizer == "spm" else token

    def _count(self) -> int:
        return self.text.count() if self.words else self.text.count_of(len(self.tokens))

    def feed(self, step: Step) -> None:
        """Apply one step (rules in the module docstring)."""
        ideal, aware = step.audio, step.audio + step.computation
        _check_tokens(step.generated, self.where, step.line)
        _check_tokens(step.deleted, self.where, step.line)
        tokens, text, delays, ca_delays = self.tokens, self.text, self.delays, self.ca_delays
        if step.deleted:
            k = len(step.deleted)
            if self.steps == 0:
                raise InputError(f"expected no deleted_tokens in a talk's first step (nothing is written yet), "
                                 f"got {' '.join(step.deleted)!r}", self.where, step.line)
            if k > len(tokens) or list(step.deleted) != tokens[-k:]:
                raise InputError(f"expected deleted_tokens to be the end of the output so far "
                                 f"({' '.join(tokens[-k:])!r}), got {' '.join(step.deleted)!r}", self.where, step.line)
            self.deleted_units += len(units_of(detokenize(step.deleted, self.detokenizer), self.unit))
            old = self._count()
            keep = len(tokens) - k
            cut_short = False
            if self.words:
                new_state = text.state(keep)
                new_count = _Words.count_of(new_state)
                cut_short = new_count >= 1 and text.word(new_count - 1) != text.last(new_state)
            text.restore(keep)
            del tokens[keep:]
            removed = old - self._count()
            if removed > 0:
                del delays[-removed:], ca_delays[-removed:]
            if cut_short:
                delays[-1], ca_delays[-1] = ideal, aware
        old = self._count()
        old_last = text.last() if self.words and old else None
        for token in step.generated:
            text.push(self._piece(token))
            tokens.append(token)
        added = self._count() - old
        if added > 0:
            delays += [ideal] * added
            ca_delays += [aware] * added
        if self.steps and old_last is not None and text.word(old - 1) != old_last:
            delays[old - 1], ca_delays[old - 1] = ideal, aware
        self.steps += 1
        self.computation += step.computation
        self.audio = step.audio

    def result(self) -> Output:
        """The final text, its delays and the units retracted."""
        return Output(detokenize(self.tokens, self.detokenizer), self.delays, self.ca_delays, self.deleted_units)


def rebuild(steps: Sequence[Step], detokenizer: str = "word", unit: str = "word", where: str = "") -> Output:
    """The final text of a talk and the delays of its units (rules in the module docstring)."""
    state = Rebuild(detokenizer, unit, where)
    for step in steps:
        state.feed(step)
    return state.result()
