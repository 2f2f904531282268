"""Segment scores computed elsewhere (COMET, MetricX, BLEURT, a human score), read from the files those tools write.

Formats (``auto`` tells them apart by their first non-empty line):

* ``comet``: ``comet-score``'s output (unbabel-comet 2.2.7, ``comet/cli/score.py``): ``FILE<TAB>Segment I<TAB>score: X``
  per segment and system, then ``FILE<TAB>score: X`` per system (the system lines are checked against the mean of
  its segments to the 4 decimals printed).  With one system, comet-score still prints its file name.  The
  printed scores have 4 decimals: for full precision use ``comet-score --to_json`` and the ``jsonl`` format.
* ``mtme``: an MTME ``*.seg.score`` file: ``SYSTEM<TAB>SCORE`` per line, each system's segments in order; ``None``
  marks a segment without a score (MQM rates a subset): it counts in neither the sum nor the count.
* ``lines``: one number per line, one system per file.
* ``jsonl``: JSON lines, one object per segment, the score under a named field (MetricX's ``prediction``).

Every value must be a finite number; a line that is not one is an error naming the file, the line and what came.
"""
from __future__ import annotations

import json
import math
import re
from typing import Dict, List, Optional

from evalpipe.corpus import read_lines
from evalpipe.errors import InputError, UsageError

FORMATS = ("auto", "comet", "mtme", "lines", "jsonl")
_COMET_SEGMENT = re.compile(r"^(.*)\tSegment (\d+)\tscore: (\S+)$")
_COMET_SYSTEM = re.compile(r"^(.*)\tscore: (\S+)$")


def _number(text: str, path: str, line: int, what: str = "a score") -> float:
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise InputError(f"expected {what} (a number), got {text!r}", path, line) from None
    if not math.isfinite(value):
        raise InputError(f"expected {what} to be a finite number, got {text!r}", path, line)
    return value


def detect(path: str, lines: List[str]) -> str:
    """The format of a score file from its first non-empty line."""
    first = next((line for line in lines if line.strip()), None)
    if first is None:
        raise InputError(f"{path} holds no scores")
    if _COMET_SEGMENT.match(first):
        return "comet"
    if first.lstrip().startswith("{"):
        return "jsonl"
    if "\t" in first:
        return "mtme"
    return "lines"


def read_scores(path: str, fmt: str = "auto", field: Optional[str] = None) -> Dict[str, List[Optional[float]]]:
    """``{system: segment scores}`` of a score file; single-system formats (``lines``, ``jsonl``) give ``{"": [...]}``."""
    if fmt not in FORMATS:
        raise UsageError(f"expected a score format among {', '.join(FORMATS)}, got {fmt!r}")
    lines = read_lines(path)
    fmt = detect(path, lines) if fmt == "auto" else fmt
    if field is not None and fmt != "jsonl":
        raise UsageError(f"{path}: a field name is for JSON lines, and this file is in the {fmt} format")
    return {"comet": _comet, "mtme": _mtme, "lines": _lines, "jsonl": _jsonl}[fmt](path, lines, field)


def _comet(path: str, lines: List[str], field: Optional[str]) -> Dict[str, List[Optional[float]]]:
    systems: Dict[str, List[float]] = {}
    totals: Dict[str, tuple] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.startswith("Predictions saved in: "):
            continue
        segment = _COMET_SEGMENT.match(line)
        if segment:
            name, index, value = segment.group(1), int(segment.group(2)), segment.group(3)
            scores = systems.setdefault(name, [])
            if index != len(scores):
                raise InputError(f"expected segment {len(scores)} of {name}, got segment {index}", path, number)
            scores.append(_number(value, path, number))
            continue
        system = _COMET_SYSTEM.match(line)
        if not system:
            raise InputError(f"expected comet-score's 'FILE<TAB>Segment I<TAB>score: X' or 'FILE<TAB>score: X', "
                             f"got {line[:80]!r}", path, number)
        totals[system.group(1)] = (_number(system.group(2), path, number, "a system score"), number)
    if not systems:
        raise InputError(f"{path} holds no segment scores (comet-score --only_system output has none)")
    lengths = {name: len(scores) for name, scores in systems.items()}
    if len(set(lengths.values())) > 1:
        raise InputError(f"expected every system to have the same number of segments, got {lengths}", path)
    for name, (value, number) in totals.items():
        if name not in systems:
            raise InputError(f"system score of {name!r}, which has no segment scores", path, number)
        mean = sum(systems[name]) / len(systems[name])
        if abs(mean - value) > 1e-4 + 1e-9:  # both printed to 4 decimals: the mean of rounded scores moves <= 5e-5
            raise InputError(f"{name}'s system score {value} is not the mean of its segment scores ({mean:.6f}): "
                             f"the file is not one comet-score run", path, number)
    return systems


