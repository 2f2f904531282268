"""Scoring many systems (each with one or more optimizer runs) by many metrics, as a pipeline.

1. :func:`stats_table`: every system x metric x run through an engine, once -- exact totals, and
   the per-segment rows when an analysis resamples segments;
2. analyses, each a function over those matrices: the corpus score (metric of the summed stats),
   bootstrap intervals, the paired bootstrap, paired and stratified approximate randomization
   (:mod:`evalpipe.sufficient_stats.resample`, sacrebleu's and MultEval's definitions),
   :func:`run_statistics` and :func:`sentence_scores`;
3. :func:`score_systems` assembles them into :class:`~evalpipe.scoring.results.Result` records.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from evalpipe.engines import Engine, Job
from evalpipe.engines.local import LocalEngine
from evalpipe.errors import Unscorable, UsageError
from evalpipe.inputs import Input
from evalpipe.registry import ScoresSpec
from evalpipe.scoring.results import Result
from evalpipe.sufficient_stats.combine import BundleSpec
from evalpipe.sufficient_stats import resample
from evalpipe.sufficient_stats.vectors import sum_stats


@dataclass
class System:
    """A named system: one input per optimizer run; ``scores``: the input of each precomputed metric
    (:class:`~evalpipe.registry.ScoresSpec` name -> its segment scores, one run)."""

    name: str
    runs: List[Input]
    scores: Dict[str, Input] = field(default_factory=dict)
    #: what a user must know about a metric's scores of this system (a model that cut inputs), by metric name
    notes: Dict[str, str] = field(default_factory=dict)


@dataclass
class RunStats:
    """One run scored by one metric: exact totals, per-segment rows (or None), reference count."""

    total: List[Any]
    rows: Optional[List[list]]
    nrefs: int
    width: int

    @cached_property
    def matrix(self) -> np.ndarray:
        return np.asarray(self.rows, dtype=np.float64).reshape(-1, self.width)


def stats_table(systems: Sequence[System], specs: Sequence[Any], engine: Engine, with_rows: bool,
                progress: Callable[[int], None] = lambda n: None) -> Dict[Tuple[str, str], List[RunStats]]:
    """``{(system, metric): [RunStats per run]}``; ``with_rows`` keeps the per-segment rows.

    Every metric is computed in one pass over each run (one :class:`~evalpipe.sufficient_stats.combine.
    BundleSpec` job: an input is read and split once for all of them), and every run's job goes to the
    engine at once, so a pool keeps all its workers busy across systems."""
    given = [spec for spec in specs if not isinstance(spec, ScoresSpec)]
    table: Dict[Tuple[str, str], List[RunStats]] = {}
    if given:
        bundle_spec = BundleSpec(tuple(given))
        bundle = bundle_spec.build()
        runs = [data for system in systems for data in system.runs]
        found = engine.run([Job(bundle_spec, data) for data in runs], with_rows, lambda i: progress(len(given)))
        index = 0
        for system in systems:
            for data in system.runs:
                rows = found[index] if with_rows else None
                total = sum_stats(rows, bundle.num_stats) if with_rows else found[index]
                for spec, sl in zip(given, bundle.slices):
                    part = [row[sl] for row in rows] if with_rows else None
                    table.setdefault((system.name, spec.name), []).append(
                        RunStats(total[sl], part, data.nrefs, sl.stop - sl.start))
                index += 1
    for spec in specs:  # segment scores computed elsewhere: their rows are the numbers, here
        if isinstance(spec, ScoresSpec):
            metric = spec.build()
            for system in systems:
                data = system.scores[spec.name]
                rows = data.rows(metric)
                table[(system.name, spec.name)] = [RunStats(sum_stats(rows, metric.num_stats),
                                                            rows if with_rows else None, 0, metric.num_stats)]
    return table


def run_statistics(run_scores: List[float], boots: List[np.ndarray]) -> Tuple[float, float]:
    """MultEval's figures for several runs: (sd over runs, mean bootstrap sd)."""
    return (float(np.std(run_scores, ddof=1)) if len(run_scores) > 1 else 0.0,
            float(np.mean([b.std(ddof=1) for b in boots])))


def extend_signature(signature: str, **extra: Any) -> str:
    """Insert ``key:value`` items after ``nrefs:...`` as sacrebleu orders them (bs, ar, seed)."""
    items = "|".join(f"{k}:{v}" for k, v in extra.items() if v is not None)
    m = re.match(r"(nrefs:[^|]*)\|", signature)
    if not items:
        return signature
    return f"{m.group(1)}|{items}|{signature[m.end():]}" if m else f"{signature}|{items}"


