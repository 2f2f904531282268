"""The target unit of text latency: SimulEval 1.1.4's ``--eval-latency-unit word|char|spm``.

The unit decides two things (``simuleval/evaluator/instance.py``):

* a reference's length |R|, which AL, AP, LAAL and YAAL use: ``word`` -- whitespace-separated words
  (evalpipe's count, ``len(text.split())``; SimulEval and OmniSTEval split on single spaces, so a double space
  adds an empty word there and a no-break space joins two: the metrics' ``reference_length=omnisteval`` counts so); ``char`` -- ``len(text.strip())``, SimulEval's and OmniSTEval's count (spaces inside the
  text count); ``spm`` -- the number of pieces a sentencepiece model cuts the text into
  (``encode(text, out_type=str)``);
* how an agent's text output is cut into target tokens, each with its own delay (:func:`target_tokens`):
  ``word`` and ``spm`` -- ``text.strip().split()`` (an spm agent writes pieces separated by spaces);
  ``char`` -- every character but the spaces (``list(text.replace(" ", ""))``).

Chinese and Japanese targets are scored in characters; SimulEval issue #19 asked for that unit.
"""
from __future__ import annotations

import os
from functools import lru_cache
from typing import Any, List, Sequence

import numpy as np

from evalpipe.errors import MissingDependency, OptionError
from evalpipe.evaluators.formulas.word_counts import word_counts

UNITS = ("word", "char", "spm")


@lru_cache(maxsize=8)
def spm_processor(path: str) -> Any:
    """The sentencepiece model at ``path``, loaded once per process."""
    if not path:
        raise OptionError("target_unit=spm needs the sentencepiece model: -o spm_model=FILE.model")
    if not os.path.isfile(path):
        raise OptionError(f"spm_model: {path}: no such file (a sentencepiece .model file)")
    try:
        import sentencepiece
    except ImportError:
        raise MissingDependency.module("sentencepiece", "target_unit=spm") from None
    try:
        return sentencepiece.SentencePieceProcessor(model_file=path)
    except (OSError, RuntimeError) as exc:
        raise OptionError(f"spm_model: {path}: not a sentencepiece model ({str(exc).splitlines()[0][:120]})") from None


def reference_lengths(texts: Sequence[Any], unit: str, spm_model: str = "", single_spaces: bool = False) -> np.ndarray:
    """|R| of every text in ``unit`` as float64 (0 for an entry that is not a string); ``single_spaces``: words
    counted as SimulEval and OmniSTEval count them, ``len(text.split(" "))``."""
    if unit == "word" and single_spaces:
        return np.array([len(t.split(" ")) if isinstance(t, str) else 0 for t in texts], dtype=np.float64)
    if unit == "word":
        return word_counts(texts)
    if unit == "char":
        return np.array([len(t.strip()) if isinstance(t, str) else 0 for t in texts], dtype=np.float64)
    if unit == "spm":
        processor = spm_processor(spm_model)
        strings = [t if isinstance(t, str) else "" for t in texts]
        pieces = processor.encode(strings, out_type=str) if strings else []
        return np.array([len(p) if isinstance(t, str) else 0 for p, t in zip(pieces, texts)], dtype=np.float64)
    raise OptionError(f"expected a target unit among {', '.join(UNITS)}, got {unit!r}")


def target_tokens(text: str, unit: str) -> List[str]:
    """The target tokens of an agent's output ``text`` in ``unit`` (each gets one delay)."""
    if unit == "char":
        return list(text.replace(" ", ""))
    if unit in ("word", "spm"):
        return text.strip().split()
    raise OptionError(f"expected a target unit among {', '.join(UNITS)}, got {unit!r}")
