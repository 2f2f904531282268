"""Score long-form talks with any metrics: one pass over the talks on any engine, then each metric's
score, signature and (optionally) bootstrap interval and paired test.

The metrics travel as one :class:`BundleSpec` in one job, so each talk is realigned once for all of
them, in the worker that holds it; engines split the job by talk (:class:`~evalpipe.inputs.Talks`).
Rows are talks, so bootstrap intervals and paired tests resample talks: a talk's sentences share its
realignment and its clock and are not independent draws.  Fewer than :data:`MIN_TALKS_RESAMPLED` talks are
not resampled at all -- n talks have only C(2n-1, n) distinct bootstrap samples (3 for 2 talks, 126 for 5),
so an interval or a p-value over them says nothing -- and asking for one is a usage error.  Several logs of the same references are
several systems; the first is the baseline of ``paired``.
"""
from __future__ import annotations

import logging
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from evalpipe.engines.base import Engine, Job
from evalpipe.errors import Unscorable, UsageError
from evalpipe.inputs import Talks
from evalpipe.registry import MetricSpec
from evalpipe.scoring.pipeline import extend_signature
from evalpipe.scoring.results import Result
from evalpipe.sufficient_stats import resample
from evalpipe.sufficient_stats.combine import BundleSpec
from evalpipe.sufficient_stats.talks import Talk
from evalpipe.sufficient_stats.vectors import partial_sum

log = logging.getLogger(__name__)

#: what each anchor reports, by resegmenter (the default metrics)
DEFAULT_METRICS = {
    "mweralign": ("bleu", "stream_laal", "stream_laal_ca", "normalized_erasure", "real_time_factor"),
    "omnisteval": ("bleu", "chrf", "long_yaal", "long_al", "long_laal", "long_ap", "long_dal",
                   "long_yaal_ca", "long_al_ca", "long_laal_ca", "long_ap_ca", "long_dal_ca"),
}


BATCH_TALKS = 8  # talks handed to the engine at a time (split among its workers)


def talk_rows(talks: Iterable[Tuple[int, Talk]], bundle_spec: BundleSpec, engine: Engine, name: str = "",
              batch: int = BATCH_TALKS) -> List[list]:
    """The bundle's row of every talk, in the talks' places, computed on the engine a batch at a time as
    the talks arrive (a talk's row is the exact sum of its sentences' rows, rounded once)."""
    found: List[Tuple[int, list]] = []
    pending: List[Tuple[int, Talk]] = []

    def flush() -> None:
        rows = engine.rows(Job(bundle_spec, Talks([t for _, t in pending], name)))
        found.extend(zip((p for p, _ in pending), rows))
        pending.clear()

    for item in talks:
        pending.append(item)
        if len(pending) >= batch:
            flush()
    if pending:
        flush()
    found.sort(key=lambda pair: pair[0])
    return [row for _, row in found]


MIN_TALKS_RESAMPLED = 10  # talks below which --confidence and --paired-bs are refused


def _precomputed_rows(values: Sequence[Optional[float]], talk_sizes: Sequence[int], talks: int, metric: Any) -> np.ndarray:
    """Each talk's row of segment scores computed elsewhere: the sum of its reference sentences' rows (one score a
    reference line, the talks in the references' order; a talk without references: zeros)."""
    rows = np.zeros((talks, metric.num_stats))
    start = 0
    for place, size in enumerate(talk_sizes):
        part = metric.corpus_stats(list(values[start:start + size]), [])
        if part and place < talks:
            rows[place] = np.asarray(part, dtype=np.float64).sum(axis=0)
        start += size
    return rows


class _Joined:
    """The bundle's metrics and the precomputed ones side by side: ``metrics``, ``slices``, ``parts``."""

    def __init__(self, bundle: Any, extra: Sequence[Any]) -> None:
        self.metrics = list(bundle.metrics) + list(extra)
        self.slices = list(bundle.slices)
        end = bundle.num_stats
        for metric in extra:
            self.slices.append(slice(end, end + metric.num_stats))
            end += metric.num_stats
        self.num_stats = end

    def parts(self, total: Sequence[Any]) -> List[Sequence[Any]]:
        return [total[sl] for sl in self.slices]


