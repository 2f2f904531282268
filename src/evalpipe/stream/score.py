"""Score long-form talks with any metrics: one pass over the talks on any engine, then each metric's
score, signature and (optionally) bootstrap interval and paired test.

The metrics travel as one :class:`BundleSpec` in one job, so each talk is realigned once for all of
them, in the worker that holds it; engines split the job by talk (:class:`~evalpipe.inputs.Talks`).
Rows are talks, so bootstrap intervals and paired tests resample talks: a talk's sentences share its
realignment and its clock and are not independent draws.  Several logs of the same references are
several systems; the first is the baseline of ``paired``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from evalpipe.engines.base import Engine, Job
from evalpipe.errors import UsageError
from evalpipe.inputs import Talks
from evalpipe.registry import MetricSpec
from evalpipe.scoring.pipeline import extend_signature
from evalpipe.scoring.results import Result
from evalpipe.sufficient_stats import resample
from evalpipe.sufficient_stats.combine import Bundle
from evalpipe.sufficient_stats.talks import Talk

#: what each anchor reports, by resegmenter (the default metrics)
DEFAULT_METRICS = {
    "mweralign": ("bleu", "stream_laal", "stream_laal_ca", "normalized_erasure", "real_time_factor"),
    "omnisteval": ("bleu", "chrf", "long_yaal", "long_al", "long_laal", "long_ap", "long_dal",
                   "long_yaal_ca", "long_al_ca", "long_laal_ca", "long_ap_ca", "long_dal_ca"),
}


@dataclass(frozen=True)
class BundleSpec:
    """Metric specs computed in one pass (picklable; built where the work runs)."""

    specs: Tuple[MetricSpec, ...]

    def build(self) -> Bundle:
        return Bundle([spec.build() for spec in self.specs])


def score_talks(systems: Sequence[Tuple[str, List[Talk]]], specs: Sequence[MetricSpec], engine: Engine,
                confidence: int = 0, paired: bool = False, seed: Optional[int] = 12345
                ) -> Tuple[List[Result], Dict[str, Any]]:
    """Every system (a name and its talks) scored by every metric; the results and a header."""
    if paired and len(systems) < 2:
        raise UsageError("a paired test needs at least two logs (the first is the baseline)")
    bundle_spec = BundleSpec(tuple(specs))
    bundle = bundle_spec.build()
    names = [[t.name for t in talks] for _, talks in systems]
    if any(n != names[0] for n in names[1:]):
        raise UsageError("the logs compared must hold the same talks")
    trials = confidence or (1000 if paired else 0)
    results: List[Result] = []
    boots: Dict[Tuple[int, int], np.ndarray] = {}
    talks0 = systems[0][1]
    counts = resample.bootstrap_counts(len(talks0), trials, seed) if trials and talks0 else None
    first = talks0[0] if talks0 else None
    extra = {"reseg": first.resegmenter if first else None, "unit": first.unit if first else None,
             "lang": first.lang if first and first.resegmenter == "omnisteval" else None}
    if trials:
        extra.update(bs=trials, seed=str(seed).lower())
    for index, (name, talks) in enumerate(systems):
        job = Job(bundle_spec, Talks(talks, name))
        # the total sums every sentence exactly; the rows (one per talk) are what resampling draws
        matrix = np.asarray(engine.rows(job), dtype=np.float64) if counts is not None else None
        total = engine.total(job)
        for k, (metric, part) in enumerate(zip(bundle.metrics, bundle.parts(total))):
            result = Result(system=name, metric=specs[k].name, score=metric.score(list(part)),
                            signature=extend_signature(metric.signature(1), **extra),
                            baseline=paired and index == 0, run_scores=[], higher_is_better=metric.higher_is_better)
            result.run_scores = [result.score]
            if matrix is not None:
                mine = boots[(index, k)] = resample.row_scorer(metric)(counts @ matrix[:, bundle.slices[k]])
                result.mean, low, high = resample.confidence_interval(mine)
                result.ci = [low, high] if confidence else None
                if not confidence:
                    result.mean = None
                if paired and index > 0:
                    base = results[k]
                    result.p_value = resample.paired_bootstrap(base.score, result.score, boots[(0, k)], mine)
            results.append(result)
    header = {"talks": len(talks0), "sentences": sum(len(t.references) for t in talks0),
              "test": {"type": "bs" if paired else None, "trials": trials or None, "seed": seed,
                       "unit": "talk"}}
    return results, header
