"""The files of a long-form evaluation, read exactly as simulstream 1.0.0 and OmniSTEval 0.1.10 read them.

* **Log** (simulstream's ``metrics.jsonl``): one JSON object a line.  A line with ``metadata`` maps its
  ``id`` to a talk, the stem of ``metadata.wav_name`` (a later metadata line may map the id again);
  a line with an ``id`` and no ``metadata`` is a step of that id's current talk (``generated_tokens``,
  ``deleted_tokens``, ``total_audio_processed``, ``computation_time``); lines without an id and blank
  lines are ignored.  Talks may interleave; they keep the order of their first step.
* **Eval config** (YAML): ``detokenizer_type: simuleval`` with ``latency_unit`` ``word``, ``char`` or
  ``spm`` (the detokenizer; the ``hf`` and ``canary`` detokenizers need the model's tokenizer and are
  refused with that reason).  Without a config the tokens are joined with spaces.
* **Audio definition** (YAML, or JSON as OmniSTEval also reads): a list with one entry per reference
  line, ``wav``, ``offset`` and ``duration`` (s); the talk is the stem of ``wav``.  A talk's entries
  must be contiguous (OmniSTEval groups consecutive entries, simulstream by name).
* **Reference**: one sentence a line, as many as the audio definition's entries, stripped.
* OmniSTEval's other hypothesis forms: a **SimulEval JSONL** log of whole recordings
  (:func:`simuleval_talks`: one record a talk, times in ms) and **plain text** with a **text
  segmentation** (:func:`text_talks`: ``docid=D,segid=S`` per reference line, one hypothesis line a
  document, no times).

Refused with the file, line and talk named (the anchors assert, crash or silently differ): invalid
JSON, a step whose id has no metadata, a step missing a field or with fields of the wrong type, a
count mismatch between definition and reference, an empty reference line, a zero or negative
duration, a talk of the references missing from the log.  A talk of the log without references is
kept (its steps count for erasure and real-time factor, as in simulstream's ``stats``) and named on
stderr.
"""
from __future__ import annotations

import json
import logging
import math
from collections import OrderedDict
from pathlib import PurePath
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from evalpipe.corpus import decoded, open_binary, read_lines
from evalpipe.errors import InputError, MissingDependency
from evalpipe.evaluators.realign.stream_output import Rebuild, Step
from evalpipe.sufficient_stats.talks import RefSentence, Talk

log = logging.getLogger(__name__)
STEP_FIELDS = ("generated_tokens", "deleted_tokens", "total_audio_processed", "computation_time")


def stem(name: str) -> str:
    """A talk's name: the file name without directory and last extension (``pathlib``'s stem)."""
    return PurePath(name).stem


def _yaml(path: str) -> Any:
    with open_binary(path) as handle:
        raw = handle.read()
    if path.endswith(".json"):
        try:
            return json.loads(raw)
        except ValueError as exc:
            raise InputError(f"expected JSON: {exc}", path) from None
    try:
        import yaml
    except ImportError:
        try:
            return json.loads(raw)  # JSON is YAML: read it without PyYAML
        except ValueError:
            raise MissingDependency(f"{path} is not JSON, and reading YAML needs PyYAML: pip install 'evalpipe[stream]'"
                             ) from None
    try:
        return yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"expected YAML or JSON: {problem}{where}", path) from None


def read_eval_config(path: Optional[str]) -> str:
    """The detokenizer an eval config names: ``word``, ``char`` or ``spm`` (``word`` without a config)."""
    if path is None:
        return "word"
    config = _yaml(path)
    if not isinstance(config, dict):
        raise InputError(f"expected a mapping with detokenizer_type, got {type(config).__name__}", path)
    kind = config.get("detokenizer_type")
    if kind != "simuleval":
        raise InputError(f"expected detokenizer_type: simuleval (the hf and canary detokenizers need the model's "
                         f"own tokenizer), got {kind!r}", path)
    unit = config.get("latency_unit")
    if unit not in ("word", "char", "spm"):
        raise InputError(f"expected latency_unit word, char or spm for the simuleval detokenizer, got {unit!r}", path)
    return unit


def _number(value: Any, what: str, path: str, line: int) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(f"expected {what} to be a finite number, got {value!r}", path, line)
    return value


