"""unbabel-comet 2.2.7's own code, run in its own environment (it pins numpy<2): tiny models and their scores.

``build OUT TEXT`` trains a sentencepiece unigram model on TEXT (relative paths, so the file is the same on every
run), writes an XLM-R tokenizer (``XLMRobertaTokenizerFast``, ``tokenizer.json`` included) and a 2-layer XLM-R
configuration (hidden size 32) into OUT/encoder, then builds one model per family with unbabel-comet's own classes,
random weights from a fixed seed (every parameter redrawn from N(0, 0.2) so scores spread) -- two of them on a
2-layer XLM-R XL configuration (OUT/encoder-xl: pre-norm, CometKiwi 23 XL's and xCOMET's encoder) -- and saves each as
unbabel-comet loads it: ``OUT/NAME/hparams.yaml`` and ``OUT/NAME/checkpoints/model.ckpt`` (a Lightning checkpoint
written by ``Trainer.save_checkpoint``).  It prints the names built, as JSON.

``predict JOBS.json`` runs, for each job ``{"model": DIR, "samples": FILE.json, "batch": B}``,
``comet.load_from_checkpoint(DIR/checkpoints/model.ckpt).predict(samples, batch_size=B, gpus=0)`` (B default 16, as
``comet-score``) and prints a JSON list of ``{"scores": [...], "system_score": x}``, one a job, in their order.
"""
import json
import os
import sys
from pathlib import Path

#: name -> (class name, constructor arguments); hidden sizes small, like the encoder
FAMILIES = {
    "regression": ("RegressionMetric", {"layer_transformation": "sparsemax", "layer_norm": False, "pool": "avg"}),
    "regression-softmax": ("RegressionMetric", {"layer_transformation": "softmax", "layer_norm": True, "pool": "avg"}),
    "regression-cls": ("RegressionMetric", {"layer": 1, "pool": "cls", "final_activation": "Sigmoid"}),
    "referenceless": ("ReferencelessRegression", {"layer_transformation": "softmax", "layer_norm": True}),
    "unified-kiwi": ("UnifiedMetric", {"input_segments": ["mt", "src"], "layer_transformation": "sparsemax"}),
    "unified-ref": ("UnifiedMetric", {"input_segments": ["mt", "src", "ref"], "layer_transformation": "softmax"}),
    # XLM-R XL encoders (CometKiwi 23 XL/XXL's and xCOMET's layout), pre-norm
    "xl-kiwi": ("UnifiedMetric", {"input_segments": ["mt", "src"], "layer_transformation": "sparsemax",
                                  "encoder_model": "XLM-RoBERTa-XL"}),
    "xl-regression": ("RegressionMetric", {"layer_transformation": "softmax", "layer_norm": True,
                                           "encoder_model": "XLM-RoBERTa-XL"}),
    # xCOMET: a unified model with a token tagger on the last hidden state; its score adds the MQM of the spans
    "xcomet": ("XCOMETMetric", {"word_layer": 2, "encoder_model": "XLM-RoBERTa-XL"}),
}


def build(out: Path, text: Path) -> None:
    import sentencepiece as spm
    import torch
    from transformers import XLMRobertaConfig, XLMRobertaTokenizerFast

    encoder = out / "encoder"
    encoder.mkdir(parents=True, exist_ok=True)
    here, relative = os.getcwd(), os.path.relpath(text, encoder)
    os.chdir(encoder)
    try:
        spm.SentencePieceTrainer.train(input=relative, model_prefix="spm", vocab_size=4000,
                                       model_type="unigram", character_coverage=0.9995, hard_vocab_limit=False, seed_sentencepiece_size=100000,
                                       num_threads=1, minloglevel=2)
    finally:
        os.chdir(here)
    tokenizer = XLMRobertaTokenizerFast(vocab_file=str(encoder / "spm.model"))
    tokenizer.save_pretrained(str(encoder))
    XLMRobertaConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=64, max_position_embeddings=514, type_vocab_size=1, pad_token_id=1,
                     bos_token_id=0, eos_token_id=2).save_pretrained(str(encoder))
    from transformers import XLMRobertaXLConfig

    xl = out / "encoder-xl"
    tokenizer.save_pretrained(str(xl))
    XLMRobertaXLConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                       intermediate_size=64, max_position_embeddings=514, type_vocab_size=1, pad_token_id=1,
                       bos_token_id=0, eos_token_id=2).save_pretrained(str(xl))
    import comet.models as models
    import pytorch_lightning as ptl
    from pytorch_lightning.core.saving import save_hparams_to_yaml

    for seed, (name, (cls, kwargs)) in enumerate(FAMILIES.items()):
        torch.manual_seed(seed + 1)
        place = xl if kwargs.get("encoder_model") == "XLM-RoBERTa-XL" else encoder
        model = getattr(models, cls)(pretrained_model=str(place.resolve()), load_pretrained_weights=False,
                                     hidden_sizes=[48, 24], nr_frozen_epochs=0, **kwargs)
        with torch.no_grad():
            for p in model.parameters():
                p.normal_(0.0, 0.2)
            if hasattr(model, "hidden2tag"):  # larger tagger weights: tags change from token to token, spans close
                model.hidden2tag.weight.normal_(0.0, 1.0)
                model.hidden2tag.bias.zero_()
        folder = out / name
        (folder / "checkpoints").mkdir(parents=True, exist_ok=True)
        trainer = ptl.Trainer(accelerator="cpu", devices=1, logger=False, enable_checkpointing=False,
                              enable_progress_bar=False, enable_model_summary=False)
        trainer.strategy.connect(model)
        trainer.save_checkpoint(str(folder / "checkpoints" / "model.ckpt"))
        save_hparams_to_yaml(str(folder / "hparams.yaml"), dict(model.hparams))
    print(json.dumps(list(FAMILIES)))


def predict(jobs: Path) -> None:
    import comet

    out = []
    for job in json.loads(jobs.read_text(encoding="utf-8")):
        model = comet.load_from_checkpoint(str(Path(job["model"]) / "checkpoints" / "model.ckpt"))
        data = json.loads(Path(job["samples"]).read_text(encoding="utf-8"))
        got = model.predict(data, batch_size=job.get("batch", 16), gpus=0, progress_bar=False)
        out.append({"scores": [float(s) for s in got.scores], "system_score": float(got.system_score)})
    print(json.dumps(out))


if __name__ == "__main__":
    import logging
    import warnings

    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    if sys.argv[1] == "build":
        build(Path(sys.argv[2]), Path(sys.argv[3]).resolve())
    else:
        predict(Path(sys.argv[2]))
