"""Scoring every system of an EvalSet with an evalpipe metric, into MTME metric-score files.

MTME's files are higher-is-better, as WMT's are (MTME ranks and correlates them as they are): the scores of a
lower-is-better metric (TER, WER, MetricX, segment scores declared ``direction=lower``) are written negated, and
the command says so on stderr.  Each function returns ``{level: path}`` and whether the scores were negated."""
from __future__ import annotations

import os
from typing import Dict, List, Optional

from evalpipe.corpus import refuse_overwrite, write_atomically
from evalpipe.engines import Engine, Job
from evalpipe.engines.local import LocalEngine
from evalpipe.errors import UsageError
from evalpipe.inputs import TextPairs
from evalpipe.meta.evalset import EvalSet
from evalpipe.registry import MetricSpec
from evalpipe.sufficient_stats.vectors import sum_stats


def _base(evs: EvalSet, label: str, refs: List[str]) -> str:
    label = label.replace("-", "_").replace("*", "x").replace("+", "_")
    return f"{label}-{'.'.join(refs) if len(refs) == 1 else 'all' if len(refs) == len(evs.refs) else '_'.join(refs)}"


def _stored(metric, value: Optional[float]) -> str:
    """A score as MTME's files hold it: higher is better (a lower-is-better metric's negated; None kept)."""
    if value is None:
        return "None"
    return repr(float(value) if metric.higher_is_better else 0.0 - float(value))


def negated(metric) -> bool:
    """Whether ``metric``'s scores are written negated into MTME's files (it is lower-is-better)."""
    return not metric.higher_is_better


def _paths(evs: EvalSet, base: str, force: bool) -> Dict[str, str]:
    """``{level: path}`` of the files a metric named ``base`` is written to; an existing one is refused unless
    ``force`` (checked before anything is computed or written)."""
    out_dir = os.path.join(evs.dir, "metric-scores", evs.lp)
    paths = {level: os.path.join(out_dir, f"{base}.{level}.score") for level in ("sys", "seg")}
    refuse_overwrite(list(paths.values()), force)
    return paths


def _write(evs: EvalSet, base: str, sys_lines: List[str], seg_lines: List[str]) -> Dict[str, str]:
    out_dir = os.path.join(evs.dir, "metric-scores", evs.lp)
    os.makedirs(out_dir, exist_ok=True)
    paths = {}
    for level, lines in (("sys", sys_lines), ("seg", seg_lines)):
        path = os.path.join(out_dir, f"{base}.{level}.score")
        write_atomically(path, "\n".join(lines) + "\n")
        evs.add_metric_file(path)
        paths[level] = path
    return paths


def add_segment_scores(evs: EvalSet, label: str, files: List[str], refs: List[str], fmt: str = "auto",
                       field: Optional[str] = None, force: bool = False, direction: str = "auto") -> Dict[str, str]:
    """Write ``metric-scores/LP/LABEL-REFS.sys.score`` and ``.seg.score`` from segment scores computed elsewhere
    (:mod:`evalpipe.score_files`: comet-score's output, one file a system, ...) for every system output but the
    references scored against: segment lines as read (``None`` kept), system scores their mean over the scored
    segments (the ``segment_scores`` metric).  A system of the test set missing from the files is an error."""
    from evalpipe.registry import ScoresSpec
    from evalpipe.score_files import scores_for_systems

    for ref in refs:
        if ref not in evs.refs:
            raise UsageError(f"unknown reference {ref!r}; the set has {', '.join(sorted(evs.refs))}")
    _paths(evs, _base(evs, label, refs), force)
    systems = [s for s in sorted(evs.sys_outputs) if s not in refs]
    segments = len(next(iter(evs.sys_outputs.values())))
    table = scores_for_systems(label, files, systems, segments, fmt, field)
    metric = ScoresSpec.of(label, {"direction": direction}).build()
    sys_lines, seg_lines = [], []
    for system in systems:
        rows = metric.corpus_stats(table[system], [])
        sys_lines.append(f"{system}\t{_stored(metric, metric.score(sum_stats(rows, metric.num_stats)))}")
        seg_lines += [f"{system}\t{_stored(metric, v)}" for v in table[system]]
    return _write(evs, _base(evs, label, refs), sys_lines, seg_lines)


def add_metric(evs: EvalSet, spec: MetricSpec, refs: List[str], name: Optional[str] = None,
               engine: Optional[Engine] = None, systems: Optional[List[str]] = None, force: bool = False
               ) -> Dict[str, str]:
    """Write ``metric-scores/LP/NAME-REFS.sys.score`` and ``.seg.score`` for every system output.

    Segment scores are the metric of each segment's own stats; system scores the metric of the
    summed stats (so system BLEU is corpus BLEU, not an average of sentence scores).  A metric that runs a model on
    the source (COMET) reads the test set's ``sources/LP.txt`` and runs in this process (``NAME-src`` files for one
    without references).  Returns the paths written.
    """
    for ref in refs:
        if ref not in evs.refs:
            raise UsageError(f"unknown reference {ref!r}; the set has {', '.join(sorted(evs.refs))}")
    engine, metric = engine or LocalEngine(), spec.build()
    streams = [evs.refs[r] for r in refs]
    base = _base(evs, name or spec.name, refs)
    if getattr(metric, "reads_source", False):  # a COMET model: the test set's sources first, in this process
        engine = LocalEngine()
        if metric.uses_reference:
            if len(refs) != 1:
                raise UsageError(f"{spec.name} reads one reference; give one -r (got {', '.join(refs)})")
            streams = [evs.src, *streams]
        else:
            streams, base = [evs.src], _base(evs, name or spec.name, ["src"])  # MTME names QE metrics NAME-src
    _paths(evs, base, force)
    sys_lines, seg_lines = [], []
    for system in sorted(systems or evs.sys_outputs):
        if system in refs:
            continue  # a reference scored against itself says nothing
        rows = engine.rows(Job(spec, TextPairs(evs.sys_outputs[system], streams, system)))
        sys_lines.append(f"{system}\t{_stored(metric, metric.score(sum_stats(rows, metric.num_stats)))}")
        seg_lines += [f"{system}\t{_stored(metric, metric.score(row))}" for row in rows]
    return _write(evs, base, sys_lines, seg_lines)
