"""A bounded least-recently-used cache for reference-side work, with a doorkeeper.

Tuners send n-best lists: the same references with hundreds of hypotheses.  Metrics keep their
reference preprocessing (tokenized references, n-gram counts) here, keyed by the tuple of
reference strings, so each reference set is processed once while it is in use.

Corpus scoring sends every reference set once; keeping those values would only cost memory (a
chrF reference set holds thousands of n-gram entries) and time.  So a value is admitted only when
its key is asked for a second time while still remembered in a bounded "seen once" list (the
doorkeeper of TinyLFU, Einziger et al., 2017): unique references are computed and dropped, repeated
ones are kept.  At most ``maxsize`` values and ``4 * maxsize`` seen-once keys are held.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, Generic, Hashable, TypeVar

from evalpipe.errors import OptionError

V = TypeVar("V")


class LRUCache(Generic[V]):
    """``get_or_compute(key, fn)``: the cached value for ``key``, computing ``fn(key)`` on a miss."""

    def __init__(self, maxsize: int = 4096) -> None:
        if maxsize < 1:
            raise OptionError(f"cache size must be >= 1, got {maxsize}")
        self.maxsize = maxsize
        self._data: "OrderedDict[Hashable, V]" = OrderedDict()
        self._seen: "OrderedDict[Hashable, None]" = OrderedDict()
        self._last_key: Hashable = None
        self._last_value: V = None  # type: ignore[assignment]
        self._last_admitted = False
        self.hits = self.misses = 0
        self._lock = threading.Lock()

    def get_or_compute(self, key: Hashable, compute: Callable[[Hashable], V]) -> V:
        with self._lock:  # one metric may serve several threads (a thread-pool engine)
            return self._get_or_compute(key, compute)

    def _get_or_compute(self, key: Hashable, compute: Callable[[Hashable], V]) -> V:
        if key == self._last_key and self._last_value is not None:
            self.hits += 1
            if not self._last_admitted:  # asked for twice in a row: worth keeping
                self._admit(key, self._last_value)
            return self._last_value
        data = self._data
        value = data.get(key)
        if value is not None:
            self.hits += 1
            data.move_to_end(key)
        else:
            self.misses += 1
            value = compute(key)
            if key in self._seen:
                self._admit(key, value)
            else:
                self._seen[key] = None
                if len(self._seen) > 4 * self.maxsize:
                    self._seen.popitem(last=False)
        self._last_key, self._last_value, self._last_admitted = key, value, key in data
        return value

    def _admit(self, key: Hashable, value: V) -> None:
        self._seen.pop(key, None)
        self._data[key] = value
        if len(self._data) > self.maxsize:
            self._data.popitem(last=False)
        self._last_admitted = True

    def __len__(self) -> int:
        return len(self._data)
