"""The long-form driver: runs an agent over whole talks on their clock and writes a simulstream log.

Source: the source sentences of every talk with the audio definition (``wav``, ``offset``,
``duration`` per sentence).  A sentence's words arrive evenly over its duration (word k of n ends at
``offset + duration * (k + 1) / n``).  Every ``chunk`` seconds of a talk's clock, and once more at its
end (the last sentence's end), the driver hands the agent the words that arrived and logs one step:
``total_audio_processed`` (the clock), ``computation_time`` (the agent's measured wall-clock time),
``generated_tokens`` and ``deleted_tokens`` (the retracted tokens, taken from the end of the output).
Each talk starts with a metadata line (``id``, ``metadata.wav_name``), as simulstream's server writes
them, so the log is read by :mod:`evalpipe.stream.files`, simulstream and OmniSTEval alike.
"""
from __future__ import annotations

import json
import time
from typing import IO, List, Sequence, Tuple

from evalpipe.errors import InputError
from evalpipe.stream.agent import LongformAgent, SourceWord
from evalpipe.sufficient_stats.talks import RefSentence


def source_words(sentences: Sequence[Tuple[str, RefSentence]]) -> List[SourceWord]:
    """Every source word of a talk with its sentence and end time (see the module docstring)."""
    out = []
    for s, (text, ref) in enumerate(sentences):
        words = text.split()
        out += [SourceWord(w, s, ref.offset + ref.duration * (k + 1) / len(words)) for k, w in enumerate(words)]
    return out


def run_talk(agent: LongformAgent, name: str, ident: int, sentences: Sequence[Tuple[str, RefSentence]],
             chunk: float, out: IO[str]) -> int:
    """Run the agent over one talk and write its log lines; returns the number of steps."""
    words = source_words(sentences)
    end = max(ref.offset + ref.duration for _, ref in sentences)
    agent.reset(name, len(sentences))
    out.write(json.dumps({"id": ident, "metadata": {"wav_name": f"{name}.wav"}}) + "\n")
    tokens: List[str] = []
    clock, k, steps = 0.0, 0, 0
    while True:
        clock = min(clock + chunk, end)
        first = k
        while k < len(words) and words[k].time <= clock + 1e-9:
            k += 1
        finished = clock >= end
        start = time.perf_counter()
        retract, new = agent.step(words[first:k], finished)
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
