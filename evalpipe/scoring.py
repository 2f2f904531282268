"""Corpus scoring of many systems (each with one or more optimizer runs) by many metrics.

Every metric's stats are extracted once per run; scores, bootstrap intervals, paired tests and
MultEval-style run statistics are all computed from those stats matrices
(:mod:`evalpipe.sufficient_stats.resample`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from evalpipe.engines import LocalEngine
from evalpipe.report import Result
from evalpipe.sufficient_stats import resample
from evalpipe.sufficient_stats.vectors import sum_stats


@dataclass
class System:
    """A named system: one hypothesis list per optimizer run (or, for the Spark engine, one
    :class:`evalpipe.spark_engine.TextFiles` per run, which Spark reads itself)."""

    name: str
    runs: List[Any]


@dataclass
class MetricSpec:
    """A metric to run: its display name, loader name, options and the loaded instance."""

    name: str
    options: Dict[str, Any]
    metric: Any


def extend_signature(signature: str, **extra: Any) -> str:
    """Insert ``key:value`` items after ``nrefs:...`` as sacrebleu orders them (bs, ar, seed)."""
    items = "|".join(f"{k}:{v}" for k, v in extra.items() if v is not None)
    if not items:
        return signature
    m = re.match(r"(nrefs:[^|]*)\|", signature)
    return f"{m.group(1)}|{items}|{signature[m.end():]}" if m else f"{signature}|{items}"


def score_systems(systems: Sequence[System], references: Sequence[Sequence[str]], metrics: Sequence[MetricSpec],
                  confidence: int = 0, paired: Optional[str] = None, trials: Optional[int] = None,
                  seed: Optional[int] = 12345, engine: Any = None,
                  progress: Callable[[int], None] = lambda n: None) -> Tuple[List[Result], Dict[str, Any]]:
    """Score every system with every metric; returns results and the test description.

    ``confidence``: bootstrap resamples for 95 % intervals (0: none).  ``paired``: ``"bs"``,
    ``"ar"`` or None, with the first system as baseline; systems with several runs use
    stratified AR.  ``trials`` defaults to sacrebleu's (1000 for bs, 10000 for ar).  ``engine``
    computes the stats (:mod:`evalpipe.engines`; local by default); when nothing is resampled
    only summed stats come back from it.
    """
    engine = engine or LocalEngine()
    multi_run = any(len(s.runs) > 1 for s in systems)
    if paired and len(systems) < 2:
        raise ValueError("a paired test needs at least two systems (the first is the baseline)")
    test_type = None
    if paired:
        test_type = "stratified-ar" if multi_run else paired
        trials = trials or (1000 if paired == "bs" else 10000)
    boot_n = confidence or (trials if paired == "bs" else 0) or (1000 if multi_run else 0)
    need_rows = bool(boot_n or paired)
    counts = masks = None

    matrices: Dict[Tuple[str, str], List[np.ndarray]] = {}
    boots: Dict[Tuple[str, str], List[np.ndarray]] = {}
    results: List[Result] = []
    for spec in metrics:
        score = spec.metric.score
        rows_score = resample.row_scorer(spec.metric)
        for s_index, system in enumerate(systems):
            mats, run_scores = [], []
            for hyps in system.runs:
                if need_rows:
                    rows = engine.rows(spec.metric, spec.name, spec.options, hyps, references)
                    run_scores.append(score(sum_stats(rows, spec.metric.num_stats)))
                    mats.append((rows, resample.as_matrix(rows)))
                else:
                    run_scores.append(score(engine.total(spec.metric, spec.name, spec.options, hyps, references)))
                progress(1)
            if need_rows and counts is None:
                n = len(mats[0][0])
                counts = resample.bootstrap_counts(n, boot_n, seed) if boot_n else None
                masks = resample.ar_masks(n, trials, seed) if test_type == "ar" else None
            matrices[(system.name, spec.name)] = [m for _, m in mats]
            result = Result(system=system.name, metric=spec.name, score=float(np.mean(run_scores)) if multi_run else run_scores[0],
                            signature=spec.metric.signature(), baseline=bool(paired) and s_index == 0,
                            runs=len(system.runs), run_scores=run_scores)
            if counts is not None and (confidence or paired == "bs" or multi_run):
                mine_boots = boots[(system.name, spec.name)] = [resample.bootstrap_scores(rows_score, m, counts)
                                                                for _, m in mats]
                if confidence or paired == "bs":
                    mean, low, high = resample.confidence_interval(mine_boots[0])
                    result.mean, result.ci = mean, [low, high]
                if multi_run:
                    result.sd_bootstrap = float(np.mean([b.std(ddof=1) for b in mine_boots]))
                    result.sd_runs = float(np.std(run_scores, ddof=1)) if len(run_scores) > 1 else 0.0
            if paired and s_index > 0:
                base = matrices[(systems[0].name, spec.name)]
                mine = matrices[(system.name, spec.name)]
                if test_type == "stratified-ar":
                    result.p_value = resample.stratified_approximate_randomization(score, rows_score, base, mine,
                                                                                   trials, seed)
                elif test_type == "ar":
                    result.p_value = resample.paired_approximate_randomization(score, rows_score, base[0], mine[0],
                                                                               masks)
                else:
                    base_result = next(r for r in results if r.system == systems[0].name and r.metric == spec.name)
                    result.p_value = resample.paired_bootstrap(
                        base_result.run_scores[0], run_scores[0], boots[(systems[0].name, spec.name)][0],
                        boots[(system.name, spec.name)][0])
            results.append(result)
    for r, spec in ((r, next(s for s in metrics if s.name == r.metric)) for r in results):
        extra: Dict[str, Any] = {}
        if paired == "bs" and not multi_run:
            extra = {"bs": trials, "seed": str(seed).lower()}
        elif paired:
            extra = {"ar": trials, "seed": str(seed).lower()}
        elif confidence:
            extra = {"bs": confidence, "seed": str(seed).lower()}
        r.signature = extend_signature(spec.metric.signature(), **extra)
    order = {s.name: i for i, s in enumerate(systems)}
    results.sort(key=lambda r: order[r.system])
    return results, {"type": test_type, "trials": trials if paired else (confidence or None), "seed": seed}


def sentence_scores(systems: Sequence[System], references: Sequence[Sequence[str]], metrics: Sequence[MetricSpec],
                    engine: Any = None) -> List[Dict[str, Any]]:
    """Per-segment scores: one record per system, run, metric and segment."""
    engine = engine or LocalEngine()
    out = []
    for system in systems:
        for run, hyps in enumerate(system.runs, 1):
            for spec in metrics:
                rows = engine.rows(spec.metric, spec.name, spec.options, hyps, references)
                for i, row in enumerate(rows, 1):
                    out.append({"system": system.name, "run": run, "metric": spec.name, "segment": i,
                                "score": spec.metric.segment_score(row)})
    return out
