"""The entry points of a group, read from installed distributions without importing ``importlib.metadata``.

Importing ``importlib.metadata`` costs 35-45 ms (it brings ``email``, ``zipfile``, ``csv``, ...): a
third of ``evalpipe serve bleu``'s start-up, which a tuner pays for every server it starts.  Reading
a group's entry points needs none of it.  This reads what ``importlib.metadata.entry_points(group=...)``
reads for distributions installed as folders on ``sys.path`` -- ``NAME-VERSION.dist-info/entry_points.txt``
and ``NAME[-...].egg-info/entry_points.txt``; the first distribution of a (normalized) name on
``sys.path`` wins, as there -- and hands anything else to ``importlib.metadata`` itself: a zip archive
on ``sys.path``, or a distribution finder on ``sys.meta_path`` other than the standard one.
``tests/test_registry.py`` checks both give the same entry points.

The file format (the packaging specification's ``entry_points.txt``): ``[group]`` sections of
``name = module:attr [extras]`` lines; ``#`` and ``;`` start comments.
"""
from __future__ import annotations

import importlib
import os
import re
import sys
from typing import Any, Dict, Iterator, NamedTuple, Tuple

_NAME = re.compile(r"[-_.]+")
_VALUE = re.compile(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$")


class EntryPoint(NamedTuple):
    """One entry point: its name, its ``module:attr`` value and its group."""

    name: str
    value: str
    group: str

    def load(self) -> Any:
        """The object the value names (``ImportError`` / ``AttributeError`` / ``ValueError`` as they come)."""
        match = _VALUE.match(self.value)
        if not match:
            raise ValueError(f"entry point {self.name!r}: expected module:attr, got {self.value!r}")
        obj = importlib.import_module(match["module"])
        for part in (match["attr"] or "").split(".") if match["attr"] else ():
            obj = getattr(obj, part)
        return obj


def entry_points(group: str) -> Dict[str, EntryPoint]:
    """The group's entry points by name (a later distribution's entry of the same name wins, as in a
    dict built from ``importlib.metadata.entry_points(group=group)``)."""
    if not _plain_path():
        from importlib.metadata import entry_points as standard

        return {ep.name: EntryPoint(ep.name, ep.value, group) for ep in standard(group=group)}
    found: Dict[str, EntryPoint] = {}
    for text in _entry_point_files():
        for section, name, value in _entries(text):
            if section == group:
                found[name] = EntryPoint(name, value, group)
    return found


def _plain_path() -> bool:
    """Whether every distribution is a folder on ``sys.path`` found by the standard finder."""
    from importlib.machinery import PathFinder

    if any(hasattr(f, "find_distributions") and f is not PathFinder for f in sys.meta_path):
        return False
    return not any(os.path.isfile(entry) for entry in sys.path if entry)


def _entry_point_files() -> Iterator[str]:
    """The text of each distribution's ``entry_points.txt``, the first distribution of a name only."""
    seen = set()
    for folder in sys.path:
        try:
            names = sorted(os.listdir(folder or "."))
        except OSError:
            continue
        for suffix in (".dist-info", ".egg-info"):  # importlib.metadata's order within a folder
            for entry in names:
                if not entry.endswith(suffix):
                    continue
                key = _NAME.sub("_", entry[:-len(suffix)].split("-")[0]).lower()
                path = os.path.join(folder, entry, "entry_points.txt")
                if key in seen or not os.path.isdir(os.path.join(folder, entry)):
                    continue
                seen.add(key)
                try:
                    with open(path, encoding="utf-8") as handle:
                        yield handle.read()
                except OSError:
                    continue


def _entries(text: str) -> Iterator[Tuple[str, str, str]]:
    """(section, name, value) of each ``name = value`` line."""
    section = ""
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
        elif "=" in line:
            name, _, value = line.partition("=")
            yield section, name.strip(), value.strip()
