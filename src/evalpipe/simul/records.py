"""SimulEval instance records (``instances.log``, JSON lines) as typed input.

A record holds ``prediction`` (target words), ``delays`` (source read per target word),
``source_length``, ``reference`` and, for speech, ``elapsed``; evalpipe's server adds ``server_delays`` (the
IWSLT 2020 server's steps, ``</s>`` included), which the ``iwslt2020`` latency convention uses.  :func:`record_hypothesis` turns one
into a :class:`~evalpipe.sufficient_stats.segments.SimulHypothesis`; :func:`records_input` turns many
into :class:`~evalpipe.inputs.SimulPairs` (one reference stream; none when no record has a
reference).  Errors name the file, the line and what was expected.
"""
from __future__ import annotations

import gc
import json
from contextlib import contextmanager
from itertools import chain, repeat
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from evalpipe.corpus import decode_lines, open_binary
from evalpipe.errors import InputError
from evalpipe.inputs import SimulPairs
from evalpipe.simul.log_columns import columns
from evalpipe.sufficient_stats.segments import SimulHypothesis


def record_hypothesis(record: Dict[str, Any], source: Optional[str] = None, line: Optional[int] = None) -> SimulHypothesis:
    """The simultaneous hypothesis of one SimulEval record."""
    if not isinstance(record, dict):
        raise InputError(f"expected a SimulEval instance (a JSON object), got {type(record).__name__}", source, line)
    missing = [k for k in ("delays", "source_length") if k not in record]
    if missing:
        raise InputError(f"expected a SimulEval instance with {', '.join(map(repr, missing))}; "
                         f"got keys {sorted(record)}", source, line)
    length = record["source_length"]
    if isinstance(length, list):  # some SimulEval versions write [length]
        length = length[0] if len(length) == 1 else length
    if isinstance(length, bool) or not isinstance(length, (int, float)):
        raise InputError(f"expected source_length to be a number, got {record['source_length']!r}", source, line)
    delays = record["delays"] or []
    if type(delays) is not list or not _numbers(delays):
        raise InputError(f"expected delays to be a list of numbers, got {str(delays)[:60]}", source, line)
    text = record.get("prediction")
    server = record.get("server_delays")
    if server is not None and (type(server) is not list or not _numbers(server)):
        raise InputError(f"expected server_delays to be a list of numbers, got {str(server)[:60]}", source, line)
    durations = record.get("durations")
    if durations is not None and (type(durations) is not list or not _numbers(durations)
                                  or len(durations) != len(delays)):
        raise InputError(f"expected durations to be a list of numbers, one per delay ({len(delays)}), "
                         f"got {str(durations)[:60]}", source, line)
    return SimulHypothesis(delays, float(length), record.get("elapsed"), text if isinstance(text, str) else None,
                           server, durations)


