"""Reading a test set in the MT Metrics Eval (MTME) directory layout.

``ROOT/NAME/`` holds ``sources/SRC-TGT.txt``, optionally ``documents/SRC-TGT.docs`` (lines
``DOMAIN DOC``), ``references/SRC-TGT.REF.txt``, ``system-outputs/SRC-TGT/SYS.txt``,
``human-scores/SRC-TGT.SCORER.LEVEL.score`` and ``metric-scores/SRC-TGT/METRIC-REF.LEVEL.score``.
Texts may instead be JSON lines, as MTME reads them (``data._ReadFieldFromJsonl``): ``sources/SRC-TGT.jsonl``
(field ``source``), ``references/SRC-TGT.REF.jsonl`` (``target``), ``system-outputs/SRC-TGT/SYS.jsonl``
(``hypothesis``); a name found as both ``.txt`` and ``.jsonl`` is an error.  ``metadata/SRC-TGT/SYS.jsonl``, where
present, holds one JSON object per segment of that system (read on first use: :meth:`EvalSet.metadata`).
LEVEL is ``sys``, ``domain``, ``doc`` or ``seg``.  Score files have lines ``SYS SCORE`` (domain
files: ``DOMAIN SYS SCORE``); ``None`` marks a missing human score.  Every malformed line raises
:class:`EvalSetError` naming the file and line.  Without a documents file the set has one domain and
one document, both called ``all``.  Human score files are read when the set is opened; a metric's score
file when its scores are first asked for (a set may hold hundreds; a command reads the ones it uses).
"""
from __future__ import annotations

import glob
import itertools
import os
from typing import Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Set

from evalpipe.corpus import read_lines
from evalpipe.errors import InputError, UsageError

LEVELS = ("sys", "domain", "doc", "seg")


class EvalSetError(InputError):
    """A file of the evaluation set that does not have the expected form."""


TEXT_FIELDS = {"sources": "source", "references": "target", "system-outputs": "hypothesis"}


