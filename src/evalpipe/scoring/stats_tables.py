"""Step one of corpus scoring: the stats of every system x metric x run, computed once by an engine.

A :class:`RunStats` holds the exact column totals of one run and, when an analysis resamples
segments, the run's segments x stats matrix (float64: integer counts below 2**53 stay exact).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from evalpipe.engines import Engine, Job
from evalpipe.inputs import Input
from evalpipe.sufficient_stats.vectors import sum_stats


@dataclass
class System:
    """A named system: one input per optimizer run."""

    name: str
    runs: List[Input]


@dataclass
class RunStats:
    """One run scored by one metric: exact totals, its per-segment rows (or None) and its reference count."""

    total: List[Any]
    rows: Optional[List[list]]
    nrefs: int
    width: int

    @cached_property
    def matrix(self) -> np.ndarray:
        """The segments x stats matrix of the rows."""
        return np.asarray(self.rows, dtype=np.float64).reshape(-1, self.width)


StatsTable = Dict[Tuple[str, str], List[RunStats]]  # (system, metric name) -> one RunStats per run


def stats_table(systems: Sequence[System], specs: Sequence[Any], engine: Engine, with_rows: bool,
                progress: Callable[[int], None] = lambda n: None) -> StatsTable:
    """Every system's runs through every metric; ``with_rows`` keeps the per-segment matrices."""
    table: StatsTable = {}
    for spec in specs:
        width = spec.build().num_stats
        for system in systems:
            runs = []
            for data in system.runs:
                job = Job(spec, data)
                if with_rows:
                    rows = engine.rows(job)
                    runs.append(RunStats(sum_stats(rows, width), rows, data.nrefs, width))
                else:
                    runs.append(RunStats(engine.total(job), None, data.nrefs, width))
                progress(1)
            table[(system.name, spec.name)] = runs
    return table
