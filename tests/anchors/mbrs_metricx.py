"""mbrs 0.1.8's own MetricX MBR (``DecoderMBR`` with ``MetricMetricX``) on candidate lists: choices, expected
scores and the input ids of the first two pairs as JSON.

Run in unbabel-comet 2.2.7's environment (transformers 4.57: mbrs 0.1.8's ``MT5ForRegression`` imports names that
transformers 5 removed) with mbrs on PYTHONPATH (PyPI, ``--no-deps``), unchanged: ``MetricMetricX`` takes a hub id
from its own list and loads ``google/mt5-xl``'s tokenizer by hub id, so the test lays the tiny model and its
tokenizer out in a Hugging Face cache under those names and runs this with ``HF_HUB_CACHE`` there and
``HF_HUB_OFFLINE=1``.  As ``mbrs_comet.py`` does, the package ``__init__`` files that import every neural metric
eagerly are not run (``mbrs_light.py``).

argv: HUB_ID SEGMENTS.json (a list of {"source": s, "candidates": [...]})
"""
import importlib
import json
import sys

from mbrs_light import packages

packages()
metricx = importlib.import_module("mbrs.metrics.metricx")
DecoderMBR = importlib.import_module("mbrs.decoders.mbr").DecoderMBR

hub_id, path = sys.argv[1:3]
metric = metricx.MetricMetricX(metricx.MetricMetricX.Config(model=hub_id, cpu=True))
decoder = DecoderMBR(DecoderMBR.Config(), metric)
out = []
for segment in json.load(open(path, encoding="utf-8")):
    candidates, source = segment["candidates"], segment["source"]
    expected = metric.expected_scores(candidates, candidates, source)
    chosen = decoder.decode(candidates, candidates, source=source, nbest=1)
    pairs = [metric._concatenate_inputs(metric._encode_hypothesis(h), metric._encode_reference(r),
                                        metric._encode_source(source)) for h in candidates[:1] for r in candidates[:2]]
    ids = [metric._collate([p])["input_ids"][0].tolist() for p in pairs]  # what the model reads (truncated)
    out.append({"choice": int(chosen.idx[0]), "utilities": [float(v) for v in expected.tolist()], "ids": ids})
print(json.dumps({"segments": out}))
