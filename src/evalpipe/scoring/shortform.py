"""OmniSTEval 0.1.10's short-form evaluation (``omnisteval shortform``) of a SimulEval log, on evalpipe's plugins.

What is computed, in OmniSTEval's order and under its keys (``omnisteval/scoring.py``, ``evaluate_instances``
with ``is_longform=False``):

* quality: ``bleu`` (sacrebleu BLEU, ``tokenize`` as given, 13a by default) and ``chrf`` of the predictions
  against the references; ``bleu_nfkc`` and ``chrf_nfkc`` on the NFKC-normalised texts when normalisation
  changes a prediction or a reference;
* latency on the computation-unaware delays (when some instance has delays): ``yaal`` (short-form), ``al``,
  ``laal``, ``ap``, ``dal``; on the computation-aware ones (the ``elapsed`` times, when some instance has
  them -- all zeros too, as SimulEval writes them for text input and OmniSTEval scores them): ``ca_yaal`` ...
  ``ca_dal``;
* the degeneracy check: ``swf``, ``efsw``, ``dsptv`` and ``degenerate_policy`` (1 when |DSPTV| > 20);
* the reports: instances with an empty prediction, and the texts NFKC normalisation changes.

Every latency value is a plugin's (:mod:`evalpipe.evaluators.shortform`, :mod:`evalpipe.evaluators.latency`) over
the whole log's summed stats, computed in one pass by an engine.  A metric with nothing to score is ``nan`` with a
warning, as OmniSTEval prints it.  Warnings OmniSTEval logs are returned in :attr:`Evaluation.warnings`.

Words of a reference are counted as OmniSTEval counts them (``reference_length=omnisteval``: split on single
spaces).  Where evalpipe differs, on purpose: an empty reference is refused by the latency metrics (OmniSTEval
counts it as one word); computation-aware values are computed from all-zero elapsed times as OmniSTEval computes
them, with a warning.
"""
from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Sequence, Tuple

from evalpipe.engines import Engine, Job
from evalpipe.errors import Unscorable
from evalpipe.inputs import SimulPairs, TextPairs
from evalpipe.registry import MetricSpec, load_class
from evalpipe.sufficient_stats.combine import BundleSpec

LATENCY = ("yaal", "al", "laal", "ap", "dal")
DEGENERACY = ("swf", "efsw", "dsptv")
#: OmniSTEval's threshold on |DSPTV| above which a policy is likely degenerate
DEGENERATE_ABOVE = 20
#: OmniSTEval's threshold on CA-YAAL - YAAL (ms) above which it suspects cumulative elapsed times
CA_GAP_WARNING = 2000

#: how OmniSTEval 0.1.10 names each key in its report and its scores.tsv
DISPLAY = {"bleu": "BLEU", "chrf": "chrF", "yaal": "YAAL (CU)", "ca_yaal": "YAAL (CA)",
           "swf": "Simultaneous Words Fraction (%)", "efsw": "Expected Simul. Words Fraction (%)",
           "dsptv": "Degeneracy Test Value", "degenerate_policy": "Likely Degenerate Simultaneous Policy",
           "bleu_nfkc": "BLEU (NFKC-normalized)", "chrf_nfkc": "chrF (NFKC-normalized)"}


def display_name(key: str) -> str:
    """The report's name of a score key (``al`` -> ``AL (CU)``, ``ca_al`` -> ``AL (CA)``)."""
    if key in DISPLAY:
        return DISPLAY[key]
    if key.startswith("ca_"):
        return key[3:].upper() + " (CA)"
    return key.upper() + " (CU)" if key in LATENCY else key.upper()


def format_value(key: str, value: float, decimals: int) -> str:
    """A score as the report prints it: YES / NO for the degeneracy flag, else ``decimals`` places."""
    if key == "degenerate_policy":
        return "YES" if value == 1.0 else "NO" if value == 0.0 else "N/A"
    return f"{value:.{decimals}f}"


@dataclass
class Evaluation:
    """Scores under OmniSTEval's keys, the empty predictions ``(index, reference)``, the normalisation changes
    ``(index, original, normalised)`` of references and predictions, and the warnings."""

    scores: Dict[str, float]
    total: int
    empty: List[Tuple[int, str]] = field(default_factory=list)
    normalized_references: List[Tuple[int, str, str]] = field(default_factory=list)
    normalized_predictions: List[Tuple[int, str, str]] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)