@contextmanager
def _gc_paused() -> Iterator[None]:
    """The cyclic garbage collector paused while many acyclic objects (records, hypotheses) are built:
    its passes over the growing heap would otherwise cost more than building them."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _numbers(values: Iterable[Any]) -> bool:
    return set(map(type, values)) <= {int, float}


def _hypotheses(records: Sequence[Dict[str, Any]]) -> Optional[List[SimulHypothesis]]:
    """The hypotheses of well-formed records, checked column by column (None if any record is not)."""
    if set(map(type, records)) != {dict}:
        return None
    delays = list(map(dict.get, records, repeat("delays")))
    lengths = list(map(dict.get, records, repeat("source_length")))
    if set(map(type, delays)) != {list} or not _numbers(lengths) or not _numbers(chain.from_iterable(delays)):
        return None
    texts = [t if type(t) is str else None for t in map(dict.get, records, repeat("prediction"))]
    server = list(map(dict.get, records, repeat("server_delays")))
    given = [d for d in server if d is not None]
    if given and (set(map(type, given)) != {list} or not _numbers(chain.from_iterable(given))):
        return None
    durations = list(map(dict.get, records, repeat("durations")))
    if any(d is not None for d in durations):
        return None  # checked record by record
    return list(map(SimulHypothesis._make, zip(delays, map(float, lengths), map(dict.get, records, repeat("elapsed")),
                                               texts, server, durations)))


def records_input(records: Sequence[Dict[str, Any]], source: Optional[str] = None,
                  lines: Optional[Sequence[int]] = None) -> SimulPairs:
    """Records as :class:`SimulPairs`; references must be all present or all absent."""
    lines = lines or range(1, len(records) + 1)
    with _gc_paused():
        hyps = _hypotheses(records) or [record_hypothesis(r, source, n) for r, n in zip(records, lines)]
    check_delays(hyps, source, lines)
    return _pairs(hyps, [r.get("reference") for r in records], lines, [r.get("index") for r in records],
                  source_kind(records), source)


def bytes_input(data: bytes, source: str, first_line: int = 1) -> Optional[SimulPairs]:
    """The records of ``data`` (whole lines of a log, from line ``first_line``) as :func:`records_input` makes
    them, read by :func:`~evalpipe.simul.log_columns.columns`; None where that reader does not take the bytes
    (the caller then parses them with :func:`parse_records`, which names what is wrong)."""
    with _gc_paused():
        found = columns(data, first_line)
    if found is None or not found.lines:
        return None
    hyps = list(map(SimulHypothesis._make, zip(found.delays, found.source_lengths, found.elapsed, found.predictions,
                                               found.server_delays, repeat(None))))
    check_delays(hyps, source, found.lines, checked=found.checked)
    kinds = set(found.kinds)
    return _pairs(hyps, found.references, found.lines, found.indices, kinds.pop() if len(kinds) == 1 else None,
                  source)


def _pairs(hyps: List[SimulHypothesis], refs: Sequence[Any], lines: Sequence[int], indices: Sequence[Any],
           kind: Optional[str], source: Optional[str]) -> SimulPairs:
    present = [isinstance(r, str) for r in refs]
    if any(present) and not all(present):
        n = lines[present.index(False)]
        raise InputError("expected a 'reference' string in every instance (or in none)", source, n)
    pairs = SimulPairs(hyps, [list(refs)] if all(present) and refs else [], source or "")
    pairs.lines = list(lines)  # the line of each instance in its file
    pairs.indices = list(indices)  # SimulEval's instance index, where the log has one
    pairs.source_kind = kind
    return pairs


def source_kind(records: Sequence[Any]) -> Optional[str]:
    """What the log's sources were, as SimulEval writes them into ``source``: ``"speech"`` when every record's is
    the list of a sound file's properties (a ``samplerate: ...`` line among them: delays in milliseconds),
    ``"text"`` when every record's is a string (delays in source words); None when records have none or mix them."""
    kinds = set(map(record_kind, records))
    return kinds.pop() if len(kinds) == 1 else None


def record_kind(record: Any) -> Optional[str]:
    """:func:`source_kind` of one record."""
    source = record.get("source") if type(record) is dict else None
    if source is None:
        return None
    if type(source) is str:
        return "text"
    if isinstance(source, list) and any(isinstance(x, str) and x.startswith("samplerate:") for x in source):
        return "speech"
    return None


