"""Scores of finished simultaneous-translation instances, through the one scoring path.

BLEU, chrF and TER are sacrebleu's corpus scores of predictions against references (BLEU with the
chosen tokenizer, chrF and TER with sacrebleu's defaults; their sacrebleu signatures are reported
under ``signatures``, as fairseq's 2020 server reported TER beside BLEU); AL, AP, DAL and LAAL are means
over sentences with a non-empty hypothesis, computed by the latency plugins' batched path (the same
rows every engine computes).  The latency convention -- SimulEval 1.1 or the IWSLT 2020 server -- is
decided here, in :func:`latency_specs`, for the server's ``/result``, its ``metrics.tsv`` and the
``simul`` commands alike.
"""
from __future__ import annotations

from typing import Any, Dict, List, Sequence

from evalpipe.engines import Engine, Job
from evalpipe.engines.local import LocalEngine
from evalpipe.registry import MetricSpec
from evalpipe.simul.records import records_input

LATENCY = ("AL", "AP", "DAL", "LAAL")


def latency_specs(convention: str = "simuleval", unit: str = "text", target_unit: str = "word",
                  spm_model: str = "") -> Dict[str, MetricSpec]:
    """The latency metrics reported for a run, under one convention (``simuleval`` or ``iwslt2020``); the target
    unit (``word``, ``char``, ``spm``) reaches those that count the reference (AL, AP, LAAL)."""
    counted = {"target_unit": target_unit, **({"spm_model": spm_model} if spm_model else {})} \
        if target_unit != "word" else {}
    return {name: MetricSpec.of(name.lower(), {"convention": convention, "unit": unit,
                                               **(counted if name != "DAL" else {})}) for name in LATENCY}


def score_instances(instances: Sequence[Dict[str, Any]], convention: str = "simuleval", tokenize: str = "13a",
                    unit: str = "text", engine: Engine = None, target_unit: str = "word",
                    spm_model: str = "") -> Dict[str, Any]:
    """``{"BLEU", "chrF", "TER", "AL", "AP", "DAL", "LAAL", "sentences", "without_hypothesis", "convention",
    "signatures"}`` of instance records; a latency metric with no scored sentence is None."""
    data, engine = records_input(instances), engine or LocalEngine()
    out: Dict[str, Any] = {}
    signatures: Dict[str, str] = {}
    quality = {"BLEU": MetricSpec.of("bleu", {"tokenize": tokenize}), "chrF": MetricSpec.of("chrf"),
               "TER": MetricSpec.of("ter")}
    for name, spec in quality.items():
        metric = spec.build()
        out[name] = metric.score(engine.total(Job(spec, data)))
        signatures[name] = metric.signature(data.nrefs)
    for name, spec in latency_specs(convention, unit, target_unit, spm_model).items():
        total = engine.total(Job(spec, data))
        out[name] = spec.build().score(total) if total[1] else None
    out.update({"sentences": len(instances), "without_hypothesis": sum(1 for i in instances if not i.get("delays")),
                "convention": convention, "signatures": signatures})
    return out


def sentence_latency(instances: Sequence[Dict[str, Any]], convention: str = "simuleval",
                     unit: str = "text", target_unit: str = "word", spm_model: str = "") -> List[Dict[str, Any]]:
    """Per-sentence AL, AP, DAL, LAAL of instance records (None for a sentence without hypothesis)."""
    data = records_input(instances)
    columns = {name: LocalEngine().rows(Job(spec, data))
               for name, spec in latency_specs(convention, unit, target_unit, spm_model).items()}
    return [{name: (rows[i][0] if rows[i][1] else None) for name, rows in columns.items()}
            for i in range(len(instances))]
