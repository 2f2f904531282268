"""numba's ``njit`` when the ``fast`` extra is installed, else a decorator that leaves functions as they are.

``COMPILED`` says which; modules with compiled kernels (:mod:`~evalpipe.evaluators.ter_kernel`,
:mod:`~evalpipe.evaluators.ngram_kernel`) use their pure or sacrebleu-backed paths when it is False.
"""
from __future__ import annotations

from typing import Any

try:
    from numba import njit
    COMPILED = True
except ImportError:  # pragma: no cover - exercised when numba is absent
    COMPILED = False

    def njit(*args: Any, **kwargs: Any) -> Any:  # type: ignore[no-redef]
        return (lambda f: f) if not args or not callable(args[0]) else args[0]

__all__ = ["COMPILED", "njit"]
