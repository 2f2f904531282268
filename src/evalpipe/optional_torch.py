"""torch, the optional package behind COMET, MetricX and mbrs's draws: its first import in a run happens here.

``import torch`` builds some 250,000 Python objects, and Python's cyclic garbage collector rescans all of them at
every full collection, those the import itself sets off and those of the work after it: measured on the 2-core
development machine, 0.13-0.19 s of an ``evalpipe mbr -m comet`` run of 1.7 s went to collections.  So the first
import here runs with the collector paused, and then freezes what exists (``gc.freeze``: moved to the permanent
generation, which collections skip; objects there are still freed when their last reference goes, only cycles among
them stay) before turning the collector back on as it was.  The run then spends 5-9 ms in collections and takes
1.3 s instead of 1.8 s.  Nothing a metric computes changes.  This module imports nothing of evalpipe but its errors.
"""
from __future__ import annotations

import gc
import sys
from types import ModuleType

from evalpipe.errors import MissingDependency


def installed() -> bool:
    """Whether torch can be imported (it is then imported, as :func:`load` does)."""
    try:
        _import()
    except ImportError:
        return False
    return True


def load(missing: str) -> ModuleType:
    """The torch module; without torch, :class:`MissingDependency` with the one line ``missing``."""
    try:
        return _import()
    except ImportError:
        raise MissingDependency(missing) from None


def _import() -> ModuleType:
    found = sys.modules.get("torch")
    if found is not None:
        return found
    collecting = gc.isenabled()
    gc.disable()
    try:
        import torch

        if collecting:
            gc.freeze()
    finally:
        if collecting:
            gc.enable()
    return torch
