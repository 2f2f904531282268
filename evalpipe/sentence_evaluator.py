"""The sentence-evaluator API: user evaluators over a data pool, run sequentially or in parallel.

Subclass :class:`SentenceEvaluator` and implement ``evaluate_item(item)``, which turns one item
(for example a sentence with its gold labels, scored with the user's model) into a stats vector
such as ``(correct, gold_total)``.  ``sequential_evaluate(data)`` and ``parallel_evaluate(data,
engine=...)`` shard the pool, sum the vectors exactly (:mod:`evalpipe.sufficient_stats.vectors`)
and log the result in the familiar form ``Unlabelled accuracy: 0.8115 (26659, 32853)``; both give
the same numbers.  ``reports`` lists the figures to log: (label, numerator positions,
denominator positions), each figure being sum(numerators) / sum(denominators) of the totals.
"""
from __future__ import annotations

import logging
import multiprocessing as mp
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Dict, List, Optional, Sequence, Tuple

from evalpipe.sufficient_stats.vectors import Partial, partial_sum

log = logging.getLogger(__name__)

_POOL_EVALUATOR: Dict[str, Any] = {}


def _pool_chunk(chunk: List[Any]) -> Partial:
    evaluator = _POOL_EVALUATOR["evaluator"]
    return partial_sum([evaluator.evaluate_item(x) for x in chunk], len(evaluator.STATS_FIELDS))


class SentenceEvaluator(ABC):
    """Base class of user evaluators (see the module docstring)."""

    STATS_FIELDS: ClassVar[Tuple[str, ...]] = ("correct", "gold_total")
    #: (label, numerator positions, denominator positions) of each logged figure
    reports: ClassVar[Sequence[Tuple[str, Tuple[int, ...], Tuple[int, ...]]]] = (("Accuracy", (0,), (1,)),)

    @abstractmethod
    def evaluate_item(self, item: Any) -> Sequence[float]:
        """The stats vector of one item (length ``len(STATS_FIELDS)``)."""
        raise NotImplementedError

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
        return [f"{label}: {value:.4f} ({_show(num)}, {_show(den)})" for label, value, num, den in self.figures(totals)]

    def _finish(self, partial: Partial) -> Dict[str, Any]:
        totals = partial.finish()
        for line in self.format_figures(totals):
            log.info(line)
        return {"stats": totals, "items": partial.rows,
                "scores": {label: value for label, value, _, _ in self.figures(totals)}}

    # -- running -----------------------------------------------------------------------------------
    def sequential_evaluate(self, data: Sequence[Any]) -> Dict[str, Any]:
        """Evaluate every item in this process: ``{"stats", "items", "scores"}``."""
        return self._finish(partial_sum([self.evaluate_item(x) for x in data], len(self.STATS_FIELDS)))

    def parallel_evaluate(self, data: Sequence[Any], engine: str = "pool", workers: int = 2,
                          spark_context: Any = None, spark_master: str = "local[2]",
                          shards: Optional[int] = None) -> Dict[str, Any]:
        """Shard ``data`` over a process pool (``engine="pool"``) or Spark (``engine="spark"``,
        reusing ``spark_context`` when given); same result as :meth:`sequential_evaluate`.

        With Spark, the evaluator's own module (and its predict function's) is shipped to the
        executors by value, so they need only evalpipe installed, not the user's code."""
        data = list(data)
        width = len(self.STATS_FIELDS)
        if engine == "pool":
            if workers < 1:
                raise ValueError(f"expected at least 1 worker, got {workers}")
            n_shards = shards or workers * 4
            size = max(1, -(-len(data) // n_shards))
            chunks = [data[i:i + size] for i in range(0, len(data), size)]
            methods = mp.get_all_start_methods()
            ctx = mp.get_context("fork" if "fork" in methods else methods[0])
            _POOL_EVALUATOR["evaluator"] = self  # inherited by forked workers: the model is not pickled
            try:
                with ctx.Pool(workers) as pool:
                    total = Partial(width)
                    for part in pool.imap_unordered(_pool_chunk, chunks):
                        total = total.merge(part)
            finally:
                _POOL_EVALUATOR.clear()
            return self._finish(total)
        if engine == "spark":
            from evalpipe.spark_engine import SparkEngine

            _ship_user_modules(self)
            spark = SparkEngine(master=spark_master, spark_context=spark_context)
            try:
                return self._finish(spark.map_partials(data, self.evaluate_item, width, shards or 0))
            finally:
                spark.close()
        raise ValueError(f"unknown engine {engine!r}; expected 'pool' or 'spark'")


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


def _show(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


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
            raise ValueError(f"expected {len(gold)} predicted labels for {tokens!r}, got {len(predicted)}")
        return [sum(p == g for p, g in zip(predicted, gold)), len(gold), 1]