def log_steps(path: str) -> Iterator[Tuple[str, Step]]:
    """``(talk, step)`` for every step line of a simulstream log, in file order."""
    names: Dict[Any, str] = {}
    with open_binary(path) as handle:
        for number, text in enumerate(decoded(handle, path), 1):
            if not text.strip():
                continue
            try:
                record = json.loads(text)
            except ValueError as exc:
                raise InputError(f"expected a JSON object, got {text[:60]!r} ({exc})", path, number) from None
            if not isinstance(record, dict):
                raise InputError(f"expected a JSON object, got {type(record).__name__}", path, number)
            if "metadata" in record:
                meta = record["metadata"]
                if not isinstance(meta, dict) or not isinstance(meta.get("wav_name"), str) or "id" not in record:
                    raise InputError("expected a metadata line with an id and metadata.wav_name", path, number)
                names[_key(record["id"])] = stem(meta["wav_name"])
                continue
            if "id" not in record:
                continue
            key = _key(record["id"])
            if key not in names:
                raise InputError(f"id {record['id']!r} has no metadata line before it (which talk is it?)", path, number)
            missing = [f for f in STEP_FIELDS if f not in record]
            if missing:
                raise InputError(f"talk {names[key]!r}: expected a step with {', '.join(missing)}", path, number)
            gen, dele = record["generated_tokens"], record["deleted_tokens"]
            if not isinstance(gen, list) or not isinstance(dele, list):
                raise InputError(f"talk {names[key]!r}: expected generated_tokens and deleted_tokens to be lists",
                                 path, number)
            yield names[key], Step(gen, dele, _number(record["total_audio_processed"], "total_audio_processed", path,
                                                      number),
                                   _number(record["computation_time"], "computation_time", path, number), number)


def _key(value: Any) -> Any:
    return json.dumps(value, sort_keys=True) if isinstance(value, (list, dict)) else value


def read_segments(audio_definition: str) -> "OrderedDict[str, List[RefSentence]]":
    """Every talk's sentence spans (offset, duration; no text), in the definition's order."""
    entries = _yaml(audio_definition)
    if not isinstance(entries, list):
        raise InputError(f"expected a list of entries with wav, offset and duration, got {type(entries).__name__}",
                         audio_definition)
    talks: "OrderedDict[str, List[RefSentence]]" = OrderedDict()
    previous = None
    for number, entry in enumerate(entries, 1):
        if not isinstance(entry, dict) or any(k not in entry for k in ("wav", "offset", "duration")):
            raise InputError(f"entry {number}: expected wav, offset and duration, got {entry!r}", audio_definition)
        name = stem(str(entry["wav"]))
        offset = _number(entry["offset"], f"entry {number}'s offset", audio_definition, None)
        duration = _number(entry["duration"], f"entry {number}'s duration", audio_definition, None)
        if duration <= 0:
            raise InputError(f"entry {number} (talk {name!r}): expected a positive duration, got {duration!r} "
                             f"(latency divides by it)", audio_definition)
        if name in talks and name != previous:
            raise InputError(f"entry {number}: the entries of talk {name!r} are not contiguous", audio_definition)
        talks.setdefault(name, []).append(RefSentence("", offset, duration))
        previous = name
    return talks


def read_references(audio_definition: str, reference: str, what: str = "reference"
                    ) -> "OrderedDict[str, List[RefSentence]]":
    """Every talk's reference sentences (or, ``what="source"``, source sentences) with their offsets and durations,
    in the definition's order."""
    talks = read_segments(audio_definition)
    count = sum(map(len, talks.values()))
    lines = [line.strip() for line in read_lines(reference, allow_empty=True)]
    if len(lines) != count:
        raise InputError(f"expected one {what} line per audio-definition entry ({count} in "
                         f"{audio_definition}), got {len(lines)}", reference)
    number = 0
    for name, spans in talks.items():
        for k, span in enumerate(spans):
            number += 1
            if not lines[number - 1]:
                raise InputError(f"talk {name!r}: expected a {what} sentence, got an empty line", reference, number)
            spans[k] = RefSentence(lines[number - 1], span.offset, span.duration)
    return talks


