"""BLEU and latency of finished simultaneous-translation instances, and the batched fast path."""
from __future__ import annotations

from itertools import repeat
from operator import itemgetter
from typing import Any, Dict, List, NamedTuple, Sequence, Union

import numpy as np

from evalpipe.registry import load_metric
from evalpipe.sufficient_stats.vectors import sum_stats

LATENCY = ("AL", "AP", "DAL", "LAAL")


def score_instances(instances: Sequence[Dict[str, Any]], convention: str = "simuleval", tokenize: str = "13a",
                    unit: str = "text") -> Dict[str, Any]:
    """``{"BLEU", "AL", "AP", "DAL", "LAAL", "sentences", "without_hypothesis"}`` of instance records.

    Each latency metric is the mean over sentences with a non-empty hypothesis (the exact
    per-sentence path); BLEU is sacrebleu's corpus BLEU of predictions against references.
    """
    bleu = load_metric("bleu", tokenize=tokenize)
    out: Dict[str, Any] = {"BLEU": bleu.score(sum_stats([bleu.item_stats(i) for i in instances], bleu.num_stats))}
    empty = sum(1 for i in instances if not i.get("delays"))
    for name in LATENCY:
        options = {"convention": convention, "unit": unit}
        metric = load_metric(name.lower(), **options)
        rows = [metric.item_stats(i) for i in instances]
        total = sum_stats(rows, metric.num_stats)
        out[name] = metric.score(total) if total[1] else None
    out.update({"sentences": len(instances), "without_hypothesis": empty, "convention": convention})
    return out


class LatencyBatch(NamedTuple):
    """Text instances with a hypothesis, in array form for the batched latency path: source
    lengths, references, reference word counts, delay lists and their :class:`Columns` layout."""

    src: np.ndarray
    refs: List[Any]
    ref_lens: np.ndarray
    delays: List[List[float]]
    columns: Any


def latency_batch(instances: Sequence[Dict[str, Any]]) -> LatencyBatch:
    """The :class:`LatencyBatch` of instance records (dicts with ``source_length``, ``delays`` and
    ``reference``); records without delays (no hypothesis) are left out."""
    from evalpipe.evaluators.latency_formulas import Columns
    from evalpipe.evaluators.word_counts import word_counts

    delays = list(map(dict.get, instances, repeat("delays")))
    kept = instances if all(delays) else [i for i, d in zip(instances, delays) if d]
    delays = delays if kept is instances else [i["delays"] for i in kept]
    src = np.fromiter(map(itemgetter("source_length"), kept), dtype=np.float64, count=len(kept))
    refs: List[Any] = list(map(dict.get, kept, repeat("reference")))
    return LatencyBatch(src, refs, word_counts(refs), delays, Columns(delays))


def batch_latency(instances: Union[Sequence[Dict[str, Any]], LatencyBatch],
                  names: Sequence[str] = LATENCY) -> Dict[str, float]:
    """Corpus latency of many text instances (records or a :class:`LatencyBatch`) with the numpy
    path (SimulEval convention).  Per-sentence values are bit-identical to the exact path's (and
    SimulEval 1.1.4's)."""
    batch = instances if isinstance(instances, LatencyBatch) else latency_batch(instances)
    out = {}
    for name in names:
        metric = load_metric(name.lower())
        values = metric.batch_values(batch.src, batch.refs, batch.delays, flat=batch.columns, ref_lens=batch.ref_lens)
        out[name] = float(np.mean(values))
    return out
