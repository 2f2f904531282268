"""Run mbrs 0.1.8's own decoders on candidate lists and print their choices and expected utilities as JSON.

Run as a script in a subprocess whose PYTHONPATH holds mbrs (installed from PyPI with ``--no-deps`` at test
time) and whose environment has torch, sacrebleu, fastchrf, simple-parsing, tabulate and tqdm (test extras).
``mbrs/metrics/__init__.py`` imports every neural metric eagerly (bert_score, comet, bleurt), and
``mbrs/selectors/__init__.py`` and ``mbrs/decoders/__init__.py`` import modules that need them, so this
script does not run those three ``__init__`` files: it registers empty packages ``mbrs.metrics``,
``mbrs.selectors`` and ``mbrs.decoders`` (``types.ModuleType`` with ``__path__`` set to the real folders)
and imports the modules it needs from them -- ``metrics.base``, ``metrics.chrf``, ``metrics.bleu``,
``metrics.ter``, ``selectors.base``, ``selectors.nbest``, ``decoders.base``, ``decoders.mbr``,
``decoders.aggregate_mbr`` -- copying onto each package the names its modules import from it.

argv: METRIC(chrf|chrf++|bleu|ter) DECODER(mbr|aggregate_mbr) CANDIDATES.json (a list of lists of strings)
"""
import importlib
import json
import os
import sys
import types

import mbrs

root = os.path.dirname(mbrs.__file__)


def package(name, *modules):
    pkg = types.ModuleType(f"mbrs.{name}")
    pkg.__path__ = [os.path.join(root, name)]
    sys.modules[f"mbrs.{name}"] = pkg
    setattr(mbrs, name, pkg)
    return pkg


metrics = package("metrics")
base = importlib.import_module("mbrs.metrics.base")
for attr in ("Metric", "MetricAggregatable", "MetricAggregatableCache", "MetricBase", "MetricCacheable",
             "MetricReferenceless", "get_metric", "register"):
    setattr(metrics, attr, getattr(base, attr))
MetricChrF = importlib.import_module("mbrs.metrics.chrf").MetricChrF
MetricBLEU = importlib.import_module("mbrs.metrics.bleu").MetricBLEU
MetricTER = importlib.import_module("mbrs.metrics.ter").MetricTER
selectors = package("selectors")
selector_base = importlib.import_module("mbrs.selectors.base")
for attr in ("Selector", "register", "get_selector"):
    setattr(selectors, attr, getattr(selector_base, attr))
nbest = importlib.import_module("mbrs.selectors.nbest")
selectors.SelectorNbest = nbest.SelectorNbest
selectors.SELECTOR_NBEST = nbest.SelectorNbest(nbest.SelectorNbest.Config())  # as selectors/__init__.py makes it
decoders = package("decoders")
decoder_base = importlib.import_module("mbrs.decoders.base")
for attr in ("DecoderBase", "DecoderReferenceBased", "DecoderReferenceless", "register", "get_decoder"):
    setattr(decoders, attr, getattr(decoder_base, attr))
DecoderMBR = importlib.import_module("mbrs.decoders.mbr").DecoderMBR
decoders.DecoderMBR = DecoderMBR
DecoderAggregateMBR = importlib.import_module("mbrs.decoders.aggregate_mbr").DecoderAggregateMBR

name, decoder_name, path = sys.argv[1:4]
if name in ("chrf", "chrf++"):
    metric = MetricChrF(MetricChrF.Config(word_order=2 if name == "chrf++" else 0, num_workers=1))
elif name == "bleu":
    metric = MetricBLEU(MetricBLEU.Config(num_workers=1))
else:
    metric = MetricTER(MetricTER.Config(num_workers=1))
decoder = (DecoderMBR if decoder_name == "mbr" else DecoderAggregateMBR)(DecoderMBR.Config(), metric)
out = []
for candidates in json.load(open(path, encoding="utf-8")):
    if decoder_name == "mbr":
        expected = metric.expected_scores(candidates, candidates)
    else:
        expected = metric.expected_scores_reference_aggregation(candidates, candidates)
    chosen = decoder.decode(candidates, candidates, nbest=1)
    out.append({"choice": int(chosen.idx[0]), "score": float(chosen.score[0]),
                "utilities": [float(v) for v in expected.tolist()]})
print(json.dumps({"config": repr(metric.cfg), "segments": out}))
