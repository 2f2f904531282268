"""Where MBR candidates come from: aligned system files, a Moses n-best list, or JSON lines of sample lists.

Every reader returns one list of candidate strings per segment, and errors name the file and line.

* :func:`from_systems` -- line i of every file is one candidate of segment i (system combination); the files
  must have the same number of lines.
* :func:`from_nbest` -- Moses n-best lines ``ID ||| text ||| features ||| score``: ids 0, 1, 2, ... in order,
  each id's lines together (an id without lines is a segment without candidates: an error).
* :func:`from_jsonl` -- one JSON value per line: a list of strings, or an object with ``"candidates"`` (a list
  of strings) and optionally ``"weights"`` (one non-negative number per pseudo-reference).
"""
from __future__ import annotations

import json
from typing import List, Optional, Sequence, Tuple

from evalpipe.corpus import check_same_length, read_lines
from evalpipe.errors import InputError


def from_systems(paths: Sequence[str]) -> List[List[str]]:
    streams = [read_lines(p) for p in paths]
    check_same_length(list(zip(paths, streams)))
    return [list(segment) for segment in zip(*streams)]


def from_nbest(path: str) -> List[List[str]]:
    segments: List[List[str]] = []
    for number, line in enumerate(read_lines(path), 1):
        fields = line.split(" ||| ")
        if len(fields) < 2:
            raise InputError(f"expected ID ||| text ||| ... (Moses n-best), got {line[:80]!r}", path, number)
        try:
            ident = int(fields[0].strip())
        except ValueError:
            raise InputError(f"expected an integer sentence id, got {fields[0][:40]!r}", path, number) from None
        if ident == len(segments) - 1:
            segments[-1].append(fields[1].strip())
        elif ident == len(segments):
            segments.append([fields[1].strip()])
        else:
            raise InputError(f"expected sentence id {len(segments) - 1} or {len(segments)} (ids in order, each id's "
                             f"lines together), got {ident}", path, number)
    if not segments:
        raise InputError("no n-best lines", path)
    return segments


def from_jsonl(path: str, what: str = "candidates") -> Tuple[List[List[str]], Optional[List[List[float]]]]:
    """(lists of strings, weights per segment or None)."""
    segments: List[List[str]] = []
    weights: List[Optional[List[float]]] = []
    for number, line in enumerate(read_lines(path), 1):
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"expected JSON ({exc.msg})", path, number) from None
        w = None
        if isinstance(value, dict):
            w = value.get("weights")
            value = value.get("candidates")
        if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
            raise InputError(f"expected a non-empty list of strings (or an object with \"{what}\"), got "
                             f"{line[:80]!r}", path, number)
        if w is not None and (not isinstance(w, list) or not all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                                 and x >= 0 for x in w)):
            raise InputError(f"expected \"weights\" as a list of non-negative numbers, got {str(w)[:80]}", path, number)
        segments.append(value)
        weights.append(None if w is None else [float(x) for x in w])
    if not segments:
        raise InputError("no lines", path)
    if all(w is None for w in weights):
        return segments, None
    if any(w is None for w in weights):
        first = next(i for i, w in enumerate(weights) if w is None)
        raise InputError("weights on some lines but not on others", path, first + 1)
    return segments, weights  # type: ignore[return-value]
