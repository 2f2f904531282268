"""The talk form of the line protocol (``evalpipe serve METRIC --talks``): one request scores a whole talk.

``SCORE ||| talk ||| JSON`` where JSON is one object on the line::

    {"name": "talk1",                                   (optional, for messages)
     "references": [{"content": "...", "offset": 0.0, "duration": 3.2}, ...],
     "steps": [{"generated_tokens": [...], "deleted_tokens": [...],
                "total_audio_processed": 1.0, "computation_time": 0.2}, ...],
     "detokenizer": "word" | "char" | "spm",            (default word)
     "unit": "word" | "char",                           (default word)
     "resegmenter": "omnisteval" | "mweralign",         (default omnisteval)
     "lang": null | "de" | ...}                         (OmniSTEval's Moses tokenization)

Unknown top-level keys and reference keys are refused (a misspelt ``"detokeniser"`` would silently mean
``word``); a step may carry the other fields of the simulstream log line it was copied from.

The reply is the talk's stats vector: the sum of its realigned sentences' vectors (a talk metric's own
vector), so a client sums the replies of its talks and sends ``EVAL`` as for any metric.  The server
rebuilds and realigns the talk; a bad talk is an ``ERROR`` line naming what was expected, and the
server goes on.
"""
from __future__ import annotations

import json
from typing import Any, List

from evalpipe.errors import InputError
from evalpipe.evaluators.realign.stream_output import Rebuild, Step
from evalpipe.inputs import Talks
from evalpipe.sufficient_stats.talks import RefSentence, Talk


KEYS = ("name", "references", "steps", "detokenizer", "unit", "resegmenter", "lang")


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"talk: expected {what} to be a number, got {value!r}")
    return value


def talk_of(payload: str) -> Talk:
    """The talk a request's JSON describes, rebuilt (see the module docstring)."""
    try:
        doc = json.loads(payload)
    except ValueError as exc:
        raise InputError(f"talk: expected one JSON object, got {payload[:60]!r} ({exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("references"), list) or not isinstance(doc.get("steps"), list):
        raise InputError("talk: expected a JSON object with references and steps lists")
    unknown = sorted(set(doc) - set(KEYS))
    if unknown:
        raise InputError(f"talk: unknown keys {unknown}; expected {', '.join(KEYS)}")
    name = str(doc.get("name", "talk"))
    refs = []
    for i, r in enumerate(doc["references"], 1):
        if isinstance(r, dict) and set(r) - {"content", "offset", "duration"}:
            raise InputError(f"talk {name!r}: reference {i}: unknown keys {sorted(set(r) - {'content', 'offset', 'duration'})}"
                             f"; expected content, offset, duration")
        if not isinstance(r, dict) or not isinstance(r.get("content"), str) or not r["content"].strip():
            raise InputError(f"talk {name!r}: reference {i}: expected content (non-empty text), offset and duration")
        duration = _number(r.get("duration"), f"reference {i}'s duration")
        if duration <= 0:
            raise InputError(f"talk {name!r}: reference {i}: expected a positive duration, got {duration!r}")
        refs.append(RefSentence(r["content"].strip(), _number(r.get("offset"), f"reference {i}'s offset"), duration))
    unit = doc.get("unit", "word")
    state = Rebuild(doc.get("detokenizer", "word"), unit, f"talk {name!r}")
    for i, st in enumerate(doc["steps"], 1):
        if not isinstance(st, dict) or not isinstance(st.get("generated_tokens"), list) \
                or not isinstance(st.get("deleted_tokens"), list):
            raise InputError(f"talk {name!r}: step {i}: expected generated_tokens and deleted_tokens lists")
        state.feed(Step(st["generated_tokens"], st["deleted_tokens"],
                        _number(st.get("total_audio_processed"), f"step {i}'s total_audio_processed"),
                        _number(st.get("computation_time"), f"step {i}'s computation_time"), i))
    out = state.result()
    return Talk(name, out.text, out.delays, out.ca_delays, refs, unit, out.deleted_units, state.computation,
                state.audio, state.steps, "request", doc.get("resegmenter", "omnisteval"), doc.get("lang"))


def talk_stats(metric: Any, payload: str) -> List[Any]:
    """The stats vector of the talk a ``SCORE ||| talk ||| JSON`` request carries."""
    return Talks.talk_partial(metric, talk_of(payload)).finish()


FORMS = {"talk": talk_stats}
