"""A bounded least-recently-used cache for reference-side work.

Tuners send n-best lists: the same references with hundreds of hypotheses.  Metrics keep their
reference preprocessing (tokenized references, n-gram counts) here, keyed by the tuple of
reference strings, so each reference set is processed once while it is in use.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Callable, Generic, Hashable, TypeVar

V = TypeVar("V")


class LRUCache(Generic[V]):
    """``get_or_compute(key, fn)``: the cached value for ``key``, computing ``fn(key)`` on a miss.

    At most ``maxsize`` entries are kept; the least recently used one is evicted first.
    """

    def __init__(self, maxsize: int = 4096) -> None:
        if maxsize < 1:
            raise ValueError(f"cache size must be >= 1, got {maxsize}")
        self.maxsize = maxsize
        self._data: "OrderedDict[Hashable, V]" = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get_or_compute(self, key: Hashable, compute: Callable[[Hashable], V]) -> V:
        data = self._data
        try:
            value = data[key]
        except KeyError:
            self.misses += 1
            value = compute(key)
            data[key] = value
            if len(data) > self.maxsize:
                data.popitem(last=False)
            return value
        self.hits += 1
        data.move_to_end(key)
        return value

    def __len__(self) -> int:
        return len(self._data)

    def clear(self) -> None:
        self._data.clear()
