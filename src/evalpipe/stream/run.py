"""The long-form driver: runs an agent over whole talks on their clock and writes a simulstream log.

Source, either of:

* **text**: the source sentences of every talk with the audio definition (``wav``, ``offset``,
  ``duration`` per sentence).  A sentence's words arrive evenly over its duration (word k of n ends
  at ``offset + duration * (k + 1) / n``); the talk ends with its last sentence.
* **audio**: each talk's recording (:mod:`evalpipe.stream.audio`); a step hands the agent one
  :class:`~evalpipe.stream.audio.AudioChunk` with the samples that arrived and their timestamps; the
  talk ends with its recording.

An agent says which it reads in ``SOURCES``; the driver refuses a mismatch before running.  Every
``chunk`` seconds of a talk's clock, and once more at its end, the driver hands the agent what
arrived and logs one step:
``total_audio_processed`` (the clock), ``computation_time`` (the agent's measured wall-clock time),
``generated_tokens`` and ``deleted_tokens`` (the retracted tokens, taken from the end of the output).
Each talk starts with a metadata line (``id``, ``metadata.wav_name``), as simulstream's server writes
them, so the log is read by :mod:`evalpipe.stream.files`, simulstream and OmniSTEval alike.
"""
from __future__ import annotations

import json
import time
from typing import IO, Any, List, Optional, Sequence, Tuple

from evalpipe.errors import InputError, UsageError
from evalpipe.stream.agent import LongformAgent, SourceWord
from evalpipe.stream.audio import AudioChunk
from evalpipe.sufficient_stats.talks import RefSentence


def source_words(sentences: Sequence[Tuple[str, RefSentence]]) -> List[SourceWord]:
    """Every source word of a talk with its sentence and end time (see the module docstring)."""
    out = []
    for s, (text, ref) in enumerate(sentences):
        words = text.split()
        out += [SourceWord(w, s, ref.offset + ref.duration * (k + 1) / len(words)) for k, w in enumerate(words)]
    return out


def run_talk(agent: LongformAgent, name: str, ident: int, sentences: Sequence[Tuple[str, RefSentence]],
             chunk: float, out: IO[str], audio: Optional[Tuple[Any, int]] = None) -> int:
    """Run the agent over one talk and write its log lines; returns the number of steps.  ``audio``:
    the talk's recording ``(samples, rate)`` (audio mode), else its text arrives word by word."""
    mode = "audio" if audio is not None else "text"
    if mode not in agent.SOURCES:
        raise UsageError(f"the agent {type(agent).__name__} reads {' or '.join(agent.SOURCES)}, the run gives it {mode}")
    words = source_words(sentences) if audio is None else []
    end = max(ref.offset + ref.duration for _, ref in sentences) if audio is None else len(audio[0]) / audio[1]
    agent.reset(name, len(sentences))
    out.write(json.dumps({"id": ident, "metadata": {"wav_name": f"{name}.wav"}}) + "\n")
    tokens: List[str] = []
    clock, k, steps = 0.0, 0, 0
    while True:
        before, clock = clock, min(clock + chunk, end)
        first = k
        while k < len(words) and words[k].time <= clock + 1e-9:
            k += 1
        finished = clock >= end
        if audio is None:
            heard: Sequence[Any] = words[first:k]
        else:
            samples, rate = audio
            heard = [AudioChunk(samples[int(round(before * rate)):int(round(clock * rate))], rate, before, clock)]
        start = time.perf_counter()
        retract, new = agent.step(heard, finished)
        spent = time.perf_counter() - start
        if retract < 0 or retract > len(tokens):
            raise InputError(f"the agent retracted {retract} tokens with {len(tokens)} written", f"talk {name!r}")
        deleted = tokens[len(tokens) - retract:] if retract else []
        del tokens[len(tokens) - retract:]
        tokens += new
        out.write(json.dumps({"id": ident, "total_audio_processed": clock, "computation_time": spent,
                              "generated_tokens": list(new), "deleted_tokens": deleted}, ensure_ascii=False) + "\n")
        steps += 1
        if finished:
            return steps
