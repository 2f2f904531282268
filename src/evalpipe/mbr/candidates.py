"""Where MBR candidates come from: aligned system files, a Moses n-best list, or JSON lines of sample lists.

Every reader returns one list of candidate strings per segment, and errors name the file and line.

* :func:`from_systems` -- line i of every file is one candidate of segment i (system combination); the files
  must have the same number of lines.
* :func:`from_nbest` -- Moses n-best lines ``ID ||| text ||| features ||| score`` (:mod:`evalpipe.nbest`: ``|||``
  with any spacing, empty hypotheses, 0-based ids; an id without lines is a segment without candidates: an error).
* :func:`from_jsonl` -- one JSON value per line, read by :mod:`evalpipe.mbr.requests` (the line protocol's
  reader: the same keys, unknown keys refused): a list of strings, or an object with ``"candidates"``,
  optionally ``"pseudo_references"`` and ``"weights"`` (one non-negative number per pseudo-reference).
"""
from __future__ import annotations

import json
from typing import Any, List, Optional, Sequence

from evalpipe import nbest as nbest_files
from evalpipe.corpus import check_same_length, read_lines
from evalpipe.errors import InputError
from evalpipe.mbr import requests
from evalpipe.mbr.requests import Request


def from_systems(paths: Sequence[str]) -> List[List[str]]:
    streams = [read_lines(p) for p in paths]
    check_same_length(list(zip(paths, streams)))
    return [list(segment) for segment in zip(*streams)]


def from_nbest(path: str) -> List[List[str]]:
    """The hypotheses of every segment of a Moses n-best list (:mod:`evalpipe.nbest`, the reader tune uses)."""
    return [[entry.hypothesis for entry in segment] for segment in nbest_files.read(path)]


def from_jsonl(path: str, main: str = "candidates") -> List[Request]:
    """One :class:`~evalpipe.mbr.requests.Request` per line (:mod:`evalpipe.mbr.requests`: the protocol's keys,
    unknown keys refused); ``main`` is the key a line must have and a bare list stands for.  Lines of a
    pseudo-references file carry ``pseudo_references``, ``weights`` and ``reference_lprobs`` only."""
    allowed = ("pseudo_references", "weights", "reference_lprobs")
    if main == "candidates":
        allowed = ("candidates",) + allowed
    out = []
    for number, line in enumerate(read_lines(path), 1):
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"expected JSON ({exc.msg})", path, number) from None
        try:
            out.append(requests.parse(value, main, allowed))
        except InputError as exc:
            raise InputError(str(exc), path, number) from None
    if not out:
        raise InputError("no lines", path)
    return out


def per_segment(lines: Sequence[Request], key: str, path: str) -> Optional[List[Any]]:
    """The ``key`` of every line, or None when no line has it; some lines with it and others without is an error."""
    values = [getattr(r, key) for r in lines]
    if all(v is None for v in values):
        return None
    if any(v is None for v in values):
        first = next(i for i, v in enumerate(values) if v is None)
        raise InputError(f"\"{key}\" on some lines but not on others", path, first + 1)
    return values


def lprobs_from(path: str, references: Sequence[Sequence[str]]) -> List[List[float]]:
    """``--reference-lprobs``: one JSON list of finite numbers per line, the log-probabilities of that segment's
    pseudo-references (as many as it has), as mbrs's ``reference_lprobs``."""
    import math

    lines = read_lines(path)
    if len(lines) != len(references):
        raise InputError(f"has {len(lines)} lines, the candidates {len(references)} segments", path)
    out = []
    for number, (line, refs) in enumerate(zip(lines, references), 1):
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"expected a JSON list of numbers ({exc.msg})", path, number) from None
        if not isinstance(value, list) or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                  for v in value):
            raise InputError(f"expected a JSON list of numbers, got {line[:60]}", path, number)
        if len(value) != len(refs):
            raise InputError(f"expected {len(refs)} log-probabilities (one a pseudo-reference), got {len(value)}",
                             path, number)
        if not all(math.isfinite(v) for v in value):
            raise InputError("expected finite log-probabilities (no NaN or infinity)", path, number)
        out.append([float(v) for v in value])
    return out