def iter_talks(log_file: str, references: "OrderedDict[str, List[RefSentence]]", detokenizer: str = "word",
               unit: str = "word", resegmenter: str = "omnisteval", lang: Optional[str] = None
               ) -> Iterator[Tuple[int, Talk]]:
    """``(place, talk)`` for every talk of a log, each as soon as its last step is read.

    Two passes over the log: the first checks every line and finds each talk's last step, the second
    rebuilds the talks (:class:`~evalpipe.evaluators.realign.stream_output.Rebuild`) and hands each over when
    it is complete, so memory holds only the talks in progress, never the log.  ``place``: the talk's
    place among the references' talks (in the audio definition's order), then the log's other talks."""
    last: Dict[str, int] = {}
    for name, step in log_steps(log_file):
        last[name] = step.line
    missing = [name for name in references if name not in last]
    if missing:
        raise InputError(f"expected every talk of the audio definition in the log; missing: {', '.join(missing[:10])}"
                         + (f" and {len(missing) - 10} more" if len(missing) > 10 else ""), log_file)
    extra = [name for name in last if name not in references]
    if extra:
        log.warning("%s: %d talk(s) without references (counted by normalized_erasure and real_time_factor "
                    "only): %s", log_file, len(extra), ", ".join(extra[:10]))
    place = {name: i for i, name in enumerate(list(references) + extra)}
    active: Dict[str, Rebuild] = {}
    for name, step in log_steps(log_file):
        state = active.get(name)
        if state is None:
            state = active[name] = Rebuild(detokenizer, unit, f"{log_file}, talk {name!r}")
        state.feed(step)
        if step.line == last[name]:
            del active[name]
            out = state.result()
            yield place[name], Talk(name, out.text, out.delays, out.ca_delays, references.get(name, []), unit,
                                    out.deleted_units, state.computation, state.audio, state.steps, log_file,
                                    resegmenter, lang)


def read_talks(log_file: str, audio_definition: str, reference: str, eval_config: Optional[str] = None,
               unit: str = "word", resegmenter: str = "omnisteval", lang: Optional[str] = None) -> List[Talk]:
    """Every talk of a log with its references, rebuilt and ready to realign (:func:`iter_talks`), in
    the references' order, then the talks of the log that have no reference."""
    refs = read_references(audio_definition, reference)
    found = sorted(iter_talks(log_file, refs, read_eval_config(eval_config), unit, resegmenter, lang),
                   key=lambda pair: pair[0])
    return [talk for _, talk in found]


def _hypothesis_names(names: Sequence[str], references: "OrderedDict[str, List[RefSentence]]",
                      path: str) -> Dict[str, str]:
    """Each hypothesis's talk, matched as OmniSTEval matches them: the name itself, its file name, or
    either without extension."""
    out = {}
    for name in names:
        base = PurePath(name).name
        match = next((c for c in (name, base, stem(name), stem(base)) if c in references), None)
        if match is None:
            raise InputError(f"hypothesis {name!r} matches no talk of the audio definition "
                             f"({', '.join(list(references)[:5])}...)", path)
        out[name] = match
    return out


