"""Scoring every system of an EvalSet with an evalpipe metric, into MTME metric-score files."""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

from evalpipe.engines import LocalEngine
from evalpipe.meta.evalset import EvalSet
from evalpipe.sufficient_stats.vectors import sum_stats


def add_metric(evs: EvalSet, metric: Any, spec: str, options: Dict[str, Any], refs: List[str],
               name: Optional[str] = None, engine: Any = None, systems: Optional[List[str]] = None) -> Dict[str, str]:
    """Write ``metric-scores/LP/NAME-REFS.sys.score`` and ``.seg.score`` for every system output.

    Segment scores are the metric of each segment's own stats; system scores the metric of the
    summed stats (so system BLEU is corpus BLEU, not an average of sentence scores).  Returns the
    paths written.
    """
    for ref in refs:
        if ref not in evs.refs:
            raise ValueError(f"unknown reference {ref!r}; the set has {', '.join(sorted(evs.refs))}")
    engine = engine or LocalEngine()
    streams = [evs.refs[r] for r in refs]
    label = (name or spec).replace("-", "_").replace("*", "x").replace("+", "_")
    base = f"{label}-{'.'.join(refs) if len(refs) == 1 else 'all' if len(refs) == len(evs.refs) else '_'.join(refs)}"
    out_dir = os.path.join(evs.dir, "metric-scores", evs.lp)
    os.makedirs(out_dir, exist_ok=True)
    sys_lines, seg_lines = [], []
    for system in sorted(systems or evs.sys_outputs):
        if system in refs:
            continue  # a reference scored against itself says nothing
        rows = engine.rows(metric, spec, options, evs.sys_outputs[system], streams)
        sys_lines.append(f"{system}\t{metric.score(sum_stats(rows, metric.num_stats))!r}")
        seg_lines += [f"{system}\t{metric.segment_score(row)!r}" for row in rows]
    paths = {}
    for level, lines in (("sys", sys_lines), ("seg", seg_lines)):
        path = os.path.join(out_dir, f"{base}.{level}.score")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n")
        evs.add_metric_file(path)
        paths[level] = path
    return paths
