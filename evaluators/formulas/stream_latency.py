"""Stream-level latency of simultaneous translation (Iranzo-Sánchez et al., 2021, "Stream-level Latency
Evaluation for Simultaneous Machine Translation", Findings of EMNLP): AP, AL and DAL of an unsegmented
stream whose output has been resegmented into the reference's sentences.

Input: the source sentences (|X_i| words each), the resegmented hypothesis (|Y_i| words of output sentence
i), and the stream's READ/WRITE actions; the delay d_j of the j-th output word is the number of source
words read (across the whole stream) when it was written, and the output words are dealt to the
sentences in order.  With o_i = |X_1| + ... + |X_{i-1}| the source words before sentence i and
gamma_i = |Y_i| / |X_i|:

* AP_i  = sum_t (d_t - o_i) / (|X_i| |Y_i|)                          (0 when |Y_i| = 0)
* AL_i  = 1/tau sum_{t <= tau} (d_t - (o_i + (t - 1) / gamma_i)), tau the first t with d_t >= o_i + |X_i|
  (or |Y_i|)                                                           (0 when |Y_i| = 0)
* DAL_i = 1/|Y_i| sum_t (d'_t - (o_i + (t - 1) / gamma_i)),  d'_t = max(d_t, d'_{t-1} + s / gamma), where
  d' carries over from the previous sentence (starting at -99999), gamma is the previous sentence's for
  its first word and this sentence's after, and s is the penalty scale (0.95 in the paper's Figure 2)

and the stream's values are the means over its sentences.  Every operation is done in the order of the
paper's reference script (``emnlp2021/eval_streaming_latency_old.py``, commit 187e3ef4), so the values equal
the published ones bit for bit (``tests/test_stream_latency.py``).  Stats of a stream: ``AP_sum AL_sum
DAL_sum sentences`` (each sum in sentence order); streams add up.
"""
from __future__ import annotations

from typing import List, Sequence, Tuple

from evalpipe.errors import InputError

FIELDS = ("AP_sum", "AL_sum", "DAL_sum", "sentences")


def delays_of_actions(actions: Sequence[str], read: str = "R", write: str = "W", source: str = "") -> List[int]:
    """The delay of every written word: the source words read before it."""
    delays, words_read = [], 0
    for position, action in enumerate(actions, 1):
        if action == read:
            words_read += 1
        elif action == write:
            delays.append(words_read)
        else:
            raise InputError(f"action {position}: expected {read!r} (read) or {write!r} (write), got {action!r}",
                             source or None)
    return delays


def stream_stats(source_lengths: Sequence[int], target_lengths: Sequence[int], delays: Sequence[int],
                 penalty_scale: float = 1.0, where: str = "") -> List[float]:
    """``[AP_sum, AL_sum, DAL_sum, sentences]`` of one stream (see the module docstring)."""
    if len(source_lengths) != len(target_lengths):
        raise InputError(f"expected as many resegmented sentences as source sentences ({len(source_lengths)}), "
                         f"got {len(target_lengths)}", where or None)
    if sum(target_lengths) != len(delays):
        raise InputError(f"expected one WRITE action per output word: the resegmented output has "
                         f"{sum(target_lengths)} words, the actions write {len(delays)}", where or None)
    if any(n == 0 for n in source_lengths):
        empty = [i + 1 for i, n in enumerate(source_lengths) if n == 0][:5]
        raise InputError(f"expected words in every source sentence; sentence(s) {empty} are empty", where or None)
    gammas = [t / s for s, t in zip(source_lengths, target_lengths)]
    sentences: List[Tuple[int, List[int]]] = []  # (source words before the sentence, its delays)
    offset = used = 0
    for s, t in zip(source_lengths, target_lengths):
        sentences.append((offset, list(delays[used:used + t])))
        offset, used = offset + s, used + t
    ap = al = dal = 0
    last = -99999
    for i, ((before, ds), s, t, gamma) in enumerate(zip(sentences, source_lengths, target_lengths, gammas)):
        partial = 0
        for d in ds:
            partial += d - before
        if t > 0:
            partial = partial / (s * t)
        ap += partial
        tau = 0
        for k in range(1, t + 1):
            tau += 1
            if ds[k - 1] >= before + s:
                break
        partial = 0
        for k in range(1, tau + 1):
            partial += ds[k - 1] - (before + (k - 1) / gamma)
        if tau > 0:
            partial = partial / tau
        al += partial
        partial = 0
        for k in range(1, t + 1):
            step_gamma = gammas[i - 1] if i > 0 and k == 1 else gamma
            last = max(ds[k - 1], last + penalty_scale * (1 / step_gamma)) if step_gamma > 0 else last
            partial += last - (before + (k - 1) / gamma)
        if t > 0:
            partial = partial / t
        dal += partial
    return [ap, al, dal, len(source_lengths)]


def scores(stats: Sequence[float]) -> Tuple[float, float, float]:
    """``(AP, AL, DAL)``: the means over sentences of summed :func:`stream_stats`."""
    ap, al, dal, sentences = stats
    if sentences == 0:
        raise InputError("no sentence: stream latency is undefined")
    return ap / sentences, al / sentences, dal / sentences
