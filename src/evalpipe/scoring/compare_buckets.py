"""Any evalpipe metric in buckets of sentences, with an interval per bucket and a paired test per bucket: what
compare-mt's sentence buckets (its BLEU or a count, no interval, no test) do not give.

For each metric (its sufficient statistics: ``corpus_stats`` per segment, summed and scored -- so a bucket's
score is the metric's corpus score of that bucket's sentences, sacrebleu's for BLEU, chrF, TER) and each bucket:

* each system's score and, over 10 sentences or more (:data:`MIN_SENTENCES`), its 95 % bootstrap interval (sacrebleu's draws: :mod:`evalpipe.sufficient_stats.resample`,
  ``trials`` resamples of the bucket's sentences with the seed);
* each system after the first against the first: the paired bootstrap p-value on the same resamples, Holm-adjusted
  over the buckets (one family a system: "is B better than A on long sentences?" asked of every bucket at once),
  and the verdict in the metric's direction -- ``better``/``worse`` where the adjusted p is at most ``alpha``.

Buckets: by reference length (compare-mt's tokens and cutoffs: ``<10``, ``[10,20)`` ... ``>=60``, or others), by a
label a segment (a file, one label a line: domain, document, speaker, difficulty), in order of first appearance,
or by a metric's sentence score averaged over the systems (the segments COMET finds hard), between cutoffs.  A
bucket without sentences has no score (``None``).
"""
from __future__ import annotations

from bisect import bisect_right
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from evalpipe.errors import Unscorable
from evalpipe.scoring.compare_systems import LENGTH_CUTOFFS, bucket_labels, tokens
from evalpipe.sufficient_stats import resample

#: the fewest sentences a bucket's interval and test are computed over (as score-corpus's fewest talks)
MIN_SENTENCES = 10


def length_buckets(ref_lines: Sequence[str], cutoffs: Optional[Sequence[float]] = None) -> tuple:
    """``(labels, bucket of each segment)`` by reference length (compare-mt's tokens; its cutoffs by default)."""
    cutoffs = cutoffs or LENGTH_CUTOFFS
    return bucket_labels(cutoffs), [bisect_right(cutoffs, len(r)) for r in tokens(ref_lines)]


def score_buckets(scores: Sequence[Sequence[float]], cutoffs: Sequence[float]) -> tuple:
    """``(labels, bucket of each segment)`` by a sentence score averaged over the systems (``scores[system]
    [segment]``): one bucket a segment for every system, so the paired tests compare the same sentences."""
    means = np.mean(np.asarray(scores, dtype=np.float64), axis=0)
    return bucket_labels(cutoffs, integer=False), [bisect_right(cutoffs, m) for m in means.tolist()]


def label_buckets(labels: Sequence[str]) -> tuple:
    """``(distinct labels in order of first appearance, bucket of each segment)``."""
    names = list(dict.fromkeys(labels))
    where = {name: i for i, name in enumerate(names)}
    return names, [where[label] for label in labels]


def _score_or_none(metric: Any, row: list) -> Optional[float]:
    """The metric's score of summed statistics, or None where it is undefined (no segment with a score)."""
    try:
        return metric.score(row)
    except Unscorable:
        return None


def _scored(metric: Any, matrices: List[np.ndarray], idx: np.ndarray, trials: int, seed: int) -> List[tuple]:
    """``(score, low, high, p against the first)`` of each system on the sentences ``idx`` (no interval or test
    under :data:`MIN_SENTENCES`)."""
    scores = [_score_or_none(metric, m[idx].sum(0).tolist()) for m in matrices]
    if len(idx) < MIN_SENTENCES or None in scores:  # no interval, no test: a resample of a few sentences is nearly
        return [(score, None, None, None) for score in scores]  # always them; a score undefined tests nothing
    counts = resample.bootstrap_counts(len(idx), trials, seed)
    try:
        boots = [resample.row_scorer(metric)(counts @ m[idx]) for m in matrices]
    except Unscorable:  # a resample of segments none of which has a score (precomputed scores with gaps)
        return [(score, None, None, None) for score in scores]
    out = []
    for k, score in enumerate(scores):
        _, low, high = resample.confidence_interval(boots[k])
        out.append((score, low, high, None if k == 0 else
                    resample.paired_bootstrap(scores[0], score, boots[0], boots[k])))
    return out


