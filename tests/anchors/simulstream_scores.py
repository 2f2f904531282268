"""Run simulstream 1.0.0's own metric code on one case and print its values as JSON (run as a script in a
subprocess whose PYTHONPATH holds simulstream, installed from PyPI with --no-deps at test time, and a
stub ``comet`` module: simulstream's quality registry imports comet eagerly, and COMET is not used).

argv: LOG AUDIO_DEFINITION REFERENCE EVAL_CONFIG LATENCY_UNIT [BLEU_TOKENIZER]
"""
import json
import sys
from argparse import Namespace

from simulstream.config import yaml_config
from simulstream.metrics.readers import LogReader, YamlReferenceReader
from simulstream.metrics.scorers.latency import LatencyScoringSample
from simulstream.metrics.scorers.latency.stream_laal import StreamLaal
from simulstream.metrics.scorers.quality import QualityScoringSample
from simulstream.metrics.scorers.quality.sacrebleu import SacreBLEUScorer
from simulstream.metrics.stats import NormalizedErasure, RealTimeFactor

log, audio, ref, config, unit = sys.argv[1:6]
tokenizer = sys.argv[6] if len(sys.argv) > 6 else "13a"
eval_config = yaml_config(config)
reader = LogReader(eval_config, log, latency_unit=unit)
outputs = reader.final_outputs_and_latencies()
references = YamlReferenceReader(audio, ref).references
samples = [LatencyScoringSample(name, outputs[name], references[name]) for name in references]
latency = StreamLaal(Namespace(latency_unit=unit)).score(samples)
texts = YamlReferenceReader(audio, ref).get_reference_texts()
quality_reader = LogReader(eval_config, log)  # score_quality builds its reader with the default unit
finals = quality_reader.final_outputs()
bleu = SacreBLEUScorer(Namespace(latency_unit=unit, tokenizer=tokenizer)).score(
    [QualityScoringSample(name, finals[name], texts[name]) for name in texts])
print(json.dumps({
    "stream_laal": latency.ideal_latency, "stream_laal_ca": latency.computational_aware_latency, "bleu": bleu,
    "normalized_erasure": NormalizedErasure().compute(reader), "real_time_factor": RealTimeFactor().compute(reader),
    "outputs": {name: [o.final_text, o.ideal_delays, o.computational_aware_delays] for name, o in outputs.items()},
}, ensure_ascii=False))