def check_delays(hyps: Sequence[SimulHypothesis], source: Optional[str], lines: Sequence[int],
                 checked: bool = False) -> None:
    """Delays that can come from a simultaneous run: finite and non-decreasing, with a source length of 0 or more;
    the first that is not is an error naming the file, line and field.  Delays past the source length are
    kept: logs cut from a stream carry them (the shared wait-k logs do), and each metric has its rule for them.
    ``checked``: the reader found the delays and source lengths so already (only the word counts are left)."""
    if not hyps:
        return
    for i, h in enumerate(hyps):  # a word emitted without a delay: its latency is unknown (speech output aside)
        if h.text is not None and h.durations is None and len(h.delays) < h.text.count(" ") + 1 \
                and len(h.delays) < len(h.text.split()):
            raise InputError(f"expected a delay for each word of the prediction ({len(h.text.split())} words), got "
                             f"{len(h.delays)} delays in field 'delays'", source, lines[i] if i < len(lines) else None)
    if checked:
        return
    lengths = np.fromiter((len(h.delays) for h in hyps), dtype=np.int64, count=len(hyps))
    src = np.fromiter((h.source_length for h in hyps), dtype=np.float64, count=len(hyps))
    flat = np.fromiter(chain.from_iterable(h.delays for h in hyps), dtype=np.float64, count=int(lengths.sum()))
    sentence = np.repeat(np.arange(len(hyps)), lengths)
    back = np.zeros(len(flat), dtype=bool)
    back[1:] = (flat[1:] < flat[:-1]) & (sentence[1:] == sentence[:-1])
    candidates = [(i, "source") for i in np.flatnonzero(~(np.isfinite(src) & (src >= 0)))[:1].tolist()]
    candidates += [(int(sentence[int(np.argmax(m))]), kind) for m, kind in ((~np.isfinite(flat), "finite"),
                                                                           (back, "back")) if m.any()]
    if not candidates:
        return
    i, kind = min(candidates)
    where = lines[i] if i < len(lines) else None
    delays = list(hyps[i].delays)
    if kind == "source":
        raise InputError(f"expected source_length to be a number, 0 or more, got {hyps[i].source_length!r}", source,
                         where)
    if kind == "finite":
        raise InputError(f"expected finite delays, got {[d for d in delays if not np.isfinite(d)][:3]} in field "
                         f"'delays'", source, where)
    step = next(t for t in range(1, len(delays)) if delays[t] < delays[t - 1])
    raise InputError(f"expected non-decreasing delays, got {delays[step - 1]:g} then {delays[step]:g} "
                     f"(delay {step + 1}) in field 'delays'", source, where)


def read_instances(path: str, fields: Optional[Dict[str, str]] = None) -> SimulPairs:
    """The records of a SimulEval ``instances.log`` (JSON lines) as :class:`SimulPairs`.

    ``fields`` maps evalpipe's keys (``delays``, ``elapsed``) to the ones the file uses (OmniSTEval's
    ``--emission_cu_key`` / ``--emission_ca_key``); a renamed field missing from a line is an error naming it."""
    import contextlib
    import sys

    handle_of = contextlib.nullcontext(sys.stdin.buffer) if path == "-" else open_binary(path)  # "-": stdin
    with handle_of as handle:
        raw = handle.read()
    pairs = None if any(theirs != ours for ours, theirs in (fields or {}).items()) else bytes_input(raw, path)
    if pairs is not None:
        return pairs
    records, numbers = parse_records(decode_lines(raw, path), path, 1, fields)
    if not records:
        raise InputError(f"{path} holds no instances")
    return records_input(records, path, numbers)


def parse_records(lines: Sequence[str], path: str, first_line: int = 1,
                  fields: Optional[Dict[str, str]] = None) -> Tuple[List[Any], List[int]]:
    """(the JSON value of every non-blank line of ``lines``, its line number), ``lines`` being a log's lines from
    line ``first_line`` on; bad JSON is an :class:`InputError` naming the file and line."""
    renamed = {ours: theirs for ours, theirs in (fields or {}).items() if theirs != ours}
    with _gc_paused():
        kept = [(n, line) for n, line in enumerate(lines, first_line) if line.strip()]
        try:  # one parse of the whole piece (faster than a parse a line); on any error line by line, to name it
            records = json.loads("[" + ",".join([line for _, line in kept]) + "]")
        except (json.JSONDecodeError, RecursionError):
            records = None
        if records is None or len(records) != len(kept):
            records = []
            for number, line in kept:
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise InputError(f"expected a JSON object, {exc}", path, number) from None
                except RecursionError:
                    raise InputError("expected a JSON object, got values nested deeper than Python's json reads",
                                     path, number) from None
        numbers = [n for n, _ in kept]
        if renamed:
            records = [_renamed(r, renamed, path, n) for r, n in zip(records, numbers)]
    return records, numbers


def _renamed(record: Any, renamed: Dict[str, str], path: str, number: int) -> Any:
    """``record`` with its fields called as evalpipe calls them (``renamed``: ours -> the file's)."""
    if not isinstance(record, dict):
        return record  # reported by record_hypothesis
    record = dict(record)
    for ours, theirs in renamed.items():
        if theirs not in record:
            raise InputError(f"expected the field {theirs!r} (the {ours} field) in every instance; "
                             f"got keys {sorted(record)}", path, number)
        record[ours] = record.pop(theirs)
    return record