def _mtme(path: str, lines: List[str], field: Optional[str]) -> Dict[str, List[Optional[float]]]:
    systems: Dict[str, List[float]] = {}
    for number, line in enumerate(lines, 1):
        parts = line.rstrip("\n").split("\t")
        if len(parts) != 2:
            raise InputError(f"expected 'SYSTEM<TAB>SCORE' (an MTME seg.score line), got {line[:80]!r}", path, number)
        systems.setdefault(parts[0], []).append(None if parts[1] == "None" else _number(parts[1], path, number))
    lengths = {name: len(scores) for name, scores in systems.items()}
    if len(set(lengths.values())) > 1:
        raise InputError(f"expected every system to have the same number of segments, got {lengths}", path)
    return systems


def _lines(path: str, lines: List[str], field: Optional[str]) -> Dict[str, List[Optional[float]]]:
    return {"": [_number(line.strip(), path, number) for number, line in enumerate(lines, 1)]}


def _jsonl(path: str, lines: List[str], field: Optional[str]) -> Dict[str, List[Optional[float]]]:
    scores = []
    for number, line in enumerate(lines, 1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"expected a JSON object, {exc}", path, number) from None
        if not isinstance(record, dict):
            raise InputError(f"expected a JSON object, got {type(record).__name__}", path, number)
        if field is None:
            numeric = [k for k, v in record.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
            raise UsageError(f"{path}: name the score's field of these JSON lines (NAME=FILE:FIELD); "
                             f"numeric fields of line {number}: {', '.join(numeric) or 'none'}")
        if field not in record:
            raise InputError(f"expected the field {field!r}, got keys {sorted(record)}", path, number)
        value = record[field]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InputError(f"expected {field!r} to be a number, got {value!r}", path, number)
        scores.append(_number(value, path, number, f"{field!r}"))
    return {"": scores}


def _match(system: str, names: List[str], label: str, path: str) -> str:
    """The name in a score file of the system typed as ``system``: the same path, else the same file name, else the
    same file name without extension -- exactly one."""
    import os

    tests = (lambda n: os.path.abspath(n) == os.path.abspath(system),
             lambda n: os.path.basename(n) == os.path.basename(system),
             lambda n: os.path.splitext(os.path.basename(n))[0] == os.path.splitext(os.path.basename(system))[0])
    for test in tests:
        found = [n for n in names if test(n)]
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise UsageError(f"{label}: {path} names several systems that could be {system!r}: {', '.join(found)}")
    raise UsageError(f"{label}: {path} has no scores of the system {system!r}; it has {', '.join(sorted(names))}")


def scores_for_systems(label: str, paths: List[str], systems: List[str], segments: Optional[int],
                       fmt: str = "auto", field: Optional[str] = None) -> Dict[str, List[Optional[float]]]:
    """``{system: scores}`` for each of ``systems`` from the score files ``paths`` of the metric ``label``.

    One file holding several systems (comet-score's output, an MTME seg.score file) is matched by name -- the
    system as typed, its file name, or its file name without extension; otherwise one single-system file per
    system, in the systems' order.  Each system must have exactly ``segments`` scores (when given)."""
    found = [(path, read_scores(path, fmt, field)) for path in paths]
    out: Dict[str, List[float]] = {}
    if len(found) == 1 and (len(found[0][1]) > 1 or "" not in found[0][1]) and (len(systems) > 1 or len(found[0][1]) > 1):
        path, table = found[0]
        for system in systems:
            out[system] = table[_match(system, list(table), label, path)]
        sources = {system: path for system in systems}
    else:
        if len(found) != len(systems):
            raise UsageError(f"{label}: {len(found)} score file(s) for {len(systems)} systems; give one file per "
                             f"system in their order, or one file holding every system")
        for system, (path, table) in zip(systems, found):
            if len(table) != 1:
                raise UsageError(f"{label}: {path} holds {len(table)} systems ({', '.join(sorted(table))}); "
                                 f"give it alone to match them by name")
            out[system] = next(iter(table.values()))
        sources = {system: path for system, (path, _) in zip(systems, found)}
    if segments is not None:
        lined = len(found) > 1 or "" in found[0][1]  # a score a line: the line numbers are the segments'
        for system, scores in out.items():
            if len(scores) < segments:
                raise InputError(f"expected {segments} scores (one a segment) for {system}, got {len(scores)}: "
                                 f"segment {len(scores) + 1} has none", sources[system],
                                 len(scores) + 1 if lined else None)
            if len(scores) > segments:
                raise InputError(f"expected {segments} scores (one a segment) for {system}, got {len(scores)}: "
                                 f"an extra score", sources[system], segments + 1 if lined else None)
    return out
