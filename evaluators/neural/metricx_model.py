"""A MetricX model folder, its tokenizer and the batched forward pass (:mod:`.mt5`).

The folder is a Hugging Face model folder (a path, or a hub id found in the local cache: :mod:`.hub`):
``config.json`` (``model_type`` ``mt5``), the weights (:mod:`.weights`), and the mT5 tokenizer -- ``tokenizer.json``
(read by the ``tokenizers`` library, as transformers' fast tokenizer) or ``spiece.model`` (read by
``sentencepiece``, as transformers' ``T5Tokenizer``) -- there or in the folder ``tokenizer`` names (MetricX's own
checkpoints ship without one: google-research/metricx runs ``google/mt5-xl``'s).

Inputs are what google-research/metricx's ``predict.py`` builds: the text, tokenized, EOS added, cut at
``max_input_length`` tokens, and the last token removed -- so the pieces of the text, at most
``max_input_length - 1`` of them.  Batches hold ``batch_size`` inputs sorted by length (padding with id 0, masked), or
``batch_tokens`` padded tokens; on a GPU that runs out of memory a batch is halved down to one input
(:mod:`evalpipe.evaluators.neural.batches`).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np

from evalpipe.errors import InputError, MissingDependency
from evalpipe.optional_torch import load


DTYPES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}


def _torch():
    return load("MetricX models need the Python package 'torch', which is not installed: "
                "pip install 'evalpipe[metricx]'")


def read_tokenizer_json(path: Path, tokenizer_class: Any) -> Any:
    """A ``tokenizer.json`` whose unigram scores are the file's numbers exactly.

    The ``tokenizers`` library's own reader may land a score one unit in the last place away from the number written
    (its JSON float parsing is not correctly rounded), and two segmentations made of the same pieces in another order
    ("0" "00" and "00" "0") tie up to that last place; transformers (5.x) reads the scores with Python's ``json`` and
    builds the model from them, so evalpipe does the same and its input ids are transformers'."""
    from tokenizers import models

    tok = tokenizer_class.from_file(str(path))
    model = json.loads(path.read_text(encoding="utf-8")).get("model")
    if isinstance(model, dict) and model.get("type") == "Unigram" and model.get("vocab"):
        tok.model = models.Unigram([(str(piece), float(score)) for piece, score in model["vocab"]],
                                   model.get("unk_id"), bool(model.get("byte_fallback", False)))
    return tok


