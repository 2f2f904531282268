"""Step two of corpus scoring: analyses over stats matrices, each its own function.

Definitions follow sacrebleu 2.x and MultEval (see :mod:`evalpipe.sufficient_stats.resample` for
the draws and p-values): the corpus score is the metric of the summed stats; a bootstrap interval
rescoring resampled sums; the paired bootstrap and approximate randomization compare a system with
the baseline on the same draws; runs of a system give mean, standard deviation over runs and mean
bootstrap standard deviation; stratified AR compares systems with several runs.
"""
from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from evalpipe.scoring.stats_tables import RunStats
from evalpipe.sufficient_stats import resample


def corpus_score(metric: Any, run: RunStats) -> float:
    """The metric of the run's summed stats."""
    return metric.score(run.total)


def bootstrap_scores(metric: Any, run: RunStats, counts: np.ndarray) -> np.ndarray:
    """The metric of every bootstrap resample (``counts``: trials x segments)."""
    return resample.bootstrap_scores(resample.row_scorer(metric), run.matrix, counts)


def confidence_interval(boot: np.ndarray) -> Tuple[float, List[float]]:
    """(mean, [low, high]) of resampled scores: sacrebleu's 95 % interval."""
    mean, low, high = resample.confidence_interval(boot)
    return mean, [low, high]


def paired_bootstrap(base_score: float, score: float, base_boot: np.ndarray, boot: np.ndarray) -> float:
    """p-value of the paired bootstrap test against the baseline on the same resamples."""
    return resample.paired_bootstrap(base_score, score, base_boot, boot)


def paired_ar(metric: Any, base: RunStats, run: RunStats, masks: np.ndarray) -> float:
    """p-value of paired approximate randomization against the baseline."""
    return resample.paired_approximate_randomization(metric.score, resample.row_scorer(metric), base.matrix,
                                                     run.matrix, masks)


def stratified_ar(metric: Any, bases: List[RunStats], runs: List[RunStats], trials: int, seed: Optional[int]) -> float:
    """p-value of MultEval's stratified AR over runs (run r paired with the baseline's run r)."""
    return resample.stratified_approximate_randomization(metric.score, resample.row_scorer(metric),
                                                         [b.matrix for b in bases], [r.matrix for r in runs],
                                                         trials, seed)


def run_statistics(run_scores: List[float], boots: List[np.ndarray]) -> Dict[str, float]:
    """MultEval's figures for several runs: ``sd_runs`` and ``sd_bootstrap`` (mean bootstrap sd)."""
    return {"sd_runs": float(np.std(run_scores, ddof=1)) if len(run_scores) > 1 else 0.0,
            "sd_bootstrap": float(np.mean([b.std(ddof=1) for b in boots]))}


def segment_scores(metric: Any, run: RunStats) -> List[float]:
    """The metric of every segment's own stats (sentence-level scores)."""
    return [metric.segment_score(row) for row in run.rows]


def extend_signature(signature: str, **extra: Any) -> str:
    """Insert ``key:value`` items after ``nrefs:...`` as sacrebleu orders them (bs, ar, seed)."""
    items = "|".join(f"{k}:{v}" for k, v in extra.items() if v is not None)
    if not items:
        return signature
    m = re.match(r"(nrefs:[^|]*)\|", signature)
    return f"{m.group(1)}|{items}|{signature[m.end():]}" if m else f"{signature}|{items}"
