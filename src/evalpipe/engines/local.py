"""The local engine: everything in this process."""
from __future__ import annotations

from typing import Any, List

from evalpipe.engines.base import Engine, Job, chunk_partial, chunk_rows


class LocalEngine(Engine):
    """Stats computed in this process."""

    name = "local"

    def rows(self, job: Job) -> List[list]:
        return chunk_rows(job)

    def total(self, job: Job) -> List[Any]:
        return chunk_partial(job).finish()
