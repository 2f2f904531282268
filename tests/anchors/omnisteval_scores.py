"""Run OmniSTEval 0.1.10's own pipeline (the steps of ``omnisteval longform`` through its Python API: load,
resegment, evaluate) on one case and print its scores and resegmented instances as JSON.  Run as a script
in a subprocess; for simulstream logs its PYTHONPATH holds simulstream (OmniSTEval reads them with
simulstream's own reader).

argv: FORMAT(simulstream|jsonl|text) HYPOTHESIS SEGMENTATION REFERENCE CONFIG(or -) LEVEL(word|char)
      LANG(or -) [fix]
(SEGMENTATION: the audio definition, or the text segmentation for FORMAT text)
"""
import json
import sys

from omnisteval import evaluate_instances, resegment
from omnisteval.io import load_resegmentation_inputs

fmt, hyp, seg, ref, config, level, lang = sys.argv[1:8]
fix = len(sys.argv) > 8 and sys.argv[8] == "fix"
char = level == "char"
ref_words, hyp_words, segmentation, ref_sentences = load_resegmentation_inputs(
    seg if fmt != "text" else None, seg if fmt == "text" else None, ref, hyp, hypothesis_format=fmt,
    char_level=char, fix_emission_ca_flag=fix, simulstream_config_file=None if config == "-" else config)
instances, dicts = resegment(ref_words, hyp_words, segmentation, ref_sentences, char_level=char,
                             lang=None if lang == "-" else lang)
scores, _, _ = evaluate_instances(instances, is_longform=True, compute_latency=fmt != "text",
                                  fix_emission_ca_flag=fix)
print(json.dumps({"scores": scores, "instances": dicts}, ensure_ascii=False))