def _elapsed_given(pairs: SimulPairs) -> bool:
    """Whether some instance has computation-aware times (OmniSTEval's test: a non-empty list, zeros too)."""
    return any(h.elapsed for h in pairs.hypotheses)


def _totals(specs: Sequence[MetricSpec], data: Any, engine: Engine) -> List[List[Any]]:
    """Each spec's summed stats over ``data``, all in one engine pass."""
    if not specs:
        return []
    bundle_spec = BundleSpec(tuple(specs))
    total = engine.run([Job(bundle_spec, data)], False)[0]
    return [total[sl] for sl in bundle_spec.build().slices]


def _score(key: str, spec: MetricSpec, total: List[Any], warnings: List[str]) -> float:
    try:
        return float(spec.build().score(total))
    except Unscorable as exc:
        message = str(exc)
        shown = display_name(key)
        for prefix in (f"{spec.name}: ", f"{key}: "):  # the metric's message may name it already: name it once
            message = message[len(prefix):] if message.startswith(prefix) else message
        warnings.append(f"{shown}: {message} (reported as nan, as OmniSTEval does)")
        return math.nan


def evaluate(pairs: SimulPairs, engine: Engine, quality: bool = True, latency: bool = True,
             tokenize: str = "13a", options: Mapping[str, Any] = ()) -> Evaluation:
    """OmniSTEval's short-form evaluation of ``pairs`` (one reference stream); ``options`` go to every latency
    metric that takes them (``target_unit``, ``spm_model``)."""
    options = {"reference_length": "omnisteval", **dict(options)}
    hyps, refs = pairs.hypotheses, pairs.references[0]
    texts = [h.text if isinstance(h.text, str) else "" for h in hyps]
    result = Evaluation({}, len(hyps))
    warnings = result.warnings
    planned: List[Tuple[str, MetricSpec]] = []
    if quality:
        planned += [("bleu", MetricSpec.of("bleu", {"tokenize": tokenize})), ("chrf", MetricSpec.of("chrf"))]
    cu = latency and any(len(h.delays) for h in hyps)
    ca = latency and _elapsed_given(pairs)
    if latency and not cu:
        warnings.append("No instances have computation-unaware emission timestamps (CU).")
    if cu:
        planned += [(k, MetricSpec.of(k, _accepted(k, options))) for k in LATENCY]
    if ca:
        aware = {**options, "computation_aware": True, "unit": "speech"}
        planned += [("ca_" + k, MetricSpec.of(k, _accepted(k, aware))) for k in LATENCY]
        if not any(any(h.elapsed) for h in hyps if h.elapsed):
            warnings.append("The computation-aware (CA) rows come from elapsed times that are all zero (a text-input "
                            "log: SimulEval writes zeros); OmniSTEval prints them so, and so does this report")
    elif latency:
        warnings.append("No instances have computation-aware emission timestamps (CA).")
    if cu:
        planned += [(k, MetricSpec.of(k, _accepted(k, options))) for k in DEGENERACY]
    totals = _totals([s for _, s in planned], pairs, engine)
    scores = {key: _score(key, spec, total, warnings) for (key, spec), total in zip(planned, totals)}
    _normalization(result, texts, refs, quality, tokenize, engine, scores)
    order = ["bleu", "chrf", "bleu_nfkc", "chrf_nfkc"] + list(LATENCY) + ["ca_" + k for k in LATENCY] + list(DEGENERACY)
    result.scores = {k: scores[k] for k in order if k in scores}
    if cu:
        dsptv = result.scores["dsptv"]
        result.scores["degenerate_policy"] = 1.0 if not math.isnan(dsptv) and abs(dsptv) > DEGENERATE_ABOVE else 0.0
    aware, unaware = result.scores.get("ca_yaal"), result.scores.get("yaal")
    if aware and unaware and aware - unaware > CA_GAP_WARNING:
        warnings.append(f"CA-YAAL ({result.scores['ca_yaal']:.1f}) is much higher than YAAL "
                        f"({result.scores['yaal']:.1f}): are the elapsed times SimulEval's cumulative ones?")
    result.empty = [(i, r) for i, (t, r) in enumerate(zip(texts, refs)) if not t.strip()]
    return result


def _accepted(name: str, options: Mapping[str, Any]) -> Dict[str, Any]:
    """The options among ``options`` that metric ``name`` takes."""
    return {k: v for k, v in options.items() if k in load_class(name).OPTIONS}


