"""A talk's realigned sentences, by the talk's resegmenter, computed once per talk and process.

``mweralign`` (simulstream's way, :mod:`evalpipe.evaluators.realign.mwer`): the output text is cut
into one line per reference; the delays are dealt to the lines by their unit counts; the reference
is the sentence as read.  ``omnisteval`` (OmniSTEval's way, :mod:`evalpipe.evaluators.realign.soft`):
the output's units (words, or characters with spaces) are assigned to sentences and carry their own
delays; at the character level the reference loses its spaces, as OmniSTEval scores it.

Realigning needs the whole talk, so it is not additive: it runs where the talk's stats are
computed, once per talk whatever the number of metrics (the result is cached on the talk object;
the cache is not pickled, so every worker realigns only the talks it was given).
"""
from __future__ import annotations

from typing import List

from evalpipe.errors import InputError
from evalpipe.evaluators.realign import mwer, soft
from evalpipe.sufficient_stats.talks import Sentence, Talk

RESEGMENTERS = ("omnisteval", "mweralign")


def recording_end_ms(talk: Talk) -> float:
    """The end of the recording as OmniSTEval computes it: the largest 1000 offset + 1000 duration."""
    return max((r.offset * 1000 + r.duration * 1000 for r in talk.references), default=0.0)


def sentences(talk: Talk) -> List[Sentence]:
    """The talk's reference sentences with the output realigned to them (see the module docstring)."""
    cached = talk.cache.get("sentences")
    if cached is not None:
        return cached
    where = f"{talk.source or 'log'}, talk {talk.name!r}"
    if talk.resegmenter not in RESEGMENTERS:
        raise InputError(f"expected a resegmenter among {', '.join(RESEGMENTERS)}, got {talk.resegmenter!r}")
    refs = talk.references
    end = recording_end_ms(talk)
    out: List[Sentence] = []
    if not refs:
        pass
    elif talk.resegmenter == "mweralign":
        lines = mwer.realign(talk.text, [r.content for r in refs], talk.unit, where=where)
        ideal = mwer.split_delays(talk.delays, lines, talk.unit, where) if talk.delays else \
            [[] for _ in lines]
        aware = mwer.split_delays(talk.ca_delays, lines, talk.unit, where) if talk.ca_delays else \
            [[] for _ in lines]
        out = [Sentence(line, tuple(d), tuple(c), r.content, r.offset, r.duration, end, talk.unit, talk.name, i,
                        talk.time_unit) for i, (line, d, c, r) in enumerate(zip(lines, ideal, aware, refs))]
    else:
        char = talk.unit == "char"
        units = list(talk.text) if char else talk.text.split()
        timed = bool(talk.delays) or not units
        if timed and len(units) != len(talk.delays):
            raise InputError(f"the output has {len(units)} units and {len(talk.delays)} delays", where)
        contents = [r.content.strip().replace(" ", "") if char else r.content.strip() for r in refs]
        groups = soft.realign(units, contents, char, talk.lang, where)
        joiner = "" if char else " "
        out = [Sentence(joiner.join(units[k] for k in g), tuple(talk.delays[k] for k in g) if timed else (),
                        tuple(talk.ca_delays[k] for k in g) if timed and talk.ca_delays else (), content, r.offset, r.duration, end,
                        talk.unit, talk.name, i, talk.time_unit)
               for i, (g, content, r) in enumerate(zip(groups, contents, refs))]
    talk.cache["sentences"] = out
    return out


def quality_texts(talk: Talk) -> List[str]:
    """The realigned output that quality metrics score.  The same as :func:`sentences`' except in one
    case: simulstream strips the output before mweralign's character-level cut for quality (not for
    latency), which can move the cut when the output starts or ends with a space."""
    texts = [s.text for s in sentences(talk)]
    if talk.resegmenter == "mweralign" and talk.unit == "char" and talk.text != talk.text.strip() and texts:
        where = f"{talk.source or 'log'}, talk {talk.name!r}"
        texts = mwer.realign(talk.text, [r.content for r in talk.references], "char", strip=True,
                                     where=where)
    return texts
