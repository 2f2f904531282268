"""BLEU of one vector of (summed) counts, as sacrebleu 2.x's ``BLEU.compute_bleu`` computes it, step for step.

Layout ``[sys_len, ref_len, correct_1..N, total_1..N]`` (integers, or fractions for reference aggregation)::

    BLEU = BP * exp(sum_n log p_n / N'),  p_n = 100 * correct_n / total_n,
    BP = 1 if sys_len >= ref_len else exp(1 - ref_len / sys_len)  (0 when sys_len is 0)

0 when nothing matches; the orders stop at the first without n-grams; ``N'`` is N, or with ``effective_order``
the last order reached; a zero precision is smoothed by ``exp`` (100 / (2^k total_n)), ``floor``
(100 value / total_n) or ``add-k`` (value added to counts and totals from order 2 on), and with ``none`` its log
is sacrebleu's floor -9999999999.  ``value`` None is sacrebleu's default (floor 0.1, add-k 1).  The same
operations in the same order, with ``math.exp``/``math.log`` and the built-in ``sum``, give sacrebleu's bits;
``tests/test_bleu_score.py`` checks that against sacrebleu on random and edge-case vectors.  It is also the
Python reference of the ``pairwise_ngrams`` kernel's sentence BLEU.
"""
from __future__ import annotations

import math
from typing import Optional, Sequence

#: sacrebleu's ``BLEU.SMOOTH_DEFAULTS``
SMOOTH_DEFAULTS = {"none": None, "floor": 0.1, "add-k": 1, "exp": None}
#: sacrebleu's ``my_log(0)``
LOG_ZERO = -9999999999


def bleu_score(row: Sequence[float], order: int, smooth_method: str, value: Optional[float],
               effective_order: bool) -> float:
    """BLEU (0-100) of one vector ``[sys_len, ref_len, correct_1..order, total_1..order]``."""
    if value is None:
        value = SMOOTH_DEFAULTS[smooth_method]
    sys_len, ref_len = row[0], row[1]
    correct, total = list(row[2:2 + order]), list(row[2 + order:2 + 2 * order])
    bp = 1.0
    if sys_len < ref_len:
        bp = math.exp(1 - ref_len / sys_len) if sys_len > 0 else 0.0
    if not any(correct):
        return 0.0
    precisions, mteval, eff = [0.0] * order, 1.0, order
    for n in range(1, order + 1):
        if smooth_method == "add-k" and n > 1:
            correct[n - 1] += value
            total[n - 1] += value
        if total[n - 1] == 0:
            break
        if effective_order:
            eff = n
        if correct[n - 1] == 0:
            if smooth_method == "exp":
                mteval *= 2
                precisions[n - 1] = 100. / (mteval * total[n - 1])
            elif smooth_method == "floor":
                precisions[n - 1] = 100. * value / total[n - 1]
        else:
            precisions[n - 1] = 100. * correct[n - 1] / total[n - 1]
    return bp * math.exp(sum([math.log(p) if p != 0.0 else LOG_ZERO for p in precisions[:eff]]) / eff)