def simuleval_talks(path: str, references: "OrderedDict[str, List[RefSentence]]", unit: str = "word",
                    resegmenter: str = "omnisteval", lang: Optional[str] = None, cu_key: str = "delays",
                    ca_key: str = "elapsed", fix_ca: bool = False) -> Iterator[Tuple[int, Talk]]:
    """Talks from a SimulEval JSONL log of whole recordings (OmniSTEval's ``--hypothesis_format jsonl``):
    one object a talk with ``source`` (its recording, or a list whose first item is), ``prediction``
    and emission times in ms under ``cu_key`` / ``ca_key`` (both optional, but in every line or none;
    without them only quality can be scored).  Units are the prediction's words split on whitespace
    (characters at the character level), one emission time each.  ``fix_ca``: OmniSTEval's
    ``--fix_simuleval_emission_ca`` (SimulEval's elapsed times are cumulative: e'_i =
    max(e_i - e_{i-1} + d_{i-1}, e'_{i-1}))."""
    records: Dict[str, Tuple[int, dict]] = {}
    with open_binary(path) as handle:
        for number, text in enumerate(decoded(handle, path), 1):
            if not text.strip():
                raise InputError("expected a JSON object, got an empty line", path, number)
            try:
                record = json.loads(text)
            except ValueError as exc:
                raise InputError(f"expected a JSON object ({exc})", path, number) from None
            source = record.get("source") if isinstance(record, dict) else None
            source = source[0] if isinstance(source, list) and source else source
            if not isinstance(source, str) or not isinstance(record.get("prediction"), str):
                raise InputError("expected an object with source and prediction", path, number)
            if source in records:
                raise InputError(f"a second hypothesis for {source!r} (the first is on line {records[source][0]})",
                                 path, number)
            records[source] = (number, record)
    if len(records) != len(references):
        raise InputError(f"expected one hypothesis per talk of the audio definition ({len(references)}), "
                         f"got {len(records)}", path)
    names = _hypothesis_names(list(records), references, path)
    for key in (cu_key, ca_key):
        having = sum(key in r for _, r in records.values())
        if 0 < having < len(records):
            raise InputError(f"{having} of {len(records)} hypotheses have {key!r}: all or none must", path)
    place = {name: i for i, name in enumerate(references)}
    for source, (number, record) in records.items():
        name = names[source]
        text = record["prediction"]
        units = list(text) if unit == "char" else text.split()
        times = []
        for key in (cu_key, ca_key):
            values = record.get(key)
            if values is None:
                times.append([])
                continue
            if not isinstance(values, list) or len(values) != len(units):
                raise InputError(f"talk {name!r}: expected {len(units)} {key} (one per {unit}), got "
                                 f"{len(values) if isinstance(values, list) else values!r}", path, number)
            times.append([_number(v, key, path, number) for v in values])
        cu, ca = times
        if fix_ca and ca:
            fixed = [ca[0]] + [ca[i] - ca[i - 1] + cu[i - 1] for i in range(1, len(ca))]
            for i in range(1, len(fixed)):
                fixed[i] = max(fixed[i], fixed[i - 1])
            ca = fixed
        yield place[name], Talk(name, " ".join(units) if unit == "word" else text, cu, ca, references[name], unit,
                                source=path, resegmenter=resegmenter, lang=lang, time_unit="ms")


def text_talks(path: str, segmentation: str, reference: str, unit: str = "word", resegmenter: str = "omnisteval",
               lang: Optional[str] = None) -> Tuple["OrderedDict[str, List[RefSentence]]", List[Tuple[int, Talk]]]:
    """References and talks of a text-only evaluation (OmniSTEval's ``--text_segmentation``): one
    ``docid=D,segid=S`` line per reference sentence (0-based documents), one hypothesis line per
    document.  There are no times: only quality can be scored."""
    docs = []
    for number, line in enumerate(read_lines(segmentation), 1):
        try:
            parts = dict(p.split("=") for p in line.strip().split(","))
            docs.append(int(parts["docid"]))
            int(parts["segid"])
        except (ValueError, KeyError):
            raise InputError(f"expected docid=DOC_ID,segid=SEG_ID, got {line!r}", segmentation, number) from None
    refs = [line.strip() for line in read_lines(reference, allow_empty=True)]
    if len(refs) != len(docs):
        raise InputError(f"expected one reference line per segmentation line ({len(docs)}), got {len(refs)}", reference)
    count = max(docs) + 1
    if min(docs) < 0 or len(set(docs)) != count:
        raise InputError(f"expected documents numbered 0 to {count - 1}, each with sentences", segmentation)
    references: "OrderedDict[str, List[RefSentence]]" = OrderedDict((str(d), []) for d in range(count))
    for number, (d, ref) in enumerate(zip(docs, refs), 1):
        if not ref:
            raise InputError("expected a reference sentence, got an empty line", reference, number)
        references[str(d)].append(RefSentence(ref, 0.0, 0.0))
    hyps = [line.strip() for line in read_lines(path, allow_empty=True)]
    if len(hyps) != count:
        raise InputError(f"expected one hypothesis line per document ({count}), got {len(hyps)}", path)
    talks = [(d, Talk(str(d), " ".join(h.split()) if unit == "word" else h, [], [], references[str(d)], unit,
                      source=path, resegmenter=resegmenter, lang=lang)) for d, h in enumerate(hyps)]
    return references, talks