def pairwise_resamples(systems: int, alpha: float = 0.05) -> int:
    """Bootstrap resamples enough for every pair of ``systems`` under Holm's adjustment: a bootstrap p-value
    is at least 1 / (R + 1) and Holm multiplies the smallest by the m = S (S - 1) / 2 comparisons, so R
    must reach 2 m / alpha for the smallest to come out at alpha / 2 or below (at least sacrebleu's 1000)."""
    return max(1000, math.ceil(2 * systems * (systems - 1) / 2 / alpha))


def all_pairs(results: Sequence[Result], boots: Sequence[np.ndarray], alpha: float = 0.05) -> Dict[str, Any]:
    """Every pair of systems under one metric (``results`` and their bootstrap scores on shared resamples):
    the systems best first, paired bootstrap p-values (sacrebleu's definition, :func:`~evalpipe.
    sufficient_stats.resample.paired_bootstrap`), the same p-values adjusted for the multiple comparisons by
    Holm's method, and significance clusters (a system starts a new cluster when a better system of the
    current one differs from it with adjusted p <= ``alpha``)."""
    sign = 1 if results[0].higher_is_better else -1
    order = sorted(range(len(results)), key=lambda i: -sign * results[i].score)
    raw = resample.all_pairs_bootstrap([results[i].score for i in order], [boots[i] for i in order])
    adjusted = resample.holm(raw)
    return {"systems": [results[i].system for i in order], "scores": [results[i].score for i in order],
            "p_values": raw.tolist(), "adjusted": adjusted.tolist(), "correction": "holm", "alpha": alpha,
            "clusters": resample.assign_ranks(adjusted, alpha)}


def paired_ttest(metric: Any, base: np.ndarray, other: np.ndarray) -> Tuple[Optional[float], Optional[float],
                                                                              Optional[str]]:
    """comet-compare's paired t-test (unbabel-comet 2.2.7, ``comet/cli/compare.py``: ``scipy.stats.ttest_rel(x, y)``,
    two-sided, x the baseline) on the segment scores of a metric whose corpus score is their mean; (statistic,
    p-value, None), or (None, None, why) for any other metric."""
    if not getattr(metric, "segment_mean", False):
        return None, None, "t-test: the score is not a mean of segment scores"
    try:
        from scipy import stats
    except ImportError:
        from evalpipe.errors import MissingDependency

        raise MissingDependency.module("scipy", "--paired-ttest") from None
    both = (base[:, 1] > 0) & (other[:, 1] > 0)  # segments scored in both systems (MTME's None: not scored)
    x, y = base[both, 0] / base[both, 1], other[both, 0] / other[both, 1]
    found = stats.ttest_rel(x, y)
    if not (np.isfinite(found.statistic) and np.isfinite(found.pvalue)):
        # scipy answers nan where the differences have no variance (identical systems, a constant shift) or there
        # is one segment: the t statistic is undefined, and printed so
        why = "one segment" if len(x) < 2 else "the segment scores differ by the same amount everywhere"
        return None, None, f"t-test undefined: {why}"
    return float(found.statistic), float(found.pvalue), None


