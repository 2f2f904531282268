"""Run mbrs 0.1.8's efficient decoders and its selectors on candidate lists; print each segment's n-best as JSON.

Run as a script in a subprocess whose PYTHONPATH holds mbrs (installed from PyPI with ``--no-deps`` at test
time), in an environment with torch, sacrebleu and fastchrf; ``mbrs_light.py`` beside it registers mbrs's
packages without their eager ``__init__`` files (see there) and defines ``mbrs.metrics.Metrics`` as mbrs's own
``__init__`` does, for the diverse selector.  mbrs's classes are used unchanged.

argv: SPEC.json: {"metric": "chrf"|"bleu"|"ter", "metric_config": {its Config fields, optional},
"decoder": "mbr"|"aggregate_mbr"|"probabilistic_mbr"|"pruning_mbr", "config": {decoder Config fields},
"selector": "nbest"|"diverse", "selector_config": {...}, "nbest": N, "segments": [[candidate, ...], ...],
"lprobs": [[...], ...] or null, "choices_only": false}.  For each segment it prints the decoder's output (idx,
score) and, for probabilistic MBR, the expected utilities of its completed matrix (not with "choices_only": the
benchmark times the decoder alone).
"""
import importlib
import json
import sys

from mbrs_light import metric_enum, packages

metrics, selectors, decoders = packages()
metric_enum(metrics)
spec = json.load(open(sys.argv[1], encoding="utf-8"))
name = spec["metric"]
if name in ("chrf", "chrf++"):
    M = importlib.import_module("mbrs.metrics.chrf").MetricChrF
    metric = M(M.Config(**{"word_order": 2 if name == "chrf++" else 0, "num_workers": 1,
                           **spec.get("metric_config", {})}))
elif name == "bleu":
    M = importlib.import_module("mbrs.metrics.bleu").MetricBLEU
    metric = M(M.Config(**{"num_workers": 1, **spec.get("metric_config", {})}))
else:
    M = importlib.import_module("mbrs.metrics.ter").MetricTER
    metric = M(M.Config(**{"num_workers": 1, **spec.get("metric_config", {})}))
module = spec["decoder"]
D = {"mbr": "DecoderMBR", "aggregate_mbr": "DecoderAggregateMBR", "probabilistic_mbr": "DecoderProbabilisticMBR",
     "pruning_mbr": "DecoderPruningMBR"}[module]
D = getattr(importlib.import_module(f"mbrs.decoders.{module}"), D)
if spec["selector"] == "diverse":
    S = importlib.import_module("mbrs.selectors.diverse").SelectorDiverse
    selector = S(S.Config(**spec.get("selector_config", {})))
else:
    selector = selectors.SELECTOR_NBEST
decoder = D(D.Config(**spec.get("config", {})), metric, selector=selector)
out = []
for g, candidates in enumerate(spec["segments"]):
    lp = None
    if spec.get("lprobs") is not None:
        import torch

        lp = torch.tensor(spec["lprobs"][g], dtype=torch.float32)
    got = decoder.decode(candidates, candidates, nbest=spec["nbest"], reference_lprobs=lp)
    row = {"idx": [int(i) for i in got.idx], "score": [float(s) for s in got.score]}
    if module == "probabilistic_mbr" and decoder.cfg.reduction_factor > 1 and not spec.get("choices_only"):
        functional = importlib.import_module("mbrs.functional")
        completed = decoder.pairwise_scores_probabilistic(candidates, candidates)
        row["utilities"] = functional.expectation(completed, lprobs=lp).tolist()
    for key in ("nbest_objective_score", "nbest_expected_score", "nbest_diversity_score"):
        if hasattr(got, key):
            row[key] = float(getattr(got, key))
    out.append(row)
print(json.dumps({"segments": out}))
