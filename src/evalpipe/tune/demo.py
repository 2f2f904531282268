"""The tuning demo: real WMT21 en-de system outputs as n-best lists (one hypothesis per system).

Features of a hypothesis (all from the hypotheses themselves, no model scores):

* ``LengthRatio``: log(hypothesis words / source words);
* ``Consensus``: mean sentence chrF (0-1) against the other systems' outputs of the same segment;
* ``sys_NAME``: 1 for the system that wrote it, 0 otherwise.

Segments 0-149 tune, 150-299 are held out (the shipped data, see ``demo/README.md``).
"""
from __future__ import annotations

import math
from importlib import resources
from typing import Dict, List, Tuple

from evalpipe.registry import load_metric
from evalpipe.tune.nbest import format_line


def demo_data() -> Tuple[List[str], List[str], Dict[str, List[str]]]:
    """(sources, references, {system: outputs}) of the shipped demo."""
    root = resources.files("evalpipe").joinpath("demo", "wmt21-ende")
    read = lambda p: p.read_text(encoding="utf-8").splitlines()  # noqa: E731
    systems = {p.name[:-3]: read(p) for p in sorted(root.joinpath("systems").iterdir(), key=lambda p: p.name)
               if p.name.endswith(".de")}
    return read(root.joinpath("src.en")), read(root.joinpath("ref.de")), systems


def demo_nbest_lines(sources: List[str], systems: Dict[str, List[str]]) -> List[str]:
    """The demo's n-best lines (Moses format), segment by segment, systems in name order."""
    chrf = load_metric("chrf")
    names = sorted(systems)
    pairs = [(systems[a][i], systems[b][i]) for i in range(len(sources)) for a in names for b in names if a != b]
    rows = chrf.corpus_stats([h for h, _ in pairs], [[r for _, r in pairs]])
    sentence = iter(chrf.score(row) / 100 for row in rows)
    lines = []
    for i, source in enumerate(sources):
        for name in names:
            consensus = sum(next(sentence) for _ in range(len(names) - 1)) / (len(names) - 1)
            hyp = systems[name][i]
            ratio = math.log(max(len(hyp.split()), 1) / max(len(source.split()), 1))
            values = [ratio, consensus] + [1.0 if n == name else 0.0 for n in names]
            lines.append(format_line(i, hyp, ["LengthRatio", "Consensus"] + [f"sys_{n}" for n in names], values))
    return lines
