"""A tiny COMET model with random weights, in the layout unbabel-comet writes: for examples, smoke tests, benches.

``python -m evalpipe.tiny_comet OUT [--family F] [--text FILE ...] [--seed N]`` writes into OUT:

* ``tokenizer.json``: an XLM-R-style unigram tokenizer (``<s>``=0, ``<pad>``=1, ``</s>``=2, ``<unk>``=3, ``<mask>``
  last; NFKC, ``▁`` word starts) trained by the ``tokenizers`` library on the texts given (default: the source and
  reference of the shipped WMT21 en-de demo);
* ``config.json``: a 2-layer XLM-R encoder, hidden size 32, 4 heads;
* ``hparams.yaml`` and ``checkpoints/model.ckpt``: the family's hyper-parameters (the keys unbabel-comet's classes
  take, ``pretrained_model`` pointing at OUT) and every weight drawn from N(0, 0.5) with the seed.

Families: ``regression`` (RegressionMetric: sparsemax mix, average pooling), ``referenceless``
(ReferencelessRegression), ``unified`` (UnifiedMetric on ``[mt, src]``: CometKiwi's layout), ``unified-ref``
(UnifiedMetric on ``[mt, src, ref]``).  The scores mean nothing; the arithmetic is a real model's.  unbabel-comet
2.2.7 loads these folders and gives the same scores (``tests/test_comet.py``).
"""
from __future__ import annotations

import argparse
import io
import json
import sys
from pathlib import Path
from typing import Any, Dict, Optional, Sequence

from evalpipe.corpus import demo_texts, training_texts, write_atomically
from evalpipe.errors import InputError

FAMILIES: Dict[str, Dict[str, Any]] = {
    "regression": {"class_identifier": "regression_metric", "pool": "avg", "layer": "mix",
                   "layer_transformation": "sparsemax", "layer_norm": False},
    "referenceless": {"class_identifier": "referenceless_regression_metric", "pool": "avg", "layer": "mix",
                      "layer_transformation": "softmax", "layer_norm": True},
    "unified": {"class_identifier": "unified_metric", "sent_layer": "mix", "layer_transformation": "sparsemax",
                "layer_norm": True, "input_segments": ["mt", "src"], "word_level_training": False},
    "unified-ref": {"class_identifier": "unified_metric", "sent_layer": "mix", "layer_transformation": "softmax",
                    "layer_norm": True, "input_segments": ["mt", "src", "ref"], "word_level_training": False},
}
CONFIG = {"architectures": ["XLMRobertaModel"], "model_type": "xlm-roberta", "hidden_size": 32,
          "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 64, "hidden_act": "gelu",
          "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "max_position_embeddings": 514,
          "type_vocab_size": 1, "initializer_range": 0.02, "layer_norm_eps": 1e-05, "pad_token_id": 1,
          "bos_token_id": 0, "eos_token_id": 2, "position_embedding_type": "absolute"}


def train_tokenizer(texts: Sequence[str], vocab_size: int = 800) -> Any:
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always")
    trainer = trainers.UnigramTrainer(vocab_size=vocab_size, special_tokens=["<s>", "<pad>", "</s>", "<unk>"],
                                      unk_token="<unk>", show_progress=False)
    tok.train_from_iterator(list(texts), trainer=trainer)
    tok.add_special_tokens(["<mask>"])
    tok.post_processor = processors.TemplateProcessing(single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
                                                       special_tokens=[("<s>", 0), ("</s>", 2)])
    return tok


def build(out: Path, family: str = "regression", texts: Optional[Sequence[str]] = None, seed: int = 1) -> Path:
    """Write a tiny model of ``family`` into ``out`` (module docstring); returns ``out``."""
    import torch
    import yaml

    from evalpipe.evaluators.neural.encoder import XLMREncoder
    from evalpipe.evaluators.neural.estimator import Head

    tok = train_tokenizer(texts if texts is not None else demo_texts())
    write_atomically(str(out / "tokenizer.json"), tok.to_str(pretty=True))
    config = dict(CONFIG, vocab_size=tok.get_vocab_size())
    write_atomically(str(out / "config.json"), json.dumps(config, indent=2) + "\n")
    hparams = {"encoder_model": "XLM-RoBERTa", "pretrained_model": str(out.resolve()), "hidden_sizes": [48, 24],
               "activations": "Tanh", "final_activation": None, "dropout": 0.1, "batch_size": 4,
               **FAMILIES[family]}
    torch.manual_seed(seed)
    encoder = XLMREncoder(config)
    head = Head(hparams["class_identifier"], hparams, encoder.hidden_size, encoder.num_layers)
    state = {}
    with torch.no_grad():
        for prefix, module in (("encoder.model.", encoder), ("", head)):
            for key, value in module.state_dict().items():
                state[prefix + key] = value.normal_(0.0, 0.5).clone()
    saved = {k: v for k, v in hparams.items() if k != "class_identifier"}
    buffer = io.BytesIO()
    torch.save({"state_dict": state, "hyper_parameters": saved, "hparams_name": "kwargs", "epoch": 0,
                "global_step": 0, "pytorch-lightning_version": "2.6.6"}, buffer)
    write_atomically(str(out / "checkpoints" / "model.ckpt"), buffer.getvalue())
    write_atomically(str(out / "hparams.yaml"), yaml.safe_dump(hparams, sort_keys=True))
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evalpipe.tiny_comet", description=__doc__.split("\n")[0])
    parser.add_argument("out", help="the folder to write")
    parser.add_argument("--family", choices=sorted(FAMILIES), default="regression")
    parser.add_argument("--text", action="append", help="a text file to train the tokenizer on (repeat); "
                                                         "default: the shipped demo's source and reference")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    try:
        texts = training_texts(args.text) if args.text else None
    except InputError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    try:
        build(Path(args.out), args.family, texts, args.seed)
    except ImportError as exc:  # torch, tokenizers or yaml missing: what to install, in one line
        print(f"Error: python -m evalpipe.tiny_comet needs the Python package {(exc.name or '?').split('.')[0]!r}, "
              f"which is not installed: pip install 'evalpipe[comet]'", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"Error: {exc.filename or args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
