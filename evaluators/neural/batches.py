"""How a neural model's inputs go through it: sorted by length, in batches, and what a GPU out of memory does.

Inputs are taken shortest first.  A batch holds at most ``size`` inputs and, when ``tokens`` is given, at most
``tokens`` padded tokens (its inputs times the longest of them): short inputs then go many to a batch and long ones
few, which keeps a GPU's memory use flat where a count of inputs does not.  When the GPU runs out of memory the
batch is retried at half its inputs and half its tokens, down to one input; one input that does not fit is one line.
"""
from __future__ import annotations

import logging
from typing import Callable, List, Sequence

from evalpipe.errors import InputError

log = logging.getLogger("evalpipe.neural")


def _take(order: List[int], start: int, lengths: Sequence[int], size: int, tokens: int) -> List[int]:
    """The next batch of ``order`` from ``start`` (module docstring); at least one input."""
    end = start + 1
    while end < len(order) and end - start < size:
        if tokens and (end - start + 1) * max(1, lengths[order[end]]) > tokens:
            break
        end += 1
    return order[start:end]


def run_in_batches(torch, lengths: Sequence[int], size: int, tokens: int,
                   step: Callable[[List[int]], Sequence]) -> list:
    """``step(indices)``'s value for each input, in the input's place: ``step`` runs one batch (indices into the
    inputs, shortest first) and returns one value per index."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    out: list = [None] * len(lengths)
    start = 0
    while start < len(order):
        chunk = _take(order, start, lengths, size, tokens)
        try:
            values = step(chunk)
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()
            if len(chunk) == 1:
                raise InputError("the GPU ran out of memory scoring one input alone; use -o device=cpu") from None
            size, tokens = max(1, len(chunk) // 2), tokens // 2
            log.warning("GPU out of memory: batches of %d inputs%s from here", size,
                        f" or {tokens} tokens" if tokens else "")
            continue
        for i, v in zip(chunk, values):
            out[i] = v
        start += len(chunk)
    return out
