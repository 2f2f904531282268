"""A predict-only translation environment scored with token-overlap F1.

``Env(number_episodes=20)`` splits a parallel dataset into episodes in a seeded, deterministic
order.  ``get_next_task()`` returns ``{"X_test": np.array of sources, "y_test": np.array of
references}``; the agent predicts translations; ``evaluate(predictions, true_labels)`` returns the
mean sentence token-overlap F1 in [0, 1] (the ``token_f1`` plugin, multiset overlap of whitespace
tokens).  ``reset()`` starts over; ``is_complete()`` says whether every episode was served.

Datasets are JSON: ``{"description", "num_pairs", "pairs": [{"en": ..., "de": ...}, ...]}`` with
configurable language keys; the default (200 WMT21 en-de pairs) ships in the package.
"""
from __future__ import annotations

import json
import random
from importlib import resources
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from evalpipe.errors import InputError, UsageError
from evalpipe.registry import load_metric

DEFAULT_DATASET = "en-de.pairs.json"


def load_pairs(path: Optional[str], source: str, target: str) -> List[Dict[str, str]]:
    """The ``pairs`` of a dataset file (or of the shipped default), validated."""
    file = resources.files("evalpipe").joinpath("demo", DEFAULT_DATASET) if path is None else Path(path)
    name, text = path or f"<default {DEFAULT_DATASET}>", file.read_text(encoding="utf-8")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{name}: expected JSON, {exc}") from None
    pairs = doc.get("pairs") if isinstance(doc, dict) else None
    if not isinstance(pairs, list) or not pairs:
        raise InputError(f'{name}: expected {{"pairs": [{{"{source}": ..., "{target}": ...}}, ...]}} with at least one pair')
    for i, pair in enumerate(pairs):
        if not isinstance(pair, dict) or not isinstance(pair.get(source), str) or not isinstance(pair.get(target), str):
            raise InputError(f"{name}: pair {i + 1} lacks a string {source!r} or {target!r} field")
    if "num_pairs" in doc and doc["num_pairs"] != len(pairs):
        raise InputError(f"{name}: num_pairs says {doc['num_pairs']} but the file has {len(pairs)} pairs")
    return pairs


class Env:
    """Episodes of (source, reference) pairs for a predict-only translation agent."""

    def __init__(self, number_episodes: int = 20, dataset: Optional[str] = None, source: str = "en",
                 target: str = "de", seed: int = 0, metric_options: Optional[Dict[str, Any]] = None) -> None:
        pairs = load_pairs(dataset, source, target)
        if not 1 <= number_episodes <= len(pairs):
            raise UsageError(f"number_episodes must be between 1 and {len(pairs)} (the number of pairs), "
                             f"got {number_episodes}")
        order = list(range(len(pairs)))
        random.Random(seed).shuffle(order)
        self.episodes = [order[k::number_episodes] for k in range(number_episodes)]
        self.sources = [p[source] for p in pairs]
        self.targets = [p[target] for p in pairs]
        self.metric = load_metric("token_f1", **(metric_options or {}))
        self.number_episodes = number_episodes
        self._next = 0

    def get_next_task(self) -> Dict[str, np.ndarray]:
        """The next episode's ``X_test`` (sources) and ``y_test`` (references)."""
        if self.is_complete():
            raise RuntimeError(f"all {self.number_episodes} episodes were served; call reset() to start over")
        idx = self.episodes[self._next]
        self._next += 1
        return {"X_test": np.array([self.sources[i] for i in idx], dtype=object),
                "y_test": np.array([self.targets[i] for i in idx], dtype=object)}

    def evaluate(self, predictions: Sequence[str], true_labels: Sequence[str]) -> float:
        """Mean sentence token-overlap F1 of ``predictions`` against ``true_labels``, in [0, 1]."""
        predictions, true_labels = list(predictions), list(true_labels)
        if len(predictions) != len(true_labels):
            raise InputError(f"expected {len(true_labels)} predictions (one per reference), got {len(predictions)}")
        return self.metric.corpus_score([str(p) for p in predictions], [[str(t) for t in true_labels]])

    def reset(self) -> None:
        self._next = 0

    def is_complete(self) -> bool:
        return self._next >= self.number_episodes


class CopySourceAgent:
    """A baseline agent that 'translates' by copying the source (shared names and numbers score)."""

    def reset(self) -> None:
        pass

    def predict(self, X_test: Sequence[str]) -> List[str]:
        return [str(x) for x in X_test]
