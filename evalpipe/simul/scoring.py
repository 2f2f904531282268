"""BLEU and latency of finished simultaneous-translation instances, and the batched fast path."""
from __future__ import annotations

from typing import Any, Dict, List, Sequence

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


def batch_latency(instances: Sequence[Dict[str, Any]], names: Sequence[str] = LATENCY) -> Dict[str, float]:
    """Corpus latency of many text instances with the numpy path (SimulEval convention).

    Per-sentence values equal the exact path's to within 1e-12 (summation order differs).
    """
    from evalpipe.evaluators.latency_formulas import Flat

    kept = [i for i in instances if i.get("delays")]
    src = np.array([i["source_length"] for i in kept], dtype=np.float64)
    refs: List[Any] = [i.get("reference") for i in kept]
    ref_lens = np.array([len(r.split()) if isinstance(r, str) else 0 for r in refs], dtype=np.float64)
    delays = [i["delays"] for i in kept]
    flat = Flat(delays)
    out = {}
    for name in names:
        metric = load_metric(name.lower())
        out[name] = float(np.mean(metric.batch_values(src, refs, delays, flat=flat, ref_lens=ref_lens)))
    return out
