"""Scoring many systems (each with one or more optimizer runs) by many metrics: the stats table
once (:func:`~evalpipe.scoring.stats_tables.stats_table`), then the analyses the caller asked for
(:mod:`~evalpipe.scoring.analyses`), assembled into :class:`~evalpipe.scoring.results.Result` records.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from evalpipe.engines import Engine
from evalpipe.engines.local import LocalEngine
from evalpipe.errors import UsageError
from evalpipe.scoring import analyses as A
from evalpipe.scoring.results import Result
from evalpipe.scoring.stats_tables import RunStats, System, stats_table
from evalpipe.sufficient_stats import resample


def _test_plan(systems: Sequence[System], paired: Optional[str], trials: Optional[int], confidence: int):
    multi_run = any(len(s.runs) > 1 for s in systems)
    if paired and len(systems) < 2:
        raise UsageError("a paired test needs at least two systems (the first is the baseline)")
    test_type = ("stratified-ar" if multi_run else paired) if paired else None
    if paired:
        trials = trials or (1000 if paired == "bs" else 10000)
    boot_n = confidence or (trials if paired == "bs" else 0) or (1000 if multi_run else 0)
    return multi_run, test_type, trials, boot_n


def _nrefs(runs: List[RunStats]) -> Any:
    counts = {r.nrefs for r in runs}
    return counts.pop() if len(counts) == 1 else -1


def score_systems(systems: Sequence[System], specs: Sequence[Any], confidence: int = 0, paired: Optional[str] = None,
                  trials: Optional[int] = None, seed: Optional[int] = 12345, engine: Optional[Engine] = None,
                  progress: Callable[[int], None] = lambda n: None) -> Tuple[List[Result], Dict[str, Any]]:
    """Score every system with every metric spec; returns results and the test description.

    ``confidence``: bootstrap resamples for 95 % intervals (0: none).  ``paired``: ``"bs"``, ``"ar"``
    or None, with the first system as baseline; systems with several runs use stratified AR.
    ``trials`` defaults to sacrebleu's (1000 for bs, 10000 for ar).  When nothing is resampled only
    summed stats come back from the engine.
    """
    multi_run, test_type, trials, boot_n = _test_plan(systems, paired, trials, confidence)
    table = stats_table(systems, specs, engine or LocalEngine(), bool(boot_n or paired), progress)
    n = len(next(iter(table.values()))[0].rows or []) if table else 0
    counts = resample.bootstrap_counts(n, boot_n, seed) if boot_n and n else None
    masks = resample.ar_masks(n, trials, seed) if test_type == "ar" else None
    extra: Dict[str, Any] = {}
    if paired == "bs" and not multi_run:
        extra = {"bs": trials, "seed": str(seed).lower()}
    elif paired:
        extra = {"ar": trials, "seed": str(seed).lower()}
    elif confidence:
        extra = {"bs": confidence, "seed": str(seed).lower()}
    results: List[Result] = []
    all_boots: Dict[Tuple[str, str], List[np.ndarray]] = {}
    for system_index, system in enumerate(systems):
        for spec in specs:
            metric, runs = spec.build(), table[(system.name, spec.name)]
            run_scores = [A.corpus_score(metric, r) for r in runs]
            result = Result(system=system.name, metric=spec.name,
                            score=float(np.mean(run_scores)) if multi_run else run_scores[0],
                            signature=A.extend_signature(metric.signature(_nrefs(runs)), **extra),
                            baseline=bool(paired) and system_index == 0, runs=len(runs), run_scores=run_scores)
            boots = all_boots[(system.name, spec.name)] = \
                [A.bootstrap_scores(metric, r, counts) for r in runs] if counts is not None else []
            if boots and (confidence or paired == "bs"):
                result.mean, result.ci = A.confidence_interval(boots[0])
            if boots and multi_run:
                stats = A.run_statistics(run_scores, boots)
                result.sd_runs, result.sd_bootstrap = stats["sd_runs"], stats["sd_bootstrap"]
            if paired and system_index > 0:
                base = table[(systems[0].name, spec.name)]
                if test_type == "stratified-ar":
                    result.p_value = A.stratified_ar(metric, base, runs, trials, seed)
                elif test_type == "ar":
                    result.p_value = A.paired_ar(metric, base[0], runs[0], masks)
                else:
                    result.p_value = A.paired_bootstrap(A.corpus_score(metric, base[0]), run_scores[0],
                                                        all_boots[(systems[0].name, spec.name)][0], boots[0])
            results.append(result)
    return results, {"type": test_type, "trials": trials if paired else (confidence or None), "seed": seed}


def sentence_scores(systems: Sequence[System], specs: Sequence[Any], engine: Optional[Engine] = None
                    ) -> List[Dict[str, Any]]:
    """Per-segment scores: one record per system, run, metric and segment."""
    table = stats_table(systems, specs, engine or LocalEngine(), True)
    out = []
    for system in systems:
        for run in range(len(system.runs)):
            for spec in specs:
                scores = A.segment_scores(spec.build(), table[(system.name, spec.name)][run])
                out += [{"system": system.name, "run": run + 1, "metric": spec.name, "segment": i, "score": s}
                        for i, s in enumerate(scores, 1)]
    return out
