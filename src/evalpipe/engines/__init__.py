"""Engines: where per-segment stats are computed and summed (:mod:`evalpipe.engines.base`).

Built-ins -- ``local`` (this process), ``pool`` (worker processes), ``spark`` (Apache Spark, extra
``evalpipe[spark]``) -- are registered in the ``evalpipe.engines`` entry-point group like a third
party's engine, and imported only when made.
"""
from __future__ import annotations

from typing import Any

from evalpipe.engines.base import Engine, Job
from evalpipe.errors import EngineError, PluginError
from evalpipe.registry import ENGINES_GROUP, list_plugins, load_class


def make_engine(name: str = "local", workers: int = 1, **settings: Any) -> Engine:
    """An engine by entry-point name (or ``module:Class``); ``local`` with ``workers > 1`` is a pool of
    that size and ``pool`` has at least 2 workers.  Engines are built as ``cls(workers=N, **settings)``
    (``spark_master`` reaches Spark as ``master``), so a new engine accepts and ignores settings it
    does not use."""
    if name == "local" and workers > 1:
        name = "pool"
    if name == "pool":
        workers = max(workers, 2)
    try:
        cls = load_class(name, ENGINES_GROUP)
    except PluginError as exc:
        known = ", ".join(list_plugins(ENGINES_GROUP))
        raise EngineError(f"{exc}" if ":" in name else f"unknown engine {name!r}; expected one of {known}") from None
    if "spark_master" in settings:
        settings["master"] = settings.pop("spark_master")
    return cls(workers=workers, **settings)


__all__ = ["Engine", "EngineError", "Job", "make_engine"]