def score_systems(systems: Sequence[System], specs: Sequence[Any], confidence: int = 0, paired: Optional[str] = None,
                  trials: Optional[int] = None, seed: Optional[int] = 12345, engine: Optional[Engine] = None,
                  progress: Callable[[int], None] = lambda n: None, pairwise: bool = False
                  ) -> Tuple[List[Result], Dict[str, Any]]:
    """Score every system with every metric spec; returns results and the test description.

    ``confidence``: bootstrap resamples for 95 % intervals (0: none).  ``paired``: ``"bs"``, ``"ar"``
    or None, with the first system as baseline; systems with several runs use stratified AR.
    ``trials`` defaults to sacrebleu's (1000 for bs, 10000 for ar).  ``pairwise``: also every pair of
    systems by :func:`all_pairs` (under ``"pairwise"``, one entry per metric) on the bootstrap resamples,
    of which there are then at least :func:`pairwise_resamples` (a system with several runs by the mean
    over its runs).  When nothing is resampled only summed stats come back from the engine.
    """
    if pairwise and len(systems) < 2:
        raise UsageError("comparing every pair of systems needs at least two systems")
    if pairwise:
        confidence = max(confidence, pairwise_resamples(len(systems)))
    multi_run = any(len(s.runs) > 1 for s in systems)
    if paired and len(systems) < 2:
        raise UsageError("a paired test needs at least two systems (the first is the baseline)")
    if paired == "ttest" and multi_run:
        raise UsageError("the paired t-test compares one run of each system: give one file a system")
    test_type = ("stratified-ar" if multi_run else paired) if paired else None
    if paired == "ttest":
        trials = None
    trials = (trials or (1000 if paired == "bs" else 10000)) if paired and paired != "ttest" else trials
    boot_n = confidence or (trials if paired == "bs" else 0) or (1000 if multi_run or pairwise else 0)
    table = stats_table(systems, specs, engine or LocalEngine(), bool(boot_n or paired), progress)
    n = len(next(iter(table.values()))[0].rows or []) if table else 0
    counts = resample.bootstrap_counts(n, boot_n, seed) if boot_n and n else None
    masks = resample.ar_masks(n, trials, seed) if test_type == "ar" else None
    key = "bs" if paired == "bs" and not multi_run else "ar" if paired in ("ar", "bs") else \
        "bs" if confidence else None
    extra = {key: trials if paired in ("ar", "bs") else confidence, "seed": str(seed).lower()} if key else {}

    results, boots = [], {}
    for index, system in enumerate(systems):
        for spec in specs:
            metric, runs = spec.build(), table[(system.name, spec.name)]
            scores = [metric.score(r.total) for r in runs]
            nrefs = {r.nrefs for r in runs}
            tested = {"test": "ttest"} if paired == "ttest" and getattr(metric, "segment_mean", False) else {}
            result = Result(system=system.name, metric=spec.name, score=float(np.mean(scores)) if multi_run else scores[0],
                            signature=extend_signature(metric.signature(nrefs.pop() if len(nrefs) == 1 else -1),
                                                       **extra, **tested),
                            baseline=bool(paired) and index == 0, runs=len(runs), run_scores=scores,
                            higher_is_better=metric.higher_is_better, label=metric.display_name(),
                            note=system.notes.get(spec.name))
            rows = resample.row_scorer(metric)
            mine = boots[(system.name, spec.name)] = \
                [rows(counts @ r.matrix) for r in runs] if counts is not None else []
            if mine and (confidence or paired == "bs"):
                result.mean, low, high = resample.confidence_interval(mine[0])
                result.ci = [low, high]
            if mine and multi_run:
                result.sd_runs, result.sd_bootstrap = run_statistics(scores, mine)
            if paired and index > 0:
                base = table[(systems[0].name, spec.name)]
                if test_type == "ttest":
                    result.statistic, result.p_value, result.note = paired_ttest(metric, base[0].matrix,
                                                                                 runs[0].matrix)
                elif test_type == "stratified-ar":
                    result.p_value = resample.stratified_approximate_randomization(
                        metric.score, rows, [b.matrix for b in base], [r.matrix for r in runs], trials, seed)
                elif test_type == "ar":
                    result.p_value = resample.paired_approximate_randomization(metric.score, rows, base[0].matrix,
                                                                               runs[0].matrix, masks)
                else:
                    result.p_value = resample.paired_bootstrap(metric.score(base[0].total), scores[0],
                                                               boots[(systems[0].name, spec.name)][0], mine[0])
            results.append(result)
    test: Dict[str, Any] = {"type": test_type, "trials": trials if paired else (confidence or None), "seed": seed}
    if pairwise:
        test["pairwise"] = {spec.name: dict(all_pairs([r for r in results if r.metric == spec.name], [
            np.mean(boots[(s.name, spec.name)], axis=0) for s in systems]), trials=boot_n) for spec in specs}
    return results, test


def sentence_scores(systems: Sequence[System], specs: Sequence[Any], engine: Optional[Engine] = None,
                    signatures: bool = False) -> List[Dict[str, Any]]:
    """Per-segment scores (the metric of each segment's own stats): one record per system, run,
    metric and segment; with ``signatures``, each record also carries its metric's signature."""
    table = stats_table(systems, specs, engine or LocalEngine(), True)
    metrics = {spec.name: spec.build() for spec in specs}
    out = []
    for system in systems:
        for run, data in enumerate(system.runs):
            for spec in specs:
                metric = metrics[spec.name]
                extra = {"signature": metric.signature(data.nrefs)} if signatures else {}
                out += [{"system": system.name, "run": run + 1, "metric": spec.name, "segment": i,
                         **_segment_score(metric, row), **extra}
                        for i, row in enumerate(table[(system.name, spec.name)][run].rows, 1)]
    return out


def _segment_score(metric: Any, row: Any) -> Dict[str, Any]:
    """``{"score": value}``, or ``{"score": None, "undefined": why}`` for a segment the metric cannot score (a
    latency metric's empty hypothesis): that segment is undefined, the others are scored."""
    try:
        return {"score": metric.score(row)}
    except Unscorable as exc:
        return {"score": None, "undefined": str(exc)}
