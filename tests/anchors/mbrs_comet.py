"""mbrs 0.1.8's own COMET decoders on candidate lists: choices and expected utilities as JSON.

Run in unbabel-comet 2.2.7's environment (tests/anchors/comet_models.py says why it is a separate one) with mbrs on
PYTHONPATH (installed from PyPI with ``--no-deps``).  As ``mbrs_decode.py`` does, the three package ``__init__`` files
that import every neural metric eagerly (bert_score, bleurt, metricx) are not run (``mbrs_light.py``).  mbrs's
``download_model`` takes a hub name; the tests give a local checkpoint, so ``mbrs.metrics.comet.download_model`` and
``mbrs.metrics.cometkiwi.download_model`` are replaced by the identity (the checkpoint path goes to unbabel-comet's
``load_from_checkpoint`` unchanged).

argv: DECODER (mbr | aggregate_mbr | rerank | centroid_mbr | probabilistic_mbr | pruning_mbr) CHECKPOINT
SEGMENTS.json (a list of {"source": s, "candidates": [...]}) [CONFIG.json: the decoder's Config fields; for
centroid_mbr the k-means fields under "kmeans"].  The efficient decoders' expected utilities are computed by mbrs's
own functions in the order its ``decode`` calls them (the decoder returns only the chosen candidate's).
"""
import importlib
import json
import sys

from mbrs_light import packages

packages()
comet_module = importlib.import_module("mbrs.metrics.comet")
kiwi_module = importlib.import_module("mbrs.metrics.cometkiwi")
for module in (comet_module, kiwi_module):
    module.download_model = lambda model: model
DecoderMBR = importlib.import_module("mbrs.decoders.mbr").DecoderMBR
DecoderAggregateMBR = importlib.import_module("mbrs.decoders.aggregate_mbr").DecoderAggregateMBR
DecoderRerank = importlib.import_module("mbrs.decoders.rerank").DecoderRerank

decoder_name, checkpoint, path = sys.argv[1:4]
config = json.load(open(sys.argv[4], encoding="utf-8")) if len(sys.argv) > 4 else {}
efficient = {"centroid_mbr": "DecoderCentroidMBR", "probabilistic_mbr": "DecoderProbabilisticMBR",
             "pruning_mbr": "DecoderPruningMBR"}
if decoder_name in efficient:
    functional = importlib.import_module("mbrs.functional")
    metric = comet_module.MetricCOMET(comet_module.MetricCOMET.Config(model=checkpoint, cpu=True))
    D = getattr(importlib.import_module(f"mbrs.decoders.{decoder_name}"), efficient[decoder_name])
    if "kmeans" in config:
        config["kmeans"] = importlib.import_module("mbrs.modules.kmeans").Kmeans.Config(**config["kmeans"])
    decoder = D(D.Config(**config), metric)
    out = []
    for segment in json.load(open(path, encoding="utf-8")):
        candidates, source = segment["candidates"], segment["source"]
        chosen = decoder.decode(candidates, candidates, source=source, nbest=1)
        row = {"choice": int(chosen.idx[0]), "score": float(chosen.score[0])}
        if decoder_name == "centroid_mbr":
            hyp_ir, src_ir = metric.encode(candidates), metric.encode([source])
            centroids, assigns = hyp_ir.cluster(decoder.kmeans)
            matrix = metric.pairwise_scores_from_ir(hyp_ir, centroids, src_ir)
            lprobs = None
            if decoder.cfg.count_weight:
                ids, counts_nonzero = assigns.unique(return_counts=True)
                counts = ids.new_zeros(len(centroids))
                counts[ids] = counts_nonzero
                lprobs = counts.log().to(matrix)
            row["utilities"] = functional.expectation(matrix, lprobs=lprobs).tolist()
        elif decoder_name == "probabilistic_mbr":
            completed = decoder.pairwise_scores_probabilistic(candidates, candidates, source)
            row["utilities"] = functional.expectation(completed).tolist()
        out.append(row)
    print(json.dumps({"segments": out}))
    sys.exit(0)
if decoder_name == "rerank":
    metric = kiwi_module.MetricCOMETkiwi(kiwi_module.MetricCOMETkiwi.Config(model=checkpoint, cpu=True))
    decoder = DecoderRerank(DecoderRerank.Config(), metric)
else:
    metric = comet_module.MetricCOMET(comet_module.MetricCOMET.Config(model=checkpoint, cpu=True))
    decoder = (DecoderMBR if decoder_name == "mbr" else DecoderAggregateMBR)(DecoderMBR.Config(), metric)
out = []
for segment in json.load(open(path, encoding="utf-8")):
    candidates, source = segment["candidates"], segment["source"]
    if decoder_name == "mbr":
        expected = metric.expected_scores(candidates, candidates, source)
        chosen = decoder.decode(candidates, candidates, source=source, nbest=1)
    elif decoder_name == "aggregate_mbr":
        expected = metric.expected_scores_reference_aggregation(candidates, candidates, source)
        chosen = decoder.decode(candidates, candidates, source=source, nbest=1)
    else:
        expected = metric.scores(candidates, [source] * len(candidates))
        chosen = decoder.decode(candidates, source=source, nbest=1)
    out.append({"choice": int(chosen.idx[0]), "utilities": [float(v) for v in expected.tolist()]})
print(json.dumps({"segments": out}))
