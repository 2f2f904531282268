"""Latency formulas of simultaneous translation, per sentence (pure Python) and batched (numpy).

Notation: source length |X| (words for text, milliseconds for speech), delays d_1..d_|Y'| (the
source read when each target token was written), target length |Y|, gamma = |Y| / |X|.

* AP   (Cho & Esipova, 2016):  AP = sum_i d_i / (|X| |Y|)
* AL   (Ma et al., 2019, STACL): tau = first i with d_i >= |X|;
        AL = 1/tau sum_{i<=tau} (d_i - (i-1)/gamma)     (AL = d_1 when d_1 > |X|)
* LAAL (Papi et al., 2022): AL with |Y| = max(|hypothesis|, |reference|)
* DAL  (Arivazhagan et al., 2019): d'_1 = d_1, d'_i = max(d_i, d'_{i-1} + 1/gamma),
        DAL = 1/|Y'| sum_i (d'_i - (i-1)/gamma) with |Y| = |Y'| (the hypothesis length)
* StartOffset = d_1; EndOffset = d_last - |X|
* ATD  (Kano et al., 2023): average over target tokens of (end time of the token - end time of the
        source token it is aligned to by chunk), SimulEval 1.1's algorithm.

These are SimulEval 1.1.4's definitions (``simuleval/evaluator/scorers/latency_scorer.py``); the
batched versions compute the same per-sentence values for many sentences at once.
"""
from __future__ import annotations

from itertools import chain
from statistics import mean
from typing import List, Sequence, Tuple

import numpy as np


def average_lagging(delays: Sequence[float], src_len: float, tgt_len: float) -> float:
    """AL of one sentence (see the module docstring)."""
    if delays[0] > src_len:
        return delays[0]
    gamma = tgt_len / src_len
    total = 0.0
    tau = 0
    for t, d in enumerate(delays):
        total += d - t / gamma
        tau = t + 1
        if d >= src_len:
            break
    return total / tau


def differentiable_average_lagging(delays: Sequence[float], src_len: float) -> float:
    """DAL of one sentence; |Y| is the number of delays."""
    tgt_len = len(delays)
    gamma = tgt_len / src_len
    total = 0.0
    last = 0.0
    for i, g in enumerate(delays):
        g_prime = g if i == 0 else max(g, last + 1 / gamma)
        total += g_prime - i / gamma
        last = g_prime
    return total / tgt_len


def average_proportion(delays: Sequence[float], src_len: float, tgt_len: float) -> float:
    return sum(delays) / (src_len * tgt_len)


def average_token_delay(delays: Sequence[float], compute_times: Sequence[float], src_unit: float,
                        tgt_unit: float, text_input: bool) -> float:
    """ATD of one sentence with text output (SimulEval 1.1's chunk alignment).

    ``src_unit`` / ``tgt_unit``: the duration of one source / target token (1 and 1 for text
    input; 300 ms and 0 for speech input with text output, SimulEval's choice).
    """
    chunk_src, chunk_tgt = [0], [0]
    tok_chunk_src, tok_chunk_tgt = [0], [0]
    time_src, time_tgt = [0.0], [0.0]
    distinct = sorted(set(delays), key=list(delays).index)
    previous = None
    for d in delays:
        if d != previous:
            chunk_tgt.append(1)
        else:
            chunk_tgt[-1] += 1
        previous = d
    for i, size in enumerate(chunk_tgt[1:], 1):
        tok_chunk_tgt += [i] * size
    steps = [b - a for a, b in zip([0] + distinct[:-1], distinct)]
    for i, step in enumerate(steps, 1):
        if text_input:
            lens = [src_unit] * int(step)
        else:
            whole, rest = divmod(step, src_unit)
            lens = int(whole) * [src_unit] + ([rest] if rest != 0 else [])
        chunk_src.append(len(lens))
        for length in lens:
            time_src.append(time_src[-1] + length)
            tok_chunk_src.append(i)
    for d, c in zip(delays, compute_times):
        start = max(d, time_tgt[-1])
        time_tgt.append(start + tgt_unit + c)
    out = []
    for t in range(1, len(tok_chunk_tgt)):
        chunk = tok_chunk_tgt[t]
        acc_x = sum(chunk_src[:chunk])
        acc_y = sum(chunk_tgt[:chunk])
        s = t - max(0, acc_y - acc_x)
        current = sum(chunk_src[:chunk + 1])
        out.append(time_tgt[t] - time_src[min(s, current)])
    return float(mean(out))


