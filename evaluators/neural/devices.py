"""Where a neural model runs: ``-o device=`` and how inputs are split over several devices.

``device`` is ``auto`` (the GPU torch sees, else the CPU), ``cpu``, ``cuda``, ``cuda:N``, or a comma-separated list
of them (``cuda:0,cuda:1``): the model is copied onto each, the length-sorted inputs are dealt out in runs of
``batch_size`` (every k-th run to the k-th device, so each gets short and long inputs alike), and each device
scores its share in a thread of its own (torch leaves Python's lock while a GPU computes), halving its own batches
when it runs out of memory.  The scores do not depend on the split beyond float32 noise (a batch's composition).
A device torch does not see is one line.
"""
from __future__ import annotations

import re
from typing import Any, Callable, List, Sequence

from evalpipe.errors import MissingDependency, OptionError

_ONE = re.compile(r"auto|cpu|cuda(:\d+)?")


def check(value: str, metric: str) -> None:
    """The one-line refusal of a ``device`` option that names no device (before any model is loaded)."""
    words = value.split(",")
    if not all(_ONE.fullmatch(w.strip()) for w in words):
        raise OptionError(f"{metric}: device expects auto, cpu, cuda or cuda:N (N a GPU number), or a comma-separated "
                          f"list of them (cuda:0,cuda:1), got {value!r}")


def resolve(torch: Any, value: str) -> List[Any]:
    """The torch devices ``value`` names (``auto`` resolved), each checked against the GPUs torch sees."""
    out = []
    for word in (w.strip() for w in value.split(",")):
        if word == "auto":
            word = "cuda" if torch.cuda.is_available() else "cpu"
        elif word.startswith("cuda"):
            count = torch.cuda.device_count() if torch.cuda.is_available() else 0
            if int(word.partition(":")[2] or 0) >= count:
                raise MissingDependency(f"device={word}: torch sees {count or 'no'} GPU{'' if count == 1 else 's'} "
                                        f"here{f' (cuda:0 to cuda:{count - 1})' if count else ''}; give device=cpu "
                                        f"(or device=auto)")
        out.append(torch.device(word))
    return out


def run_on_devices(torch: Any, replicas: int, lengths: Sequence[int], size: int, tokens: int,
                   step: Callable[[int, List[int]], Sequence]) -> list:
    """``step(replica, indices)``'s value for each input, in the input's place (module docstring)."""
    from evalpipe.evaluators.neural.batches import run_in_batches

    if replicas == 1:
        return run_in_batches(torch, lengths, size, tokens, lambda chunk: step(0, chunk))
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    parts: List[List[int]] = [[] for _ in range(replicas)]
    for run, start in enumerate(range(0, len(order), size)):
        parts[run % replicas] += order[start:start + size]
    from concurrent.futures import ThreadPoolExecutor

    def share(r: int) -> list:
        part = parts[r]
        return run_in_batches(torch, [lengths[i] for i in part], size, tokens,
                              lambda chunk: step(r, [part[j] for j in chunk]))

    with ThreadPoolExecutor(replicas) as pool:
        found = list(pool.map(share, range(replicas)))
    out: list = [None] * len(lengths)
    for part, values in zip(parts, found):
        for i, v in zip(part, values):
            out[i] = v
    return out
