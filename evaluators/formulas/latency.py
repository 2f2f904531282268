"""Latency formulas of simultaneous translation, for many sentences at once with numpy (ATD: per sentence).

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

These are SimulEval 1.1.4's definitions (``simuleval/evaluator/scorers/latency_scorer.py``).  The
batched versions repeat its per-sentence loops' floating-point operations in the same order, so every
sentence's value is SimulEval's to the last bit (tested on real logs and random delays).
"""
from __future__ import annotations

import sys
from itertools import chain
from statistics import mean
from typing import List, Sequence

import numpy as np

from evalpipe.errors import InputError


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
class Columns:
    """Many sentences' delays laid out column by column, for sentence-parallel loops that repeat a
    per-sentence loop's floating-point operations in the same order.

    Sentences are ranked longest first (``order``: sentence indices by rank), so the sentences that
    have a delay at position ``i`` are ranks ``0 .. alive[i] - 1`` and :meth:`column` is a
    contiguous slice.  Per-sentence inputs go in with :meth:`ranked` and results come back with
    :meth:`unranked`."""

    def __init__(self, delays: Sequence[Sequence[float]]) -> None:
        self.delays = delays
        self.lengths = np.fromiter(map(len, delays), dtype=np.int64, count=len(delays))
        count = len(self.lengths)
        if count and self.lengths.min() == 0:
            raise InputError("batched latency needs at least one delay per sentence")
        total = int(self.lengths.sum())
        values = np.fromiter(chain.from_iterable(delays), dtype=np.float64, count=total)
        self.order = np.argsort(-self.lengths, kind="stable")
        longest = int(self.lengths.max()) if count else 0
        self.alive = count - np.cumsum(np.bincount(self.lengths, minlength=longest + 1))[:-1]
        self.starts = np.zeros(longest + 1, dtype=np.int64)
        np.cumsum(self.alive, out=self.starts[1:])
        first = (np.cumsum(self.lengths) - self.lengths)[self.order]  # where each ranked sentence starts
        self.values = np.empty(total, dtype=np.float64)
        for i in range(longest):
            np.take(values, first[:self.alive[i]] + i, out=self.column(i))
            back = self.column(i) < self.column(i - 1)[:self.alive[i]] if i else None
            if i and back.any():
                sentence = int(self.order[int(np.argmax(back))])
                raise InputError(f"expected non-decreasing delays; sentence {sentence + 1} has "
                                 f"{list(delays[sentence])[:i + 2]}...")
        if not np.isfinite(values).all():
            sentence = int(np.repeat(np.arange(count), self.lengths)[np.argmin(np.isfinite(values))])
            raise InputError(f"expected finite delays; sentence {sentence + 1} has {list(delays[sentence])[:8]}")

    def last(self) -> np.ndarray:
        """Every sentence's last delay, in sentence order."""
        return np.fromiter((d[-1] for d in self.delays), dtype=np.float64, count=len(self.delays))

    def column(self, i: int) -> np.ndarray:
        """The ``i``-th delay (0-based) of ranks ``0 .. alive[i] - 1``."""
        return self.values[self.starts[i]:self.starts[i + 1]]

    def ranked(self, per_sentence: np.ndarray) -> np.ndarray:
        return np.asarray(per_sentence, dtype=np.float64)[self.order]

    def unranked(self, per_rank: np.ndarray) -> np.ndarray:
        out = np.empty_like(per_rank)
        out[self.order] = per_rank
        return out


def _lagging_sums(c: Columns, src: np.ndarray, gamma: np.ndarray, count_reaching: bool
                  ) -> "tuple[np.ndarray, np.ndarray]":
    """The running sums of AL and YAAL, per rank: ``total += d - t / gamma`` and ``tau = t + 1`` in order
    while no earlier delay reached |X|; the delay that reaches |X| is counted (AL) or not (YAAL)."""
    total = np.zeros(len(src))
    tau = np.zeros(len(src))
    active = np.ones(len(src), dtype=bool)
    for t in range(len(c.alive)):
        m = c.alive[t]
        d = c.column(t)
        reached = d >= src[:m]
        on = active[:m] if count_reaching else active[:m] & ~reached
        if not on.any():
            break
        total[:m] = np.where(on, total[:m] + (d - t / gamma[:m]), total[:m])
        tau[:m] = np.where(on, t + 1, tau[:m])
        active[:m] = on & ~reached
    return total, tau