class Pieces:
    """The mT5 tokenizer of a folder: ``tokenizer.json`` (tokenizers) or ``spiece.model`` (sentencepiece)."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "tokenizer.json"
        if self.path.is_file():
            try:
                from tokenizers import Tokenizer
            except ImportError:
                raise MissingDependency.module("tokenizers", "a MetricX tokenizer.json") from None
            try:
                self._fast = read_tokenizer_json(self.path, Tokenizer)
            except Exception as exc:  # noqa: BLE001 - a foreign file: one line
                raise InputError(f"not a tokenizers file: {exc}", str(self.path)) from None
            self._sp = None
            self.eos = self._fast.token_to_id("</s>")
            return
        self.path = folder / "spiece.model"
        if not self.path.is_file():
            raise InputError("expected the mT5 tokenizer, tokenizer.json or spiece.model, in the folder (or give "
                             "-o metricx.tokenizer=DIR: google/mt5-xl's folder for MetricX's own checkpoints)",
                             str(folder))
        try:
            import sentencepiece
        except ImportError:
            raise MissingDependency("the tokenizer spiece.model needs the Python package 'sentencepiece': pip install "
                                    "sentencepiece (or give a folder with tokenizer.json)") from None
        try:
            self._sp = sentencepiece.SentencePieceProcessor(model_file=str(self.path))
        except Exception as exc:  # noqa: BLE001
            raise InputError(f"not a sentencepiece model: {exc}", str(self.path)) from None
        self._fast = None
        self.eos = self._sp.eos_id()

    def encode(self, texts: Sequence[str]) -> List[List[int]]:
        """The pieces (ids) of each text, without special tokens."""
        if self._fast is not None:
            return [e.ids for e in self._fast.encode_batch(list(texts), add_special_tokens=False)]
        return [list(ids) for ids in self._sp.encode(list(texts))]

    def encode_continued(self, texts: Sequence[str]) -> List[List[int]]:
        """The pieces of each text as transformers' slow ``T5Tokenizer(legacy=False)`` makes them (what mbrs 0.1.8
        reads): the text after a word boundary, encoded behind ``<unk>`` whose pieces are then dropped."""
        if self._sp is None:
            raise InputError("-o metricx.inputs=mbrs reads spiece.model, as mbrs's T5Tokenizer does; this folder has "
                             "tokenizer.json only (give -o metricx.tokenizer=DIR with spiece.model)", str(self.path))
        skip = len(self._sp.encode("<unk>"))
        return [list(ids[skip:]) for ids in self._sp.encode(["<unk>\u2581" + t.replace("\u2581", " ") for t in texts])]


def read_config(folder: Path) -> Dict[str, Any]:
    path = folder / "config.json"
    if not path.is_file():
        raise InputError("expected a Hugging Face model folder: config.json, the weights and the mT5 tokenizer",
                         str(folder))
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"not JSON: {exc}", str(path)) from None
    if not isinstance(config, dict):
        raise InputError("expected a JSON object (the model's configuration)", str(path))
    if config.get("model_type") != "mt5":
        raise InputError(f"expected an mT5 model (model_type mt5, what MetricX-23 and -24 are), got model_type "
                         f"{config.get('model_type')!r}", str(path))
    from evalpipe.evaluators.neural.mt5 import ACTIVATIONS, READ_OUT

    if config.get("feed_forward_proj", "gated-gelu") not in ACTIVATIONS:
        raise InputError(f"feed_forward_proj {config.get('feed_forward_proj')!r} is not implemented here "
                         f"(only {', '.join(ACTIVATIONS)})", str(path))
    missing = [k for k in ("d_model", "d_kv", "d_ff", "num_heads", "num_layers", "vocab_size") if k not in config]
    if missing:
        raise InputError(f"the configuration lacks {', '.join(missing)}", str(path))
    if int(config["vocab_size"]) <= READ_OUT:
        raise InputError(f"a vocabulary of {config['vocab_size']} tokens has no token {READ_OUT} (<extra_id_10>), "
                         f"which MetricX reads its score from: not a MetricX model", str(path))
    return config


class MetricXModel:
    """A MetricX model ready to score (see the module docstring)."""

    def __init__(self, path: str, tokenizer: str = "", device: str = "auto", batch_size: int = 16,
                 threads: int = 0, dtype: str = "fp32") -> None:
        torch = _torch()
        from evalpipe.evaluators.neural.hub import resolve
        from evalpipe.evaluators.neural.mt5 import MT5Scorer, expected_weights
        from evalpipe.evaluators.neural.weights import WEIGHT_FILES, load_weights, weight_files

        self.folder = resolve(path, "a MetricX model")
        self.config = read_config(self.folder)
        self.files = weight_files(self.folder)
        if not self.files:
            raise InputError(f"expected the model's weights, one of {', '.join(WEIGHT_FILES)}", str(self.folder))
        self.pieces = Pieces(resolve(tokenizer, "a tokenizer") if tokenizer else self.folder)
        if dtype not in DTYPES:
            raise InputError(f"dtype expects one of {', '.join(DTYPES)}, got {dtype!r}")
        self.dtype = dtype
        from evalpipe.evaluators.neural.devices import resolve as devices

        self.devices = devices(torch, device)
        self.device = self.devices[0]
        from evalpipe.evaluators.neural.threads import Threads

        self.threads = Threads(torch, threads, self.device)
        weights = load_weights(self.files)
        wanted = expected_weights(self.config)
        where = str(self.files[0])
        if "shared.weight" not in weights and "encoder.embed_tokens.weight" in weights:
            weights["shared.weight"] = weights["encoder.embed_tokens.weight"]
        missing = sorted(set(wanted) - set(weights))
        if missing:
            raise InputError(f"the weights lack {missing[0]} (and {len(missing) - 1} more) of the mT5 model its "
                             f"config.json describes", where)
        for name, shape in wanted.items():
            if tuple(weights[name].shape) != shape:
                raise InputError(f"{name} has shape {tuple(weights[name].shape)}, config.json makes {shape}", where)
        kind = getattr(torch, DTYPES[dtype])
        #: one copy of the model per device (evaluators/neural/devices.py)
        self.models = [MT5Scorer({k: weights[k].to(device=d, dtype=kind) for k in wanted}, self.config)
                       for d in self.devices]
        self.model = self.models[0]
        self.batch_size = batch_size
        self.batch_tokens = 0  # padded tokens a batch holds at most (0: batch_size inputs only)
        self.truncated = 0  # inputs cut at max_input_length since the model was loaded
        self.timings = {"tokenize": 0.0, "encode": 0.0, "estimate": 0.0}  # seconds spent (score-corpus logs them)

    def content_id(self) -> str:
        from evalpipe.evaluators.neural.weights import content_id

        if not hasattr(self, "_content_id"):
            self._content_id = content_id(self.files)
        return self._content_id

    def part_inputs(self, rows: Sequence[Sequence[str]], max_length: int) -> Tuple[List[List[int]], List[bool]]:
        """Each row's input ids as mbrs 0.1.8 makes them: each part (prefix and text) tokenized on its own, the parts
        joined, no EOS, cut at ``max_length`` tokens; and whether it was cut."""
        import time

        start = time.perf_counter()
        distinct = sorted({part for row in rows for part in row})
        ids = dict(zip(distinct, self.pieces.encode_continued(distinct)))
        joined = [[i for part in row for i in ids[part]] for row in rows]
        self.timings["tokenize"] += time.perf_counter() - start
        return [j[:max_length] for j in joined], [len(j) > max_length for j in joined]

    def inputs(self, texts: Sequence[str], max_length: int) -> Tuple[List[List[int]], List[bool]]:
        """Each text's input ids as predict.py makes them, and whether it was cut."""
        import time

        start = time.perf_counter()
        keep = max_length - 1
        pieces = self.pieces.encode(texts)
        self.timings["tokenize"] += time.perf_counter() - start
        return [p[:keep] for p in pieces], [len(p) > keep for p in pieces]

    def score(self, sequences: Sequence[List[int]]) -> np.ndarray:
        """The clipped MetricX score of each input (float32)."""
        import time

        torch = _torch()
        began = time.perf_counter()
        from evalpipe.evaluators.neural.devices import run_on_devices

        values = run_on_devices(torch, len(self.models), [len(q) for q in sequences], self.batch_size,
                                self.batch_tokens,
                                lambda r, chunk: self._batch([sequences[i] for i in chunk], r).tolist())
        out = np.asarray(values, dtype=np.float32).reshape(len(sequences))
        self.timings["encode"] += time.perf_counter() - began
        return out

    def _batch(self, batch: List[List[int]], replica: int = 0) -> np.ndarray:
        torch = _torch()
        width = max(1, max(map(len, batch)))
        ids = torch.zeros((len(batch), width), dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for row, seq in enumerate(batch):
            ids[row, :len(seq)] = torch.tensor(seq, dtype=torch.long)
            mask[row, :len(seq)] = 1
        self.threads.for_batch(len(batch))
        with torch.inference_mode():
            device = self.devices[replica]
            values = self.models[replica](ids.to(device), mask.to(device))
            values = torch.clamp(values, 0, 25)
        return values.float().cpu().numpy()
