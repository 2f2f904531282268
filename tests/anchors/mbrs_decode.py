"""Run mbrs 0.1.8's own decoders on candidate lists and print their choices and expected utilities as JSON.

Run as a script in a subprocess whose PYTHONPATH holds mbrs (installed from PyPI with ``--no-deps`` at test
time) and whose environment has torch, sacrebleu, fastchrf, simple-parsing, tabulate and tqdm (test extras).
``mbrs/metrics/__init__.py`` imports every neural metric eagerly (bert_score, comet, bleurt), and
``mbrs/selectors/__init__.py`` and ``mbrs/decoders/__init__.py`` import modules that need them, so this
script does not run those three ``__init__`` files (``mbrs_light.py`` beside it registers light packages) and
imports the modules it needs: ``metrics.chrf``, ``metrics.bleu``, ``metrics.ter``, ``decoders.mbr``,
``decoders.aggregate_mbr``.

argv: METRIC(chrf|chrf++|bleu|ter) DECODER(mbr|aggregate_mbr) CANDIDATES.json (a list of lists of strings)
[LPROBS.json] (a list per segment: the candidates' log-probabilities as pseudo-references, mbrs's
``reference_lprobs``, given as a float32 tensor)
"""
import importlib
import json
import sys

from mbrs_light import packages

packages()
MetricChrF = importlib.import_module("mbrs.metrics.chrf").MetricChrF
MetricBLEU = importlib.import_module("mbrs.metrics.bleu").MetricBLEU
MetricTER = importlib.import_module("mbrs.metrics.ter").MetricTER
DecoderMBR = importlib.import_module("mbrs.decoders.mbr").DecoderMBR
DecoderAggregateMBR = importlib.import_module("mbrs.decoders.aggregate_mbr").DecoderAggregateMBR

name, decoder_name, path = sys.argv[1:4]
lprobs = json.load(open(sys.argv[4], encoding="utf-8")) if len(sys.argv) > 4 else None
if name in ("chrf", "chrf++"):
    metric = MetricChrF(MetricChrF.Config(word_order=2 if name == "chrf++" else 0, num_workers=1))
elif name == "bleu":
    metric = MetricBLEU(MetricBLEU.Config(num_workers=1))
else:
    metric = MetricTER(MetricTER.Config(num_workers=1))
decoder = (DecoderMBR if decoder_name == "mbr" else DecoderAggregateMBR)(DecoderMBR.Config(), metric)
out = []
for g, candidates in enumerate(json.load(open(path, encoding="utf-8"))):
    lp = None
    if lprobs is not None:
        import torch

        lp = torch.tensor(lprobs[g], dtype=torch.float32)
    if decoder_name == "mbr":
        expected = metric.expected_scores(candidates, candidates, reference_lprobs=lp)
    else:
        expected = metric.expected_scores_reference_aggregation(candidates, candidates, reference_lprobs=lp)
    chosen = decoder.decode(candidates, candidates, nbest=1, reference_lprobs=lp)
    out.append({"choice": int(chosen.idx[0]), "score": float(chosen.score[0]),
                "utilities": [float(v) for v in expected.tolist()]})
print(json.dumps({"config": repr(metric.cfg), "segments": out}))