def _normalization(result: Evaluation, texts: Sequence[str], refs: Sequence[str], quality: bool, tokenize: str,
                   engine: Engine, scores: Dict[str, float]) -> None:
    """The NFKC report, and BLEU and chrF of the normalised texts when it is not empty (and quality is on)."""
    norm_texts = [unicodedata.normalize("NFKC", t) for t in texts]
    norm_refs = [unicodedata.normalize("NFKC", r) for r in refs]
    result.normalized_references = [(i, a, b) for i, (a, b) in enumerate(zip(refs, norm_refs)) if a != b]
    result.normalized_predictions = [(i, a, b) for i, (a, b) in enumerate(zip(texts, norm_texts)) if a != b]
    if quality and (result.normalized_references or result.normalized_predictions):
        result.warnings.append("Unicode normalization issues detected in predictions or references. "
                               "These may affect BLEU and chrF scores.")
        specs = [MetricSpec.of("bleu", {"tokenize": tokenize}), MetricSpec.of("chrf")]
        totals = _totals(specs, TextPairs(norm_texts, [norm_refs]), engine)
        for key, spec, total in zip(("bleu_nfkc", "chrf_nfkc"), specs, totals):
            scores[key] = float(spec.build().score(total))


def report_lines(evaluation: Evaluation, settings: Mapping[str, str], decimals: int, version: str) -> List[str]:
    """The text report: settings, scores, the empty predictions and the normalisation details."""
    bar = "=" * 64
    lines = [bar, f"evalpipe {version}  |  Shortform evaluation (OmniSTEval 0.1.10's metrics)", bar, ""]
    width = max(map(len, settings))
    lines += ["Settings", "-" * 64] + [f"  {k:<{width}}  {v}" for k, v in settings.items()] + [""]
    if evaluation.scores:
        names = {k: display_name(k) for k in evaluation.scores}
        width = max(map(len, names.values()))
        lines += ["Scores", "-" * 64]
        lines += [f"  {names[k]:<{width}}  {format_value(k, v, decimals)}" for k, v in evaluation.scores.items()]
        lines.append("")
        if evaluation.scores.get("degenerate_policy") == 1.0:
            lines += ["  *** Likely Degenerate Simultaneous Policy ***", ""]
    lines += ["Instance-level Details", "-" * 64, f"Empty Predictions: {len(evaluation.empty)}",
              f"Total Instances:   {evaluation.total}"]
    if evaluation.empty:  # OmniSTEval's "\n\nInstances with empty predictions:": two blank lines
        lines += ["", "", "Instances with empty predictions:", "-" * 64]
        lines += [f"Instance {i} with reference '{r}' has an empty prediction." for i, r in evaluation.empty]
    lines.append(bar)
    details = []
    for title, changes in (("References", evaluation.normalized_references),
                           ("Predictions", evaluation.normalized_predictions)):
        if changes:
            details.append(f"Unicode Normalization Issues in {title}:")
            for i, original, normalized in changes:
                details += [f"{i:04d} Original:   {original}", f"{i:04d} Normalized: {normalized}", "-" * 40]
    if details:
        lines += ["", "Unicode Normalization Details", "-" * 64] + details + [bar]
    return lines


def tsv_lines(evaluation: Evaluation, decimals: int) -> List[str]:
    """OmniSTEval's ``scores.tsv``: ``metric<TAB>value`` under its display names."""
    return ["metric\tvalue"] + [f"{display_name(k)}\t{format_value(k, v, decimals)}"
                                for k, v in evaluation.scores.items()]


def as_json(evaluation: Evaluation, settings: Mapping[str, str]) -> Dict[str, Any]:
    """Everything, at full precision (``null`` for an undefined value)."""
    return {"settings": dict(settings),
            "scores": {k: None if math.isnan(v) else v for k, v in evaluation.scores.items()},
            "instances": evaluation.total,
            "empty_predictions": [{"index": i, "reference": r} for i, r in evaluation.empty],
            "normalization": {"references": [{"index": i, "original": a, "normalized": b}
                                             for i, a, b in evaluation.normalized_references],
                              "predictions": [{"index": i, "original": a, "normalized": b}
                                              for i, a, b in evaluation.normalized_predictions]},
            "warnings": list(evaluation.warnings)}