# -- batched (numpy) ---------------------------------------------------------------------------
class Flat:
    """Many sentences' delays in one array: ``values``, per-sentence ``lengths`` and ``starts``,
    and each value's ``position`` (0-based) inside its sentence.  Build once, use for every metric."""

    def __init__(self, delays: Sequence[Sequence[float]]) -> None:
        self.lengths = np.fromiter(map(len, delays), dtype=np.int64, count=len(delays))
        if len(delays) and self.lengths.min() == 0:
            raise ValueError("batched latency needs at least one delay per sentence")
        self.values = np.array(list(chain.from_iterable(delays)), dtype=np.float64)
        self.starts = np.zeros(len(self.lengths), dtype=np.int64)
        np.cumsum(self.lengths[:-1], out=self.starts[1:])
        self.position = np.arange(len(self.values), dtype=np.float64) - np.repeat(self.starts, self.lengths)

    def per_token(self, per_sentence: np.ndarray) -> np.ndarray:
        return np.repeat(per_sentence, self.lengths)


def _flat(delays) -> Flat:
    return delays if isinstance(delays, Flat) else Flat(delays)


def batch_average_lagging(delays, src_lens: np.ndarray, tgt_lens: np.ndarray) -> np.ndarray:
    """AL of many sentences at once (``delays``: lists, or a :class:`Flat`)."""
    f = _flat(delays)
    src = f.per_token(src_lens)
    gamma = f.per_token(tgt_lens / src_lens)
    first = np.minimum.reduceat(np.where(f.values >= src, f.position, np.inf), f.starts)
    tau = np.minimum(first + 1, f.lengths)
    lag = np.where(f.position < f.per_token(tau), f.values - f.position / gamma, 0.0)
    al = np.add.reduceat(lag, f.starts) / tau
    head = f.values[f.starts]
    return np.where(head > src_lens, head, al)


def batch_differentiable_average_lagging(delays, src_lens: np.ndarray) -> np.ndarray:
    """DAL of many sentences at once: d'_i - (i-1)/gamma = max_{j<=i}(d_j - (j-1)/gamma)."""
    f = _flat(delays)
    gamma = f.per_token(f.lengths / src_lens)
    shifted = f.values - f.position / gamma
    rows = np.repeat(np.arange(len(f.lengths)), f.lengths)
    cols = f.position.astype(np.int64)
    padded = np.full((len(f.lengths), int(f.lengths.max())), -np.inf)
    padded[rows, cols] = shifted
    running = np.maximum.accumulate(padded, axis=1)[rows, cols]
    return np.add.reduceat(running, f.starts) / f.lengths


def batch_average_proportion(delays, src_lens: np.ndarray, tgt_lens: np.ndarray) -> np.ndarray:
    f = _flat(delays)
    return np.add.reduceat(f.values, f.starts) / (src_lens * tgt_lens)


def iwslt2020_inputs(delays: Sequence[float], src_len: float, eos_delay: float = None) -> Tuple[List[float], float]:
    """The IWSLT 2020 server's view of a text sentence: the end-of-sentence unit counts in the source
    (|X| + 1), the hypothesis ends with ``</s>`` (written after reading it, delay |X| + 1, unless
    ``eos_delay`` says otherwise), and every delay is capped at |X| + 1."""
    src = src_len + 1
    eos = src if eos_delay is None else eos_delay
    return [min(d, src) for d in list(delays) + [eos]], src
