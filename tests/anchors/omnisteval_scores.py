"""Run OmniSTEval 0.1.10's own pipeline (the steps of ``omnisteval longform --hypothesis_format simulstream``
through its Python API: load, resegment, evaluate) on one case and print its scores and resegmented
instances as JSON.  Run as a script in a subprocess whose PYTHONPATH holds simulstream (OmniSTEval reads
simulstream logs with simulstream's own reader).

argv: LOG AUDIO_DEFINITION REFERENCE EVAL_CONFIG LEVEL(word|char) LANG(or -) [BLEU_TOKENIZER]
"""
import json
import sys

from omnisteval import evaluate_instances, resegment
from omnisteval.io import load_resegmentation_inputs

log, audio, ref, config, level, lang = sys.argv[1:7]
tokenizer = sys.argv[7] if len(sys.argv) > 7 else "13a"
char = level == "char"
ref_words, hyp_words, segmentation, ref_sentences = load_resegmentation_inputs(
    audio, None, ref, log, hypothesis_format="simulstream", char_level=char, simulstream_config_file=config)
instances, dicts = resegment(ref_words, hyp_words, segmentation, ref_sentences, char_level=char,
                             lang=None if lang == "-" else lang)
scores, _, _ = evaluate_instances(instances, is_longform=True, bleu_tokenizer=tokenizer)
print(json.dumps({"scores": scores, "instances": dicts}, ensure_ascii=False))
