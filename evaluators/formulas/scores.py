"""Vectorized scores of many stats vectors at once (for bootstrap and randomization tests).

``bleu_scores`` and ``chrf_scores`` compute, row by row, what sacrebleu's ``BLEU.compute_bleu`` and
``CHRF._compute_f_score`` compute for one vector, with the same branches (early stop when nothing
matches, the break at the first order without n-grams, exp/floor/add-k smoothing, effective order,
epsilon smoothing).  ``tests/test_vector_scores.py`` checks them against the one-vector path.
"""
from __future__ import annotations

import numpy as np

from evalpipe.evaluators.sacrebleu_api import LOG_ZERO as _LOG_ZERO, SMOOTH_DEFAULTS


def _log(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.where(x == 0, _LOG_ZERO, np.log(np.where(x == 0, 1.0, x)))


def bleu_scores(sums: np.ndarray, max_order: int, smooth_method: str, smooth_value, effective_order: bool) -> np.ndarray:
    """BLEU of every row of ``sums`` (layout: hyp_len, ref_len, correct_1..N, total_1..N)."""
    sums = np.asarray(sums, dtype=np.float64)
    sys_len, ref_len = sums[:, 0], sums[:, 1]
    correct = sums[:, 2:2 + max_order].copy()
    total = sums[:, 2 + max_order:2 + 2 * max_order].copy()
    value = SMOOTH_DEFAULTS[smooth_method] if smooth_value is None else smooth_value
    with np.errstate(divide="ignore", invalid="ignore"):
        bp = np.where(sys_len < ref_len, np.where(sys_len > 0, np.exp(1 - ref_len / np.where(sys_len > 0, sys_len, 1)), 0.0), 1.0)
    nothing = ~(correct != 0).any(axis=1)
    if smooth_method == "add-k":
        correct[:, 1:] += value
        total[:, 1:] += value
    valid = np.cumprod(total > 0, axis=1).astype(bool)  # orders before the first without n-grams
    zero = (correct == 0) & valid
    halvings = np.cumsum(zero, axis=1)
    safe_total = np.where(total > 0, total, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        prec = np.where(correct != 0, 100.0 * correct / safe_total, 0.0)
        if smooth_method == "exp":
            prec = np.where(zero, 100.0 / (2.0 ** halvings * safe_total), prec)
        elif smooth_method == "floor":
            prec = np.where(zero, 100.0 * value / safe_total, prec)
    prec = np.where(valid, prec, 0.0)
    if effective_order:
        n_valid = valid.sum(axis=1)
        eff = np.where(n_valid > 0, n_valid, max_order)
    else:
        eff = np.full(len(sums), max_order)
    upto = np.arange(1, max_order + 1)[None, :] <= eff[:, None]
    logs = np.where(upto, _log(prec), 0.0).sum(axis=1)
    score = bp * np.exp(logs / eff)
    return np.where(nothing, 0.0, score)


def _left_to_right(columns: np.ndarray) -> np.ndarray:
    """Row sums added column by column, as sacrebleu's loop adds them (``ndarray.sum`` adds 8 or more
    columns in another order, which changes the last bit)."""
    total = np.zeros(len(columns))
    for k in range(columns.shape[1]):
        total = total + columns[:, k]
    return total


def chrf_scores(sums: np.ndarray, order: int, beta: float, eps_smoothing: bool) -> np.ndarray:
    """chrF of every row of ``sums`` (per order: hyp, ref, match)."""
    sums = np.asarray(sums, dtype=np.float64)
    eps = 1e-16
    factor = beta ** 2
    hyp, ref, match = sums[:, 0::3][:, :order], sums[:, 1::3][:, :order], sums[:, 2::3][:, :order]
    with np.errstate(divide="ignore", invalid="ignore"):
        prec = np.where(hyp > 0, match / np.where(hyp > 0, hyp, 1), eps)
        rec = np.where(ref > 0, match / np.where(ref > 0, ref, 1), eps)
        denom = factor * prec + rec
        per_order = np.where(denom > 0, (1 + factor) * prec * rec / np.where(denom > 0, denom, 1), eps)
    if eps_smoothing:
        return 100 * _left_to_right(per_order) / order
    effective = (hyp > 0) & (ref > 0)
    n_eff = effective.sum(axis=1)
    avg_prec = _left_to_right(np.where(effective, prec, 0.0))
    avg_rec = _left_to_right(np.where(effective, rec, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        avg_prec = np.where(n_eff > 0, avg_prec / np.where(n_eff > 0, n_eff, 1), 0.0)
        avg_rec = np.where(n_eff > 0, avg_rec / np.where(n_eff > 0, n_eff, 1), 0.0)
        both = avg_prec + avg_rec
        score = (1 + factor) * avg_prec * avg_rec / np.where(both != 0, factor * avg_prec + avg_rec, 1)
    return np.where(both != 0, 100 * score, 0.0)
