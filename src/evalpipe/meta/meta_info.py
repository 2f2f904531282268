"""A test set's standard choices (MTME's ``meta_info.MetaInfo``), read from ``meta-info.json``.

MTME keeps, per test set and language pair, the standard reference, the standard human score of each level,
the outlier systems, the primary metrics (base names) and the baselines in its source code
(``meta_info.DATA``).  evalpipe reads them from a JSON file beside the test set (``ROOT/NAME/meta-info.json``)
or named with ``--meta-info``::

    {"en-de": {"std_ref": "refC", "std_gold": {"sys": "mqm", "seg": "mqm"}, "outlier_systems": [],
               "primary_metrics": ["BLEU", "chrF"], "baseline_metrics": ["BLEU"]}}

Every key is optional; a key not listed here is refused.  A language pair the file does not list has no
standard choices: a task then names its ``gold`` and ``refs`` itself (or the set has one reference).
"""
from __future__ import annotations

import dataclasses
import json
import os
from typing import Dict, Optional, Set

from evalpipe.errors import InputError

FILE_NAME = "meta-info.json"


@dataclasses.dataclass
class MetaInfo:
    std_ref: Optional[str] = None
    std_gold: Dict[str, str] = dataclasses.field(default_factory=dict)
    outlier_systems: Set[str] = dataclasses.field(default_factory=set)
    primary_metrics: Set[str] = dataclasses.field(default_factory=set)
    baseline_metrics: Set[str] = dataclasses.field(default_factory=set)


KEYS = [f.name for f in dataclasses.fields(MetaInfo)]


def _names(value, key: str, where: str) -> Set[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(f"{key}: expected a list of names, got {value!r}", where)
    return set(value)


def parse_meta_info(doc, where: str) -> Dict[str, MetaInfo]:
    """``{language pair: MetaInfo}`` from the JSON document; ``where`` names the file in errors."""
    if not isinstance(doc, dict):
        raise InputError("expected a JSON object {LANGUAGE_PAIR: {std_ref, std_gold, ...}}", where)
    out = {}
    for lp, info in doc.items():
        if not isinstance(info, dict):
            raise InputError(f"{lp}: expected an object with keys among {', '.join(KEYS)}", where)
        unknown = sorted(set(info) - set(KEYS))
        if unknown:
            raise InputError(f"{lp}: unknown key {unknown[0]!r}; expected keys among {', '.join(KEYS)}", where)
        std_ref = info.get("std_ref")
        if std_ref is not None and not isinstance(std_ref, str):
            raise InputError(f"{lp}: std_ref: expected a reference name, got {std_ref!r}", where)
        gold = info.get("std_gold", {})
        if not isinstance(gold, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in gold.items()):
            raise InputError(f"{lp}: std_gold: expected {{LEVEL: HUMAN_SCORE_NAME}}, got {gold!r}", where)
        bad = sorted(set(gold) - {"sys", "domain", "doc", "seg"})
        if bad:
            raise InputError(f"{lp}: std_gold: unknown level {bad[0]!r}; expected sys, domain, doc or seg", where)
        out[lp] = MetaInfo(std_ref, dict(gold), _names(info.get("outlier_systems", []), "outlier_systems", where),
                           _names(info.get("primary_metrics", []), "primary_metrics", where),
                           _names(info.get("baseline_metrics", []), "baseline_metrics", where))
    return out


def read_meta_info(path: str) -> Dict[str, MetaInfo]:
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise InputError(f"cannot read it: {e.strerror}", path) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise InputError(f"not JSON: {e}", path) from None
    return parse_meta_info(doc, path)


def meta_info_for(test_dir: str, lp: str, given: Optional[Dict[str, MetaInfo]] = None) -> MetaInfo:
    """The language pair's standard choices: from ``given`` (``--meta-info``) when given, else the test set's own
    ``meta-info.json`` when it has one, else none."""
    if given is None:
        path = os.path.join(test_dir, FILE_NAME)
        given = read_meta_info(path) if os.path.exists(path) else {}
    return given.get(lp, MetaInfo())
