"""The sentence-evaluator API: user evaluators over a data pool, run sequentially or in parallel.

Subclass :class:`SentenceEvaluator` and implement ``evaluate_item(item)``, which turns one item
(for example a sentence with its gold labels, scored with the user's model) into a stats vector
such as ``(correct, gold_total)``.  ``sequential_evaluate(data)`` and ``parallel_evaluate(data,
engine=...)`` run the items as a job (:class:`evalpipe.inputs.Items`) on an engine (the local one,
a process pool, or Spark), sum the vectors exactly (:mod:`evalpipe.sufficient_stats.vectors`) and
log the result in the familiar form ``Unlabelled accuracy: 0.8115 (26659, 32853)``; both give
the same numbers.  ``reports`` lists the figures to log: (label, numerator positions,
denominator positions), each figure being sum(numerators) / sum(denominators) of the totals.
"""
from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Dict, List, Optional, Sequence, Tuple

from evalpipe.engines import Engine, Job, make_engine
from evalpipe.errors import InputError
from evalpipe.inputs import Items
from evalpipe.sufficient_stats.vectors import format_number

log = logging.getLogger(__name__)


class SentenceEvaluator(ABC):
    """Base class of user evaluators (see the module docstring)."""

    STATS_FIELDS: ClassVar[Tuple[str, ...]] = ("correct", "gold_total")
    #: (label, numerator positions, denominator positions) of each logged figure
    reports: ClassVar[Sequence[Tuple[str, Tuple[int, ...], Tuple[int, ...]]]] = (("Accuracy", (0,), (1,)),)

    @abstractmethod
    def evaluate_item(self, item: Any) -> Sequence[float]:
        """The stats vector of one item (length ``len(STATS_FIELDS)``)."""
        raise NotImplementedError

    # -- as a job's spec: the evaluator is its own metric ----------------------------------------
    def build(self) -> "SentenceEvaluator":
        return self

    @property
    def num_stats(self) -> int:
        return len(self.STATS_FIELDS)

    # -- combining ---------------------------------------------------------------------------------
    def figures(self, totals: Sequence[float]) -> List[Tuple[str, float, float, float]]:
        """``[(label, value, numerator, denominator), ...]`` for the summed stats."""
        out = []
        for label, num_pos, den_pos in self.reports:
            num = sum(totals[i] for i in num_pos)
            den = sum(totals[i] for i in den_pos)
            out.append((label, num / den if den else 0.0, num, den))
        return out

    def format_figures(self, totals: Sequence[float]) -> List[str]:
        """Lines such as ``Unlabelled accuracy: 0.8115 (26659, 32853)``."""
        return [f"{label}: {value:.4f} ({format_number(num)}, {format_number(den)})"
                for label, value, num, den in self.figures(totals)]

    # -- running -----------------------------------------------------------------------------------
    def evaluate_on(self, engine: Engine, data: Sequence[Any]) -> Dict[str, Any]:
        """Evaluate every item on ``engine``: ``{"stats", "items", "scores"}``, logged."""
        items = Items(data)
        totals = engine.total(Job(self, items))
        for line in self.format_figures(totals):
            log.info(line)
        return {"stats": totals, "items": len(items),
                "scores": {label: value for label, value, _, _ in self.figures(totals)}}

    def sequential_evaluate(self, data: Sequence[Any]) -> Dict[str, Any]:
        """Evaluate every item in this process."""
        with make_engine("local") as engine:
            return self.evaluate_on(engine, data)

    def parallel_evaluate(self, data: Sequence[Any], engine: str = "pool", workers: int = 2,
                          spark_context: Any = None, spark_master: str = "local[2]",
                          shards: Optional[int] = None) -> Dict[str, Any]:
        """Shard ``data`` over a process pool (``engine="pool"``) or Spark (``engine="spark"``,
        reusing ``spark_context`` when given); same result as :meth:`sequential_evaluate`.

        With Spark, the evaluator's own module (and its predict function's) is shipped to the
        executors by value, so they need only evalpipe installed, not the user's code."""
        data = list(data)
        settings: Dict[str, Any] = {}
        if engine == "pool":
            settings["chunk_size"] = max(1, -(-len(data) // (shards or workers * 4)))
        elif engine == "spark":
            _ship_user_modules(self)
            settings.update(spark_master=spark_master, spark_context=spark_context)
        with make_engine(engine, workers, **settings) as runner:
            return self.evaluate_on(runner, data)


def _ship_user_modules(evaluator: Any) -> None:
    """Have Spark pickle the evaluator's own code by value, so executors need not import it.

    The modules of the evaluator class and of its callable attributes (the user's model or
    predict function) are registered with cloudpickle, unless they belong to evalpipe.
    """
    import sys

    from pyspark import cloudpickle

    objects = [type(evaluator), *[v for v in vars(evaluator).values() if callable(v)]]
    for obj in objects:
        name = getattr(obj, "__module__", None) or ""
        module = sys.modules.get(name)
        if module is not None and not name.startswith("evalpipe") and name not in sys.builtin_module_names:
            cloudpickle.register_pickle_by_value(module)


class LabelAccuracyEvaluator(SentenceEvaluator):
    """Tagging / dependency-head accuracy with a user model.

    Items are ``(tokens, gold_labels)``; ``predict(tokens)`` returns the predicted labels.  Stats:
    ``correct, gold_total, sentences``.  Logged: ``Unlabelled accuracy`` = correct / gold and
    ``Unlabelled attachment`` = (correct + sentences) / (gold + sentences) (each sentence's root
    attachment counted as correct).  A prediction of the wrong length is an error naming the item.
    """

    STATS_FIELDS = ("correct", "gold_total", "sentences")
    reports = (("Unlabelled accuracy", (0,), (1,)), ("Unlabelled attachment", (0, 2), (1, 2)))

    def __init__(self, predict: Any) -> None:
        self.predict = predict

    def evaluate_item(self, item: Any) -> List[int]:
        tokens, gold = item
        predicted = list(self.predict(tokens))
        if len(predicted) != len(gold):
            raise InputError(f"expected {len(gold)} predicted labels for {tokens!r}, got {len(predicted)}")
        return [sum(p == g for p, g in zip(predicted, gold)), len(gold), 1]
