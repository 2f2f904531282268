"""Probabilistic MBR (Trabelsi et al., 2024, "Efficient Minimum Bayes Risk Decoding using Low-Rank Matrix
Completion Algorithms"; mbrs 0.1.8's ``DecoderProbabilisticMBR``).

Of a segment's ``H x R`` utility matrix only ``ceil(H * R / reduction_factor)`` cells are computed, drawn without
replacement (the first cells of a random permutation of the ``H * R``, seeded by ``seed`` anew for every
segment); the matrix is completed by alternating least squares: ``U ~ X @ Y.T`` with ``X`` (H x rank), ``Y``
(R x rank) initialised uniform in ``[0, 1)`` scaled by ``(H * rank) ** -0.5`` and ``(R * rank) ** -0.5`` (the same
seed), then alternately

    X_i = solve(Y.T diag(m_i) Y + lambda I, U_i Y),   Y_j = solve(X.T diag(m_j) X + lambda I, U_j.T X)

(``m``: the computed cells, ``U``: zero elsewhere), ``iterations`` times or until the loss
``sum(m * (U - X Y.T)^2) + lambda (|X|^2 + |Y|^2)`` falls by no more than 1e-4.  The completed matrix's row means
are the expected utilities.  ``reduction_factor <= 1`` computes every cell (exact MBR).

As mbrs 0.1.8, the loss starts at 1e5: on chrF's or BLEU's 0-100 scale the first round's loss is larger, and the
completion stops after that one round.
"""
from __future__ import annotations

import math
from typing import Any, Generator, Tuple

import numpy as np

from evalpipe.mbr.cells import Cells, Segment
from evalpipe.mbr.draws import Draws


def complete(matrix: np.ndarray, mask: np.ndarray, rank: int, regularization: float, iterations: int, seed: int,
             draws: str, tolerance: float = 1e-4) -> np.ndarray:
    """The ALS completion ``X @ Y.T`` of ``matrix`` from its cells under ``mask`` (module docstring).  With torch
    draws it runs in torch float32, mbrs's own operations: the normal equations are ill-conditioned (condition
    numbers of 1e4 on chrF's 0-100 scale), so float32 rounding alone moves uncomputed cells by points, and only
    the same operations give the same completion; with numpy draws it runs in numpy float64."""
    n, m = matrix.shape
    g = Draws(seed, draws)
    x0 = g.rand((n, rank)) * np.float32((n * rank) ** -0.5)
    y0 = g.rand((m, rank)) * np.float32((m * rank) ** -0.5)
    u = np.where(mask, matrix, 0)
    if draws == "torch":
        import torch

        with torch.inference_mode():  # no autograd bookkeeping: the same operations, the same bits
            done = _als_torch(torch, torch.from_numpy(u.astype(np.float32)), torch.from_numpy(mask),
                              torch.from_numpy(x0), torch.from_numpy(y0), regularization, iterations, tolerance)
            return done.numpy()
    return _als_numpy(u.astype(np.float64), mask, x0.astype(np.float64), y0.astype(np.float64), regularization,
                      iterations, tolerance)


def _als_torch(torch: Any, u: Any, mask: Any, x: Any, y: Any, regularization: float, iterations: int,
               tolerance: float) -> Any:
    """The rounds in torch float32, mbrs's operations in its order (the mask as 0/1 floats, made once: a product
    with it is the product with the boolean mask, bit for bit)."""
    w = mask.to(torch.float32)
    by_row, by_col, ut = w[:, :, None], w.T[:, :, None], u.T
    reg = regularization * torch.eye(x.shape[1])
    solve = torch.linalg.solve
    previous = 1e5
    for _ in range(iterations):
        x = solve(y.T[None, :, :] @ (y[None, :, :] * by_row) + reg, u @ y)
        y = solve(x.T[None, :, :] @ (x[None, :, :] * by_col) + reg, ut @ x)
        loss = float(((w * (u - x @ y.T)) ** 2).sum().item()) + regularization * (float(x.norm() ** 2) +
                                                                                  float(y.norm() ** 2))
        if previous - loss <= tolerance:  # (mbrs starts from 1e5: a larger first loss ends after one round)
            break
        previous = loss
    return x @ y.T


def _als_numpy(u: np.ndarray, w: np.ndarray, x: np.ndarray, y: np.ndarray, regularization: float, iterations: int,
               tolerance: float) -> np.ndarray:
    """The rounds in numpy float64 (numpy draws: no torch)."""
    reg = regularization * np.eye(x.shape[1])
    previous = 1e5
    for _ in range(iterations):
        x = np.linalg.solve(y.T[None, :, :] @ (y[None, :, :] * w[:, :, None]) + reg, (u @ y)[:, :, None])[:, :, 0]
        y = np.linalg.solve(x.T[None, :, :] @ (x[None, :, :] * w.T[:, :, None]) + reg, (u.T @ x)[:, :, None])[:, :, 0]
        loss = float(((w * (u - x @ y.T)) ** 2).sum()) + regularization * (float(np.sum(x * x)) + float(np.sum(y * y)))
        if previous - loss <= tolerance:
            break
        previous = loss
    return x @ y.T


def decode(seg: Segment, cfg: Any, draws: str) -> Generator[Cells, np.ndarray, Tuple[np.ndarray, np.ndarray, np.ndarray, int]]:
    """One segment: yields the drawn cells, returns ``(completed matrix, the computed cells' values (zero
    elsewhere), their mask, cells computed)``."""
    h, r = len(seg.candidates), len(seg.references)
    if cfg.reduction_factor <= 1.0:
        rows, cols = np.divmod(np.arange(h * r), r)
        values = yield Cells(rows, cols)
        full = np.asarray(values, dtype=np.float64).reshape(h, r)
        return full, full, np.ones((h, r), dtype=bool), h * r
    budget = math.ceil(h * r / cfg.reduction_factor)
    picked = Draws(cfg.seed, draws).randperm(h * r)[:budget]
    rows, cols = np.divmod(picked, r)
    values = yield Cells(rows, cols)
    matrix = np.zeros((h, r), dtype=np.float64)
    mask = np.zeros((h, r), dtype=bool)
    matrix[rows, cols] = values
    mask[rows, cols] = True
    done = complete(matrix, mask, cfg.rank, cfg.regularization_weight, cfg.iterations, cfg.seed, draws)
    return done.astype(np.float64), matrix, mask, budget