def read_json_objects(path: str) -> List[dict]:
    """One JSON object per line of ``path``; a line that is not one is an :class:`EvalSetError` naming it."""
    import json

    out = []
    for number, line in enumerate(read_lines(path, allow_empty=True), 1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise EvalSetError(f"{path}, line {number}: not JSON ({e.msg} at column {e.colno})") from None
        if not isinstance(record, dict):
            raise EvalSetError(f"{path}, line {number}: expected a JSON object, got {line[:40]!r}")
        out.append(record)
    return out


def read_jsonl_field(path: str, field: str) -> List[str]:
    """The ``field`` of every JSON line of ``path`` (a string each), else an :class:`EvalSetError` naming the line."""
    out = []
    for number, record in enumerate(read_json_objects(path), 1):
        if not isinstance(record.get(field), str):
            raise EvalSetError(f"{path}, line {number}: expected a JSON object with a string field {field!r}")
        out.append(record[field])
    return out


def _text_files(folder: str, prefix: str) -> Dict[str, str]:
    """``{name: path}`` of ``folder/PREFIXNAME.txt`` and ``.jsonl``; a name with both is an error."""
    found: Dict[str, str] = {}
    for ext in (".txt", ".jsonl"):
        for path in sorted(glob.glob(os.path.join(folder, f"{glob.escape(prefix)}*{ext}"))):
            name = os.path.basename(path)[len(prefix):-len(ext)]
            if name in found:
                raise EvalSetError(f"{folder}: {prefix}{name} is there as both .txt and .jsonl; keep one")
            found[name] = path
    return found


def read_texts(path: str, kind: str) -> List[str]:
    """Lines of a ``.txt`` file, or the field of ``kind`` (sources, references, system-outputs) of a ``.jsonl``."""
    return read_jsonl_field(path, TEXT_FIELDS[kind]) if path.endswith(".jsonl") else read_lines(path, allow_empty=True)


def read_score_file(path: str, domains: Optional[Sequence[str]] = None) -> Dict[str, List[Optional[float]]]:
    """``{system: [score or None, ...]}`` from an MTME score file (domain files need ``domains``)."""
    return parse_score_lines(read_lines(path, allow_empty=True), path, domains)


def parse_score_lines(lines: Sequence[str], path: str, domains: Optional[Sequence[str]] = None
                      ) -> Dict[str, List[Optional[float]]]:
    """Score lines (``SYS SCORE`` or ``DOMAIN SYS SCORE``); ``path`` names them in errors."""
    scores: Dict[str, List[Optional[float]]] = {}
    for number, line in enumerate(lines, 1):
        fields = line.split()
        expected = 3 if domains is not None else 2
        if len(fields) != expected:
            form = "DOMAIN SYSTEM SCORE" if domains is not None else "SYSTEM SCORE"
            raise EvalSetError(f"{path}, line {number}: expected {expected} fields ({form}), got {len(fields)}: {line!r}")
        try:
            score = None if fields[-1] == "None" else float(fields[-1])
        except ValueError:
            raise EvalSetError(f"{path}, line {number}: expected a number or None, got {fields[-1]!r}") from None
        if domains is None:
            scores.setdefault(fields[0], []).append(score)
        else:
            domain, system = fields[0], fields[1]
            if domain not in domains:
                raise EvalSetError(f"{path}, line {number}: unknown domain {domain!r}; expected one of {list(domains)}")
            scores.setdefault(system, [None] * len(domains))[list(domains).index(domain)] = score
    return scores


class ScoreFiles(Mapping):
    """``{scorer: {system: scores}}`` of one level: every name known up front, each file read and checked
    on first use (and kept)."""

    def __init__(self, read: Callable[[str], Dict[str, List[Optional[float]]]]) -> None:
        self._read, self._paths, self._scores = read, {}, {}  # type: ignore[var-annotated]

    def add(self, scorer: str, path: str) -> None:
        self._paths[scorer] = path
        self._scores.pop(scorer, None)  # a file written again is read again

    def __getitem__(self, scorer: str) -> Dict[str, List[Optional[float]]]:
        if scorer not in self._scores:
            self._scores[scorer] = self._read(self._paths[scorer])
        return self._scores[scorer]

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def __len__(self) -> int:
        return len(self._paths)


class EvalSet:
    """One language pair of an MTME test set: texts, documents, domains, human and metric scores."""

    def __init__(self, root: str, name: str, lp: str) -> None:
        self.root, self.name, self.lp = root, name, lp
        self.dir = os.path.join(root, name)
        if not os.path.isdir(self.dir):
            raise EvalSetError(f"no test set {name!r} under {root}")
        sources = _text_files(os.path.join(self.dir, "sources"), "")
        if lp not in sources:
            raise EvalSetError(f"no language pair {lp!r} in {self.dir}; found {sorted(sources)}")
        self.src = read_texts(sources[lp], "sources")
        n = len(self.src)
        doc_file = os.path.join(self.dir, "documents", f"{lp}.docs")
        if os.path.exists(doc_file):
            rows = []
            for number, line in enumerate(read_lines(doc_file, allow_empty=True), 1):
                fields = line.split()
                if len(fields) != 2:
                    raise EvalSetError(f"{doc_file}, line {number}: expected DOMAIN DOC, got {line!r}")
                rows.append(fields)
            if len(rows) != n:
                raise EvalSetError(f"{doc_file} has {len(rows)} lines, the source has {n}")
        else:
            rows = [["all", "all"]] * n
        self.domain_per_seg = [r[0] for r in rows]
        self.doc_per_seg = [r[1] for r in rows]
        self.domains = sorted(set(self.domain_per_seg))
        self.docs = [k for k, _ in itertools.groupby(self.doc_per_seg)]
        if len(self.docs) != len(set(self.docs)):
            raise EvalSetError(f"{doc_file}: the segments of each document must be contiguous")
        self.refs: Dict[str, List[str]] = {}
        for ref, path in sorted(_text_files(os.path.join(self.dir, "references"), f"{lp}.").items()):
            self.refs[ref] = self._aligned(path, read_texts(path, "references"))
        self.sys_outputs: Dict[str, List[str]] = {}
        for system, path in sorted(_text_files(os.path.join(self.dir, "system-outputs", lp), "").items()):
            self.sys_outputs[system] = self._aligned(path, read_texts(path, "system-outputs"))
        self._metadata: Dict[str, List[dict]] = {}
        self.scores: Dict[str, ScoreFiles] = {
            lv: ScoreFiles(lambda path, lv=lv: self._checked(
                read_score_file(path, self.domains if lv == "domain" else None), lv, path)) for lv in LEVELS}
        self.human_score_names = {self._add_score_file(path, os.path.basename(path)[len(lp) + 1:-6]) for path in
                                  sorted(glob.glob(os.path.join(self.dir, "human-scores", f"{lp}.*.score")))}
        self.metric_names: Set[str] = set()
        for path in sorted(glob.glob(os.path.join(self.dir, "metric-scores", lp, "*.score"))):
            self.add_metric_file(path)

    def _add_score_file(self, path: str, stem: str, now: bool = True) -> str:
        """Register ``path``, named ``SCORER.LEVEL`` by ``stem`` (read now, or on first use); return the scorer."""
        scorer, dot, level = stem.rpartition(".")
        if not dot or level not in LEVELS:
            raise EvalSetError(f"{path}: expected a name ending in .LEVEL.score with LEVEL one of {', '.join(LEVELS)}")
        self.scores[level].add(scorer, path)
        if now:
            self.scores[level].get(scorer)  # reads and checks it
        return scorer

    def metadata(self, system: str) -> List[dict]:
        """``metadata/LP/SYSTEM.jsonl``: one JSON object per segment (MTME's ``EvalSet.metadata``)."""
        if system not in self._metadata:
            path = os.path.join(self.dir, "metadata", self.lp, f"{system}.jsonl")
            if not os.path.exists(path):
                have = sorted(os.path.basename(p)[:-6] for p in
                              glob.glob(os.path.join(self.dir, "metadata", self.lp, "*.jsonl")))
                raise EvalSetError(f"no metadata for system {system!r} in {self.dir} {self.lp}; found: "
                                   f"{', '.join(have) or 'none'}")
            self._metadata[system] = self._aligned(path, read_json_objects(path))
        return self._metadata[system]

    def _aligned(self, path: str, lines: list) -> list:
        """``lines`` read from ``path``, one per segment (else an error naming the file)."""
        if len(lines) != len(self.src):
            raise EvalSetError(f"{path} has {len(lines)} lines, the source has {len(self.src)}")
        return lines

    def level_size(self, level: str) -> int:
        return {"sys": 1, "domain": len(self.domains), "doc": len(self.docs), "seg": len(self.src)}[level]

    def _checked(self, scores, level: str, path: str):
        size = self.level_size(level)
        for system, values in scores.items():
            if len(values) != size:
                raise EvalSetError(f"{path}: system {system!r} has {len(values)} {level} scores, expected {size}")
        return scores

    def add_metric_file(self, path: str) -> str:
        """Register ``METRIC-REF.LEVEL.score`` (read on first use) and return the metric name."""
        metric = self._add_score_file(path, os.path.basename(path)[:-6], now=False)
        self.metric_names.add(metric)
        return metric

    def Scores(self, level: str, scorer: str) -> Optional[Dict[str, List[Optional[float]]]]:  # noqa: N802 (MTME's name)
        """``{system: scores}`` of a human scorer or metric at a level, or None when absent."""
        if level not in LEVELS:
            raise UsageError(f"expected a level among {', '.join(LEVELS)}, got {level!r}")
        return self.scores[level].get(scorer)

    def human_sys_names(self, scorer: str, level: str = "sys") -> List[str]:
        """Systems with at least one non-None human score at a level, sorted."""
        scores = self.Scores(level, scorer) or {}
        return sorted(s for s, v in scores.items() if any(x is not None for x in v))


def list_sets(root: str) -> Dict[str, List[str]]:
    """``{test set: [language pairs]}`` under ``root``."""
    out = {}
    for d in sorted(glob.glob(os.path.join(root, "*", "sources"))):
        name = os.path.basename(os.path.dirname(d))
        out[name] = sorted(_text_files(d, ""))
    return out
