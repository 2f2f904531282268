"""Moses-format n-best lists for tuning: ``id ||| hypothesis ||| features ||| total`` (extra fields ignored), read
by :mod:`evalpipe.nbest` (``|||`` with any spacing, empty hypotheses, 0-based ids without gaps).

Features are dense: ``Name= v_1 v_2 ...`` gives features ``Name_1, Name_2, ...`` (``Name`` alone for one
value), and ``name=value`` tokens are accepted too.  Every line of a list must have the same features
in the same order; ids are 0-based segment numbers, every one from 0 to the largest with lines (which need not
be together in the file).  Errors name the file and line.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from evalpipe import nbest as nbest_files
from evalpipe.corpus import read_lines
from evalpipe.errors import InputError


@dataclass
class NBest:
    """Hypotheses grouped by segment id, with a feature matrix per segment."""

    feature_names: List[str]
    ids: List[int] = field(default_factory=list)               # segment ids, in first-seen order
    hypotheses: Dict[int, List[str]] = field(default_factory=dict)
    features: Dict[int, np.ndarray] = field(default_factory=dict)  # id -> (hypotheses x features)

    @property
    def lines(self) -> int:
        return sum(len(h) for h in self.hypotheses.values())


def parse_features(text: str) -> Tuple[List[str], List[float]]:
    """``"LM0= -1.5 TM0= 0.1 0.2 w=3"`` -> (["LM0", "TM0_1", "TM0_2", "w"], [-1.5, 0.1, 0.2, 3.0])."""
    groups: List[Tuple[str, List[float]]] = []
    for token in text.split():
        name, eq, value = token.partition("=")
        if eq and name:
            groups.append((name, []))
            if not value:
                continue
            token = value
        if not groups:
            raise InputError(f"expected features as 'Name= value ...', got a value before any name: {token!r}")
        try:
            groups[-1][1].append(float(token))
        except ValueError:
            raise InputError(f"expected a number for feature {groups[-1][0]}, got {token!r}") from None
    names, values = [], []
    for name, vals in groups:
        if not vals:
            raise InputError(f"feature {name} has no value")
        names += [name] if len(vals) == 1 else [f"{name}_{i}" for i in range(1, len(vals) + 1)]
        values += vals
    return names, values


def parse_nbest(lines: Sequence[str], source: str = "<n-best>") -> NBest:
    """The n-best list of ``lines``, read by :mod:`evalpipe.nbest` (the reader ``evalpipe mbr`` uses too), with
    every line's features parsed; every line must have the features of the first, in the same order."""
    nbest: Optional[NBest] = None
    rows: Dict[int, List[List[float]]] = {}
    for segment in nbest_files.parse(lines, source):
        for entry in segment:
            try:
                names, values = parse_features(entry.features)
            except InputError as exc:
                raise InputError(str(exc), source, entry.line) from None
            if nbest is None:
                nbest = NBest(names)
            elif names != nbest.feature_names:
                raise InputError(f"expected the features {' '.join(nbest.feature_names)} (as on the first line), "
                                 f"got {' '.join(names)}", source, entry.line)
            if entry.segment not in rows:
                nbest.ids.append(entry.segment)
                rows[entry.segment], nbest.hypotheses[entry.segment] = [], []
            rows[entry.segment].append(values)
            nbest.hypotheses[entry.segment].append(entry.hypothesis)
    assert nbest is not None  # the reader refuses a list without lines
    nbest.features = {sid: np.array(r, dtype=np.float64) for sid, r in rows.items()}
    return nbest


def read_nbest(path: str) -> NBest:
    return parse_nbest(read_lines(path, allow_empty=True), path)


def format_line(sid: int, hypothesis: str, names: Sequence[str], values: Sequence[float]) -> str:
    """One n-best line (features as ``name= value``; the total left 0)."""
    feats = " ".join(f"{n}= {float(v)!r}" for n, v in zip(names, values))
    return f"{sid} ||| {hypothesis} ||| {feats} ||| 0"
