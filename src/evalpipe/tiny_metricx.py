"""A tiny MetricX model with random weights, in the layout of google-research/metricx's checkpoints: for examples,
smoke tests, benches.

``python -m evalpipe.tiny_metricx OUT [--text FILE ...] [--seed N]`` writes into OUT:

* ``config.json``: an mT5 (``model_type`` mt5, gated GELU) of 2 encoder layers and 1 decoder layer, ``d_model`` 16,
  2 heads, and mT5's vocabulary size (250,112: MetricX reads its score from token 250089);
* ``model.safetensors``: every weight drawn from N(0, 0.5) with the seed (``shared``, ``encoder``, ``decoder``,
  ``lm_head``: the names of transformers' ``MT5ForConditionalGeneration`` and metricx's ``MT5ForRegression``);
* ``tokenizer.json`` and ``tokenizer_config.json``: a T5-style unigram tokenizer (``<pad>``=0, ``</s>``=1, ``<unk>``=2;
  words split at white space, ``▁`` word starts, ``</s>`` after each input: the pipeline transformers' ``T5Tokenizer``
  builds around a vocabulary, so transformers 4 and 5 read the file alike) trained by the ``tokenizers`` library on
  the texts given (default: the source and reference of the shipped WMT21 en-de demo).

The scores mean nothing; the arithmetic is a real MetricX's.  transformers loads these folders
(``MT5ForConditionalGeneration``, ``AutoTokenizer``) and gives the same scores (``tests/test_metricx.py``).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Optional, Sequence

from evalpipe.corpus import demo_texts, training_texts, write_atomically
from evalpipe.errors import InputError

CONFIG = {"architectures": ["MT5ForConditionalGeneration"], "model_type": "mt5", "d_model": 16, "d_kv": 8,
          "d_ff": 32, "num_layers": 2, "num_decoder_layers": 1, "num_heads": 2, "relative_attention_num_buckets": 32,
          "relative_attention_max_distance": 128, "dropout_rate": 0.1, "layer_norm_epsilon": 1e-06,
          "initializer_factor": 1.0, "feed_forward_proj": "gated-gelu", "is_encoder_decoder": True, "use_cache": True,
          "tie_word_embeddings": False, "vocab_size": 250112, "pad_token_id": 0, "eos_token_id": 1,
          "decoder_start_token_id": 0, "torch_dtype": "float32"}


def train_tokenizer(texts: Sequence[str], vocab_size: int = 800) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Metaspace(
        replacement="\u2581", prepend_scheme="always", split=True)])
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
    trainer = trainers.UnigramTrainer(vocab_size=vocab_size, special_tokens=["<pad>", "</s>", "<unk>"],
                                      unk_token="<unk>", show_progress=False)
    tok.train_from_iterator(list(texts), trainer=trainer)
    tok.post_processor = processors.TemplateProcessing(single="$A </s>", pair="$A </s> $B </s>",
                                                       special_tokens=[("</s>", 1)])
    return tok


def build(out: Path, texts: Optional[Sequence[str]] = None, seed: int = 1, config: Optional[dict] = None) -> Path:
    """Write a tiny MetricX model into ``out`` (module docstring; ``config``: fields to change); returns ``out``."""
    import torch

    from evalpipe.evaluators.neural.mt5 import expected_weights
    from evalpipe.evaluators.neural.weights import safetensors_bytes

    config = dict(CONFIG, **(config or {}))
    tok = train_tokenizer(texts if texts is not None else demo_texts())
    write_atomically(str(out / "tokenizer.json"), tok.to_str(pretty=True))
    write_atomically(str(out / "tokenizer_config.json"), json.dumps(
        {"tokenizer_class": "T5Tokenizer", "eos_token": "</s>", "pad_token": "<pad>", "unk_token": "<unk>",
         "extra_ids": 0, "model_max_length": 1000000}, indent=2) + "\n")
    write_atomically(str(out / "config.json"), json.dumps(config, indent=2) + "\n")
    generator = torch.Generator().manual_seed(seed)
    weights = {name: torch.empty(shape).normal_(0.0, 0.5, generator=generator)
               for name, shape in sorted(expected_weights(config).items())}
    _spread(weights, config, tok, texts if texts is not None else demo_texts())
    write_atomically(str(out / "model.safetensors"), safetensors_bytes(weights))
    return out


def _spread(weights: dict, config: dict, tok: Any, texts: Sequence[str]) -> None:
    """Make the input matter (the decoder's cross-attention output weights times 16) and set the read-out row (token
    250089 of lm_head) so that the scores of inputs like ``texts`` spread over about
    1.5..6.5 instead of clipping at 0: its direction is the decoder outputs' leading variation, its offset along their
    mean puts the mean score at 4 (random weights give read-outs that barely vary)."""
    import torch

    from evalpipe.evaluators.neural.mt5 import READ_OUT, MT5Scorer

    for name, value in weights.items():  # the input reaches the decoder's output through cross-attention: louder
        if ".EncDecAttention.o." in name:
            value.mul_(16.0)
    sample = [f"source: {a} candidate: {b}" for a, b in zip(texts[:24], reversed(texts[-24:]))]
    ids = [e.ids[:-1] for e in tok.encode_batch(sample)]
    width = max(map(len, ids))
    batch = torch.zeros((len(ids), width), dtype=torch.long)
    mask = torch.zeros_like(batch)
    for row, seq in enumerate(ids):
        batch[row, :len(seq)], mask[row, :len(seq)] = torch.tensor(seq), 1
    with torch.no_grad():
        y = MT5Scorer(weights, config).decoder_output(batch, mask)
    mean = y.mean(0)
    centred = y - mean
    direction = torch.linalg.svd(centred, full_matrices=False).Vh[0]
    spread = (centred @ direction).std()
    row = direction * (0.8 / spread)
    row = row + mean * ((4.0 - float(mean @ row)) / float(mean @ mean))
    weights["lm_head.weight"][READ_OUT] = row


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evalpipe.tiny_metricx", description=__doc__.split("\n")[0])
    parser.add_argument("out", help="the folder to write")
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
        build(Path(args.out), texts, args.seed)
    except ImportError as exc:
        print(f"Error: python -m evalpipe.tiny_metricx needs the Python package {(exc.name or '?').split('.')[0]!r}, "
              f"which is not installed: pip install 'evalpipe[metricx]'", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"Error: {exc.filename or args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
