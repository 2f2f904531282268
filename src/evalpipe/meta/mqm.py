"""MQM scores from MQM ratings, as MTME's ``converters/score_mqm.py`` computes them (commit 68a481ae).

A ratings TSV (Google's MQM release layout: ``system doc doc_id seg_id rater source target category severity
comment``; one row per error, or one ``No-error`` row per error-free segment) becomes one score per
(system, doc, doc_id):

* each error weighs the most specific entry of the weights that matches ``severity[/category[/subcategory]]``
  (lower-cased; MTME's default ``Major:5 Minor:1 Neutral:0 Major/Non-translation!:25
  Minor/Fluency/Punctuation:0.1``; no match: 0 -- so ``No-error`` rows weigh 0);
* a rater's score of a segment is the sum of its errors' weights; the segment's score is the mean over its
  raters, negated (higher is better, as in MTME's files);
* the segments of a (system, doc) must be contiguous (MTME's ``force_contiguous``): a gap is an error.

:func:`write_human_scores` lays them out as a test set's ``human-scores/LP.NAME.seg.score`` (each system's
segments in the test set's order, found by document and position within it from ``documents/LP.docs``;
``None`` where a system's segment has no rating) and ``.sys.score`` (the mean over a system's rated segments, as
MTME's published system MQM).  Google's later ``Unbabel`` variant of the layout is not read.
"""
from __future__ import annotations

import csv
import os
from collections import defaultdict
from typing import Dict, List, Mapping, Optional, Tuple

from evalpipe.corpus import refuse_overwrite, write_atomically
from evalpipe.errors import InputError, UsageError
from evalpipe.meta.evalset import EvalSet

DEFAULT_WEIGHTS = "Major:5 Minor:1 Neutral:0 Major/Non-translation!:25 Minor/Fluency/Punctuation:0.1"
COLUMNS = ("system", "doc", "doc_id", "rater", "category", "severity")
#: severities a rating may carry beyond those the weights name (they weigh 0 unless the weights say otherwise)
SEVERITIES = {"major", "minor", "neutral", "no-error"}

Key = Tuple[str, str, int]  # (system, doc, doc_id)


def parse_weights(spec: str) -> Dict[str, float]:
    """``"severity[/category[/subcategory]]:weight ..."`` as a dict keyed by the lower-cased path."""
    weights = {}
    for item in spec.split():
        path, colon, value = item.rpartition(":")
        try:
            weights[path.lower()] = float(value)
        except ValueError:
            raise UsageError(f"--weights: expected SEVERITY[/CATEGORY...]:WEIGHT items, got {item!r}") from None
        if not colon or not path:
            raise UsageError(f"--weights: expected SEVERITY[/CATEGORY...]:WEIGHT items, got {item!r}")
    return weights


def error_weight(weights: Mapping[str, float], severity: str, category: str) -> float:
    """The weight of the most specific entry matching ``severity/category`` (the integer 0 when none does, as
    score_mqm.py's: a rater score of only unmatched rows prints as ``0``)."""
    items = [x.lower() for x in [severity] + category.split("/")]
    while items:
        if "/".join(items) in weights:
            return weights["/".join(items)]
        items = items[:-1]
    return 0


