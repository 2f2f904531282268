"""The one switch between evalpipe's C extensions and their Python references.

Every C extension (``setup.py``: the kernels of :mod:`evalpipe.evaluators.kernels` and the SimulEval log reader
of :mod:`evalpipe.simul.log_columns`) has a Python reference that gives the same output and runs when the
extension was not built (no C compiler at install) or when ``EVALPIPE_IMPLEMENTATION=python`` asks for the
references.  This module imports nothing of evalpipe.
"""
from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import Optional


def extension(module: str) -> Optional[ModuleType]:
    """The C extension ``module`` (a full name), or None when it was not built or the references are asked for."""
    if os.environ.get("EVALPIPE_IMPLEMENTATION", "").lower() == "python":
        return None
    try:
        return importlib.import_module(module)
    except ImportError:  # pragma: no cover - exercised when no C compiler was there at install
        return None
