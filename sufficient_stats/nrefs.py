"""Tracking the number of references a metric has seen, for sacrebleu-style signatures."""
from __future__ import annotations

from typing import Any, Set


class RefCounter:
    """Records reference counts; ``value`` is the count, ``-1`` when it varied (sacrebleu's "var")."""

    def __init__(self) -> None:
        self.seen: Set[int] = set()

    def add(self, count: int) -> None:
        if count not in self.seen:
            self.seen.add(count)

    @property
    def value(self) -> Any:
        if not self.seen:
            return None
        return next(iter(self.seen)) if len(self.seen) == 1 else -1

    def signature(self, sacre_metric: Any) -> str:
        """The signature of a sacrebleu metric object with this reference count filled in.

        Before any segment is scored the count is unknown and shows as ``nrefs:?``.
        """
        value = self.value
        sacre_metric.num_refs = "?" if value is None else value
        return sacre_metric.get_signature().format()