def batch_average_lagging(c: Columns, src_lens: np.ndarray, tgt_lens: np.ndarray) -> np.ndarray:
    """AL of many sentences: ``total += d - t / gamma`` in order until the first d >= |X|, then
    ``total / tau``; d_1 when d_1 > |X|."""
    src = c.ranked(src_lens)
    total, tau = _lagging_sums(c, src, c.ranked(tgt_lens) / src, count_reaching=True)
    head = c.column(0)
    return c.unranked(np.where(head > src, head, total / tau))


def batch_differentiable_average_lagging(c: Columns, src_lens: np.ndarray) -> np.ndarray:
    """DAL of many sentences (|Y| = the number of delays): d'_i = max(d_i, d'_{i-1} + 1/gamma) and
    ``total += d'_i - i / gamma`` in order, then ``total / |Y|``."""
    src = c.ranked(src_lens)
    tgt = c.ranked(c.lengths)
    gamma = tgt / src
    inverse = 1 / gamma
    last = c.column(0).copy()
    total = 0.0 + (last - 0 / gamma)
    for i in range(1, len(c.alive)):
        m = c.alive[i]
        d = c.column(i)
        step = last[:m] + inverse[:m]
        last[:m] = np.where(step > d, step, d)  # Python's max(d, step): d unless step is larger
        total[:m] += last[:m] - i / gamma[:m]
    return c.unranked(total / tgt)


def batch_average_proportion(c: Columns, src_lens: np.ndarray, tgt_lens: np.ndarray) -> np.ndarray:
    """AP of many sentences: ``sum(delays) / (|X| |Y|)`` with the delays added left to right, as
    SimulEval's builtin ``sum`` does up to Python 3.11 (3.12 compensates its float sums; there the
    builtin itself is used)."""
    if sys.version_info >= (3, 12):
        sums = np.fromiter(map(sum, c.delays), dtype=np.float64, count=len(c.delays))
    else:
        ranked = c.column(0).copy()
        for i in range(1, len(c.alive)):
            ranked[:c.alive[i]] += c.column(i)
        sums = c.unranked(ranked)
    return sums / (np.asarray(src_lens, dtype=np.float64) * tgt_lens)


def iwslt2020_delays(delays: Sequence[float], src_len: float) -> List[float]:
    """The IWSLT 2020 server's view of a text sentence's delays: the end-of-sentence unit counts in the
    source (the caller scores with |X| + 1), the hypothesis ends with ``</s>`` written after reading it
    (delay |X| + 1), and every delay is capped at |X| + 1."""
    src = src_len + 1
    return [min(d, src) for d in list(delays) + [src]]


def batch_yaal(c: Columns, src_lens: np.ndarray, tgt_lens: np.ndarray) -> np.ndarray:
    """Short-form YAAL (Papi et al., 2025, arXiv:2509.17349; OmniSTEval 0.1.10's ``YAALScorer`` with
    ``is_longform=False``) of many sentences, ``tgt_lens`` = max(|hypothesis|, |reference|): gamma =
    |Y| / |X|; ``total += d - t / gamma`` in order while d < |X| (a delay reaching the source's end is not
    counted), then ``total / tau``.  NaN -- not scored -- where the first delay already reaches |X|."""
    src = c.ranked(src_lens)
    total, tau = _lagging_sums(c, src, c.ranked(tgt_lens) / src, count_reaching=False)
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(tau > 0, total / np.where(tau > 0, tau, 1), np.nan)
    return c.unranked(values)


def speech_intervals(delays: Sequence[float], durations: Sequence[float]) -> "tuple[list, list]":
    """SimulEval 1.1.4's layout of a speech output (``SpeechOutputInstance.summarize``): each segment starts
    at max(its delay, the end of the previous one); a gap before it is a silence.  Returns (intervals as
    [start, duration], silences), the same floating-point operations in the same order."""
    intervals: list = []
    silences: list = []
    if len(delays):
        prev_end = delays[0]
        for delay, duration in zip(delays, durations):
            start = max(prev_end, delay)
            if start > prev_end:
                silences.append(start - prev_end)
            prev_end = start + duration
            intervals.append([start, duration])
    return intervals, silences
