"""Validation of the references a metric receives."""
from __future__ import annotations

from typing import Sequence, Tuple


def reference_tuple(metric: str, references: Sequence[str]) -> Tuple[str, ...]:
    """Return ``references`` as a tuple of strings, or raise ``ValueError`` saying what came."""
    if isinstance(references, str):
        raise ValueError(f"{metric}: expected a list of reference strings, got a single string")
    refs = tuple(references)
    if not refs:
        raise ValueError(f"{metric}: expected at least one reference, got none")
    for i, ref in enumerate(refs):
        if not isinstance(ref, str):
            raise ValueError(f"{metric}: reference {i + 1} should be a string, got {type(ref).__name__}")
    return refs


def check_hypothesis(metric: str, hypothesis: str) -> None:
    """Raise ``ValueError`` unless the hypothesis is a string."""
    if not isinstance(hypothesis, str):
        raise ValueError(f"{metric}: the hypothesis should be a string, got {type(hypothesis).__name__}")
