"""Result records of corpus scoring and their table / JSON / TSV renderings.

JSON schema (stable; documented in the README)::

    {"evalpipe_version": str, "segments": int, "references": [path, ...],
     "test": {"type": "bs" | "ar" | "stratified-ar" | null, "trials": int | null, "seed": int | null},
     "results": [{"system": str, "metric": str, "score": float, "signature": str,
                  "ci": [low, high] | null, "mean": float | null, "p_value": float | null,
                  "baseline": bool, "runs": int, "run_scores": [float, ...],
                  "sd_runs": float | null, "sd_bootstrap": float | null, "higher_is_better": bool}, ...],
     "pairwise": {metric: {"systems": [str, ...] (best first), "scores": [float, ...],
                           "p_values": [[float]], "adjusted": [[float]], "correction": "holm",
                           "alpha": float, "clusters": [int, ...], "trials": int}} (with --all-pairs)}
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional


@dataclass
class Result:
    """One system scored by one metric."""

    system: str
    metric: str
    score: Optional[float]  # None: undefined on this input (``note`` says why)
    signature: str
    ci: Optional[List[float]] = None
    mean: Optional[float] = None
    p_value: Optional[float] = None
    #: the paired t-test's statistic (``--paired-ttest``), beside its p-value
    statistic: Optional[float] = None
    baseline: bool = False
    runs: int = 1
    run_scores: List[float] = field(default_factory=list)
    sd_runs: Optional[float] = None
    sd_bootstrap: Optional[float] = None
    higher_is_better: bool = True
    #: what tables call the metric (sacrebleu's name for its metrics: BLEU, chrF2, chrF2++, TER)
    label: str = ""
    #: why ``score`` is None
    note: Optional[str] = None


def sentences_json(records: List[Dict[str, Any]]) -> str:
    """Per-segment scores as JSON lines."""
    return "\n".join(json.dumps(rec, ensure_ascii=False) for rec in records)


def sentences_tsv(records: List[Dict[str, Any]]) -> str:
    """Per-segment scores as TSV with a header (and a signature column when the records carry one)."""
    signed = bool(records) and "signature" in records[0]
    lines = ["system\trun\tmetric\tsegment\tscore" + ("\tsignature" if signed else "")]
    lines += [f"{r['system']}\t{r['run']}\t{r['metric']}\t{r['segment']}\t"
              f"{'undefined' if r['score'] is None else repr(r['score'])}"
              + (f"\t{r['signature']}" if signed else "") for r in records]
    return "\n".join(lines)


def to_json(results: List[Result], header: Dict[str, Any]) -> str:
    return json.dumps({**header, "results": [asdict(r) for r in results]}, indent=1, ensure_ascii=False)


def to_tsv(results: List[Result]) -> str:
    cols = ["system", "metric", "score", "ci_low", "ci_high", "p_value", "runs", "sd_runs", "sd_bootstrap", "signature"]
    lines = ["\t".join(cols)]
    for r in results:
        low, high = r.ci if r.ci else ("", "")
        vals = [r.system, r.metric, "" if r.score is None else repr(r.score), low, high, "" if r.p_value is None else r.p_value, r.runs,
                "" if r.sd_runs is None else r.sd_runs, "" if r.sd_bootstrap is None else r.sd_bootstrap, r.signature]
        lines.append("\t".join(map(str, vals)))
    return "\n".join(lines)


def to_table(results: List[Result], width: int, pairwise: Optional[Dict[str, Any]] = None,
             decimals: Optional[Dict[str, int]] = None) -> str:
    """An aligned table: one row per system, one column per metric, signatures underneath (and, with
    ``pairwise``, each metric's significance clusters).  ``decimals``: a metric's own (COMET's and MetricX's 4),
    in place of ``width``."""
    systems = list(dict.fromkeys(r.system for r in results))
    metrics = list(dict.fromkeys(r.metric for r in results))
    cell: Dict[tuple, Result] = {(r.system, r.metric): r for r in results}

    def show(r: Result) -> str:
        width = (decimals or {}).get(r.metric, default_width)
        if r.score is None:
            return "n/a"
        text = f"{r.score:.{width}f}"
        if r.runs > 1 and r.sd_runs is not None:
            text += f" (sd {r.sd_runs:.{width}f})"
        if r.ci:
            text += f" [{r.ci[0]:.{width}f}, {r.ci[1]:.{width}f}]"
        if r.p_value is not None:
            text += f" p={r.p_value:.4f}" + ("*" if r.p_value < 0.05 else "")
        elif r.baseline:
            text += " (baseline)"
        return text

    default_width = width
    labels = [cell[(systems[0], m)].label or m for m in metrics]
    rows = [["system"] + labels] + [[s] + [show(cell[(s, m)]) for m in metrics] for s in systems]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    out = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    out += [""] + [f"{label}: {cell[(systems[0], m)].signature}" for m, label in zip(metrics, labels)]
    out += [f"Note: {cell[(s, m)].label or m} of {s}: {cell[(s, m)].note}" for m in metrics for s in systems
            if cell[(s, m)].note and cell[(s, m)].score is not None]
    for m, pairs in (pairwise or {}).items():
        clusters = [[s for s, c in zip(pairs["systems"], pairs["clusters"]) if c == k] for k in sorted(set(pairs["clusters"]))]
        out.append(f"{labels[metrics.index(m)] if m in metrics else m} clusters (paired bootstrap, Holm-adjusted p <= {pairs['alpha']}), best first: "
                   + " | ".join(" ".join(c) for c in clusters))
    return "\n".join(out)


def to_metric_table(results: List[Result], width: int) -> str:
    """An aligned table with one row per metric and one column per system, then each metric's
    signature (for many metrics over few systems, where :func:`to_table` grows too wide)."""
    systems = list(dict.fromkeys(r.system for r in results))
    metrics = list(dict.fromkeys(r.metric for r in results))
    cell: Dict[tuple, Result] = {(r.system, r.metric): r for r in results}

    def show(r: Result) -> str:
        if r.score is None:
            return "n/a"
        text = f"{r.score:.{width}f}"
        if r.ci:
            text += f" [{r.ci[0]:.{width}f}, {r.ci[1]:.{width}f}]"
        if r.p_value is not None:
            text += f" p={r.p_value:.4f}" + ("*" if r.p_value < 0.05 else "")
        return text

    labels = [cell[(systems[0], m)].label or m for m in metrics]
    rows = [["metric"] + systems] + [[label] + [show(cell[(s, m)]) for s in systems] for m, label in zip(metrics, labels)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    out = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(out + [""] + [f"{label}: {cell[(systems[0], m)].signature}" for m, label in zip(metrics, labels)])
