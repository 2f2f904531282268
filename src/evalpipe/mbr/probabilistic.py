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

        solve = (lambda a, b: torch.linalg.solve(a, b))
        u, w = torch.from_numpy(u.astype(np.float32)), torch.from_numpy(mask)
        x, y = torch.from_numpy(x0), torch.from_numpy(y0)
        reg = regularization * torch.eye(rank)
        norm2 = (lambda a: float(a.norm() ** 2))
        item = (lambda a: float(a.item()))
    else:
        solve = (lambda a, b: np.linalg.solve(a, b[:, :, None])[:, :, 0])
        u, w = u.astype(np.float64), mask
        x, y = x0.astype(np.float64), y0.astype(np.float64)
        reg = regularization * np.eye(rank)
        norm2 = (lambda a: float(np.sum(a * a)))
        item = float
    previous = 1e5
    for _ in range(iterations):
        x = solve(y.T[None, :, :] @ (y[None, :, :] * w[:, :, None]) + reg, u @ y)
        y = solve(x.T[None, :, :] @ (x[None, :, :] * w.T[:, :, None]) + reg, u.T @ x)
        loss = item(((w * (u - x @ y.T)) ** 2).sum()) + regularization * (norm2(x) + norm2(y))
        if previous - loss <= tolerance:  # (mbrs starts from 1e5: a larger first loss ends after one round)
            break
        previous = loss
    done = x @ y.T
    return done.numpy() if draws == "torch" else done


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