def score_talks(systems: Sequence[Tuple[str, Iterable[Tuple[int, Talk]]]], specs: Sequence[MetricSpec],
                engine: Engine, confidence: int = 0, paired: bool = False, seed: Optional[int] = 12345,
                settings: Optional[Dict[str, Any]] = None, scores: Sequence[Any] = (),
                segment_scores: Optional[Dict[Tuple[str, str], Sequence[Optional[float]]]] = None,
                talk_sizes: Sequence[int] = ()) -> Tuple[List[Result], Dict[str, Any]]:
    """Every system (a name and its ``(place, talk)`` stream, :func:`evalpipe.stream.files.iter_talks`)
    scored by every metric; the results and a header.  ``settings`` (resegmenter, unit, lang) go into
    the signatures.  Totals are the exact sums of the talks' rows.  ``scores``: precomputed metrics
    (:class:`~evalpipe.registry.ScoresSpec`) with ``segment_scores[(system, name)]`` one score a reference line,
    ``talk_sizes`` the references' sentences per talk in place order."""
    if paired and len(systems) < 2:
        raise UsageError("a paired test needs at least two logs (the first is the baseline)")
    bundle_spec = BundleSpec(tuple(specs))
    extra = [spec.build() for spec in scores]
    bundle = _Joined(bundle_spec.build(), extra)
    matrices = [np.asarray(talk_rows(talks, bundle_spec, engine, name), dtype=np.float64).reshape(
        -1, bundle.num_stats - sum(m.num_stats for m in extra)) for name, talks in systems]
    if extra:
        matrices = [np.hstack([m] + [_precomputed_rows((segment_scores or {})[(name, spec.name)], talk_sizes, len(m),
                                                        metric) for spec, metric in zip(scores, extra)])
                    for (name, _), m in zip(systems, matrices)]
    specs = list(specs) + list(scores)
    tables = [[list(r) for r in m] for m in matrices]
    n = len(matrices[0])
    if any(len(m) != n for m in matrices):
        raise UsageError(f"the logs compared must hold the same talks; they hold {[len(m) for m in matrices]}")
    trials = confidence or (1000 if paired else 0)
    if trials and n < MIN_TALKS_RESAMPLED:
        asked = " and ".join(w for w, on in (("--confidence", confidence), ("--paired-bs", paired)) if on)
        raise UsageError(f"{asked} {'resample' if confidence and paired else 'resamples'} talks, and the logs hold {n}: at least {MIN_TALKS_RESAMPLED} are needed "
                         f"for a meaningful interval or p-value (n talks have only C(2n-1, n) distinct resamples)")
    counts = resample.bootstrap_counts(n, trials, seed) if trials and n else None
    extra: Dict[str, Any] = {f"{k}": v for k, v in (settings or {}).items()}
    if trials:
        extra.update(bs=trials, seed=str(seed).lower())
    results: List[Result] = []
    boots: Dict[Tuple[int, int], np.ndarray] = {}
    undefined: List[Unscorable] = []
    for index, ((name, _), matrix, table) in enumerate(zip(systems, matrices, tables)):
        total = partial_sum(table, bundle.num_stats).finish() if table else [0] * bundle.num_stats
        for k, (metric, part) in enumerate(zip(bundle.metrics, bundle.parts(total))):
            try:
                score: Optional[float] = metric.score(list(part))
                note = None
            except Unscorable as exc:  # undefined on this input (every sentence skipped): reported as such
                score, note = None, str(exc)
                undefined.append(exc)
            result = Result(system=name, metric=specs[k].name, score=score, run_scores=[] if score is None else [score],
                            signature=extend_signature(metric.signature(1), **extra),
                            baseline=paired and index == 0, higher_is_better=metric.higher_is_better,
                            label=metric.display_name(), note=note)
            if score is not None and counts is not None:
                mine = boots[(index, k)] = resample.row_scorer(metric)(counts @ matrix[:, bundle.slices[k]])
                if confidence:
                    result.mean, low, high = resample.confidence_interval(mine)
                    result.ci = [low, high]
                if paired and index > 0 and (0, k) in boots:
                    result.p_value = resample.paired_bootstrap(results[k].score, score, boots[(0, k)], mine)
            results.append(result)
    if undefined and all(r.score is None for r in results):
        raise undefined[0]  # nothing to report: one line says why
    for r in results:
        if r.note:
            log.warning("%s: undefined %s", r.system, r.note)
    header = {"talks": n, "test": {"type": "bs" if paired else None, "trials": trials or None, "seed": seed,
                                   "unit": "talk"}}
    return results, header
