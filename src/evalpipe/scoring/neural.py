"""Metrics that run a model over the source, hypothesis and reference (COMET: ``reads_source``), in score-corpus.

They are scored here, in this process (torch uses every core; a GPU when there is one), before the statistics
pipeline: segments are taken a chunk at a time across every system, so each source and reference sentence is
encoded once for all systems and memory is bounded by the chunk.  Each system then carries the scores as a
precomputed metric (``System.scores``, a :class:`~evalpipe.registry.ScoresSpec` whose signature is the model's), so
intervals, paired tests, all pairs, the t-test, sentence-level output and reports treat them as any metric.
"""
from __future__ import annotations

import logging
import time
from typing import Any, List, Optional, Sequence

from evalpipe.errors import UsageError
from evalpipe.inputs import ScorePairs, TextFiles
from evalpipe.registry import ScoresSpec

#: segments per chunk (every system's rows of a chunk go to the model together)
CHUNK = 4096

log = logging.getLogger("evalpipe.neural")


def reads_source(spec: Any) -> bool:
    """Whether the metric of ``spec`` is scored by a model here (it reads the source)."""
    return not isinstance(spec, ScoresSpec) and getattr(spec.build(), "reads_source", False)


def attach_model_scores(systems: Sequence[Any], specs: Sequence[Any], sources: Optional[List[str]],
                        source_path: str = "--source") -> List[Any]:
    """``specs`` with every model metric replaced by the scores it gave, attached to each system."""
    out = []
    for spec in specs:
        if not reads_source(spec):
            out.append(spec)
            continue
        metric = spec.build()
        if sources is None:
            raise UsageError(f"-m {spec.name} reads the source of each segment: give it with --source FILE")
        texts = []
        for system in systems:
            if len(system.runs) != 1:
                raise UsageError(f"-m {spec.name}: a system of several runs ({system.name}); give one file a system")
            data = system.runs[0]
            texts.append(data.read() if isinstance(data, TextFiles) else data)
        n = len(sources)
        for system, data in zip(systems, texts):
            if len(data) != n:
                raise UsageError(f"--source {source_path} has {n} lines and {system.name} has {len(data)}")
        refs = None
        if metric.uses_reference:
            if len(texts[0].references) != 1:
                raise UsageError(f"-m {spec.name}: the model reads one reference; give one -r "
                                 f"(got {len(texts[0].references)})")
            refs = texts[0].references[0]
        scores: List[List[float]] = [[] for _ in systems]
        cut = [0] * len(systems)  # inputs the model cut at its length limit, per system (metrics that say so)
        windowed = [0] * len(systems)  # and inputs it scored in sentence windows (on_long=window)
        start, spent = time.perf_counter(), dict(metric.model.timings)
        for lo in range(0, n, CHUNK):
            hi = min(n, lo + CHUNK)
            rows_src = sources[lo:hi] * len(systems)
            rows_ref = None if refs is None else refs[lo:hi] * len(systems)
            rows_hyp = [h for data in texts for h in data.hypotheses[lo:hi]]
            got = metric.score_rows(rows_src, rows_hyp, rows_ref).tolist()
            flags = getattr(metric, "last_cut", None) or []
            windows = getattr(metric, "last_windowed", None) or []
            for k in range(len(systems)):
                scores[k] += got[k * (hi - lo):(k + 1) * (hi - lo)]
                cut[k] += sum(flags[k * (hi - lo):(k + 1) * (hi - lo)])
                windowed[k] += sum(windows[k * (hi - lo):(k + 1) * (hi - lo)])
        took = time.perf_counter() - start
        parts = {k: v - spent[k] for k, v in metric.model.timings.items()}
        log.debug("%s: %d rows in %.2f s: tokenization %.2f s, encoder %.2f s, estimator %.2f s, the rest %.2f s",
                  spec.name, n * len(systems), took, parts["tokenize"], parts["encode"], parts["estimate"],
                  took - sum(parts.values()))
        for system, values, count, split in zip(systems, scores, cut, windowed):
            system.scores[spec.name] = ScorePairs(values, [], system.name)
            said = [f"{split} of {n} segments scored in sentence windows"] if split else []
            if count:
                said.append(f"{count} of {n} segments cut at the model's {metric.max_length}-token input limit")
            if said:
                system.notes[spec.name] = "; ".join(said)
                log.warning("%s on %s: %s", spec.name, system.name, system.notes[spec.name])
        direction = "higher" if metric.higher_is_better else "lower"  # (MetricX: lower is better)
        out.append(ScoresSpec.of(spec.name, {"direction": direction}, origin=metric.signature(1 if refs else 0)))
    return out