def score_ratings(path: str, weights: Mapping[str, float]) -> Dict[Key, Tuple[float, Dict[str, float]]]:
    """``{(system, doc, doc_id): (segment score, {rater: rater score})}`` of a ratings TSV, in the file's order
    of systems and documents and doc_id order within each."""
    per: Dict[str, Dict[str, Dict[int, Dict[str, List[float]]]]] = {}
    known = {k.split("/")[0] for k in weights} | SEVERITIES
    try:
        handle = open(path, encoding="utf-8", newline="")
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    with handle:
        reader = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(f"expected the columns {', '.join(COLUMNS)} of an MQM ratings TSV; missing "
                             f"{', '.join(missing)}", path, 1)
        for number, row in enumerate(reader, 2):
            if None in row.values() or None in row:
                raise InputError(f"expected {len(reader.fieldnames)} tab-separated fields, got another count",
                                 path, number)
            try:
                doc_id = int(row["doc_id"])
            except ValueError:
                raise InputError(f"expected doc_id to be an integer, got {row['doc_id']!r}", path, number) from None
            if row["severity"].lower() not in known:
                raise InputError(f"unknown severity {row['severity']!r}; expected one of "
                                 f"{', '.join(sorted(known))} (or give it a weight with --weights)", path, number)
            weight = error_weight(weights, row["severity"], row["category"])
            raters = per.setdefault(row["system"], {}).setdefault(row["doc"], {}).setdefault(doc_id, defaultdict(list))
            raters[row["rater"]].append(weight)
    out: Dict[Key, Tuple[float, Dict[str, float]]] = {}
    for system, docs in per.items():
        for doc, segments in docs.items():
            ids = sorted(segments)
            if ids != list(range(ids[0], ids[-1] + 1)):
                gap = next(i for i, j in zip(ids, ids[1:]) if j != i + 1)
                raise InputError(f"non-contiguous segments for {system}/{doc}: doc_id {gap} is followed by "
                                 f"{ids[ids.index(gap) + 1]} (MTME's score_mqm.py refuses them too)", path)
            for doc_id in ids:
                rater_scores = {rater: sum(values) for rater, values in segments[doc_id].items()}
                out[(system, doc, doc_id)] = (-1 * (sum(rater_scores.values()) / len(rater_scores)), rater_scores)
    return out


def write_human_scores(evs: EvalSet, scores: Mapping[Key, Tuple[float, Dict[str, float]]], name: str = "mqm",
                       rename: Optional[Mapping[str, str]] = None, force: bool = False) -> Dict[str, str]:
    """Write ``human-scores/LP.NAME.seg.score`` and ``.sys.score`` of ``evs`` from :func:`score_ratings`'s scores;
    returns the paths.  ``rename`` maps a ratings system name to the test set's (``ref`` -> ``refA``)."""
    rename = dict(rename or {})
    position: Dict[Tuple[str, int], int] = {}
    counts: Dict[str, int] = defaultdict(int)
    for line, doc in enumerate(evs.doc_per_seg):
        counts[doc] += 1
        position[(doc, counts[doc])] = line
    systems = sorted(set(evs.sys_outputs))
    seg: Dict[str, List[Optional[float]]] = {}
    for (system, doc, doc_id), (value, _) in scores.items():
        target = rename.get(system, system)
        if target not in evs.sys_outputs:
            raise InputError(f"the ratings name the system {system!r}, which {evs.name} {evs.lp} does not have "
                             f"(systems: {', '.join(systems)}; --rename {system}=NAME maps it)")
        line = position.get((doc, doc_id))
        if line is None:
            raise InputError(f"the ratings name segment {doc_id} of document {doc!r}, which {evs.name} {evs.lp} "
                             f"does not have (its documents/{evs.lp}.docs)")
        seg.setdefault(target, [None] * len(evs.src))[line] = value
    if not seg:
        raise InputError("the ratings hold no segments")
    folder = os.path.join(evs.dir, "human-scores")
    refuse_overwrite([os.path.join(folder, f"{evs.lp}.{name}.{level}.score") for level in ("seg", "sys")], force)
    os.makedirs(folder, exist_ok=True)
    seg_lines, sys_lines = [], []
    for system in sorted(seg):
        values = seg[system]
        seg_lines += [f"{system}\t{v}" for v in values]
        rated = [v for v in values if v is not None]
        sys_lines.append(f"{system}\t{sum(rated) / len(rated)}")
    paths = {}
    for level, lines in (("seg", seg_lines), ("sys", sys_lines)):
        path = os.path.join(folder, f"{evs.lp}.{name}.{level}.score")
        write_atomically(path, "\n".join(lines) + "\n")
        paths[level] = path
    return paths