def _verdict(metric: Any, score: float, base: float, p: float, alpha: float) -> str:
    ahead = (score > base) == metric.higher_is_better
    return ("better" if ahead else "worse") if p <= alpha else "-"


def segment_rows(specs: Sequence[Any], ref_lines: Sequence[str], outs_lines: Sequence[Sequence[str]],
                 engine: Any = None, scores: Optional[Dict[str, List[list]]] = None) -> Dict[str, List[list]]:
    """``{metric name: [per-segment statistics rows, a list a system]}`` of every metric of ``specs``, computed in
    one pass over each system (one job a system for all metrics) on ``engine`` (local by default; a pool or Spark
    spreads the systems' segments over processes or executors, with the same rows); a
    :class:`~evalpipe.registry.ScoresSpec` among them reads ``scores[name]`` (each system's segment scores computed
    elsewhere)."""
    from evalpipe.engines.local import LocalEngine
    from evalpipe.inputs import ScorePairs, TextPairs
    from evalpipe.scoring.pipeline import System, stats_table

    systems = [System(str(k), [TextPairs(list(out), [list(ref_lines)])],
                      {name: ScorePairs(values[k]) for name, values in (scores or {}).items()})
               for k, out in enumerate(outs_lines)]
    table = stats_table(systems, specs, engine or LocalEngine(), True)
    return {spec.name: [[list(row) for row in table[(system.name, spec.name)][0].rows] for system in systems]
            for spec in specs}


def metric_in_buckets(metric: Any, ref_lines: Sequence[str], outs_lines: Sequence[Sequence[str]], names: List[str],
                      which: List[int], trials: int, seed: int, alpha: float = 0.05,
                      rows: Optional[List[list]] = None) -> Dict[str, Any]:
    """The module docstring's analysis of one metric over the buckets ``names`` (``which``: each segment's), and
    over all sentences (``all``: its p-values unadjusted, a family of one); ``rows``: each system's per-segment
    statistics, if computed (:func:`segment_rows`)."""
    rows = rows if rows is not None else [metric.corpus_stats(list(out), [list(ref_lines)]) for out in outs_lines]
    matrices = [np.asarray(r, dtype=np.float64) for r in rows]
    members = [np.flatnonzero(np.asarray(which) == b) for b in range(len(names))]
    keys = ("score", "low", "high", "p")
    systems: List[Dict[str, list]] = [{key: [] for key in keys + ("p_holm", "verdict")} for _ in outs_lines]
    for idx in members:
        found = _scored(metric, matrices, idx, trials, seed) if len(idx) else [(None,) * 4] * len(outs_lines)
        for column, values in zip(systems, found):
            for key, value in zip(keys, values):
                column[key].append(value)
            column["p_holm"].append(None)
            column["verdict"].append(None)
    for k, column in enumerate(systems[1:], start=1):
        filled = [i for i, p in enumerate(column["p"]) if p is not None]
        adjusted = resample.holm_adjust(np.array([column["p"][i] for i in filled])).tolist()
        for i, p in zip(filled, adjusted):
            column["p_holm"][i] = p
            column["verdict"][i] = _verdict(metric, column["score"][i], systems[0]["score"][i], p, alpha)
    overall = _scored(metric, matrices, np.arange(len(ref_lines)), trials, seed)
    every = {key: [values[j] for values in overall] for j, key in enumerate(keys)}
    every["verdict"] = [None] + [None if p is None else _verdict(metric, score, overall[0][0], p, alpha)
                                 for score, _, _, p in overall[1:]]
    return {"metric": metric.display_name(),
            "higher_is_better": metric.higher_is_better, "buckets": names,
            "sentences": [len(idx) for idx in members], "trials": trials, "seed": seed, "alpha": alpha,
            "all": every, "systems": systems}
