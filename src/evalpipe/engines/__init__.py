"""Engines: where per-segment stats are computed and summed (:mod:`evalpipe.engines.base`).

Built-ins -- ``local`` (this process), ``pool`` (worker processes), ``spark`` (Apache Spark, extra
``evalpipe[spark]``) -- are registered in the ``evalpipe.engines`` entry-point group like a third
party's engine, and imported only when made.

Every core without a flag: ``workers=None`` (the commands' default) is a pool over the cores this process
may run on (``os.sched_getaffinity``) that computes a run in this process while its work is below
:data:`AUTO_MIN_WORK` (about that many text segments): starting workers costs more than it saves on small
inputs.  The crossover was measured on real WMT21 en-de data (docs/engines.md).
"""
from __future__ import annotations

import os
from typing import Any, Optional

from evalpipe.engines.base import Engine, Job
from evalpipe.errors import EngineError, EngineUsageError, PluginError
from evalpipe.registry import ENGINES_GROUP, list_plugins, load_class


#: below this much work (:meth:`evalpipe.inputs.Input.work`, about one text segment a unit) an automatic pool
#: computes in this process: BLEU + chrF on 3,000 WMT21 segments took 0.31 s in one process and 0.35 s with
#: two workers, on 5,010 segments 0.41 s and 0.38 s (2-core machine; docs/engines.md)
AUTO_MIN_WORK = 4000


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system tells, else the CPU count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _in_daemon() -> bool:
    """Whether this is a daemonic worker process (sacrebleu's ``-j`` pool, say), which may not start processes of
    its own.  A process that never imported multiprocessing is none."""
    import sys

    mp = sys.modules.get("multiprocessing")
    return bool(mp is not None and mp.current_process().daemon)


def make_engine(name: str = "local", workers: Optional[int] = None, **settings: Any) -> Engine:
    """An engine by entry-point name (or ``module:Class``).  ``workers=None`` means every core: ``local``
    becomes a pool of :func:`available_cores` workers that stays in this process below :data:`AUTO_MIN_WORK`
    (one core: the local engine); ``local`` with ``workers > 1`` is a pool of that size; ``workers=1`` is
    this process; ``pool`` has at least 2 workers.  Engines are built as ``cls(workers=N, **settings)``
    (``spark_master`` reaches Spark as ``master``), so a new engine accepts and ignores settings it
    does not use."""
    if workers is None and name in ("local", "pool"):
        cores = 1 if _in_daemon() else available_cores()
        if name == "local" and cores > 1:
            name, settings["min_work"] = "pool", AUTO_MIN_WORK
        workers = cores
    workers = 1 if workers is None else workers
    if name == "local" and workers > 1:
        name = "pool"
    if name == "pool":
        workers = max(workers, 2)
    try:
        cls = load_class(name, ENGINES_GROUP)
    except PluginError as exc:
        known = ", ".join(list_plugins(ENGINES_GROUP))
        raise EngineUsageError(f"{exc}" if ":" in name else f"unknown engine {name!r}; expected one of {known}") from None
    if "spark_master" in settings:
        settings["master"] = settings.pop("spark_master")
    return cls(workers=workers, **settings)


__all__ = ["AUTO_MIN_WORK", "Engine", "EngineError", "Job", "available_cores", "make_engine"]
