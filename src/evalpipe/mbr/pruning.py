"""Confidence-based pruning MBR (Cheng and Vlachos, 2023, "Faster Minimum Bayes Risk Decoding with
Confidence-based Pruning"; mbrs 0.1.8's ``DecoderPruningMBR``).

The pseudo-references are taken in order, in steps that grow as ``sampling_scheduler`` says (8, 16, 32, ...
capped at their count): at step t the surviving candidates are scored against pseudo-references ``[r_{t-1},
r_t)``; the best candidate by the expected utility over the first ``r_t`` is found, and ``bootstrap_samples``
resamples of those ``r_t`` columns (with replacement; a generator seeded by ``seed`` for the segment) estimate
each candidate's rate of being at least as good as it.  Candidates whose rate is at most ``1 - alpha`` are pruned
-- unless fewer than the requested n-best would survive, which ends the search.  The choice is the best
survivor by the expected utility over the pseudo-references scored so far; a pruned candidate's expected utility
is undefined (``null``).  Pseudo-references' log-probabilities weight each expectation (their first ``r_t``,
softmax-normalized, as mbrs).
"""
from __future__ import annotations

from typing import Any, Generator, Optional, Tuple

import numpy as np

from evalpipe.mbr.cells import Cells, Segment
from evalpipe.mbr.draws import Draws
from evalpipe.mbr.select import weighted_mean as _expect


def _win_rates(scored: np.ndarray, samples: np.ndarray, lprobs: Optional[np.ndarray], higher_is_better: bool,
               draws: str) -> Tuple[int, np.ndarray]:
    """``(the best candidate by the expected utility over the columns, each candidate's rate of being at least as
    good as it over the bootstrap resamples)``.  With torch draws in torch float32, mbrs's operations: a resample
    sums a row's values in its own order, and equal sums of reordered values can differ in the last float32 bit,
    which decides ``>=`` at a tie; numpy draws: float64."""
    if draws == "torch":
        import torch

        m = torch.from_numpy(scored.astype(np.float32))
        idx = torch.from_numpy(samples)
        if lprobs is None:
            expected, boot = m.mean(dim=-1), m[:, idx].mean(dim=-1)
        else:
            lp = torch.from_numpy(lprobs.astype(np.float32))
            expected = (m * lp.softmax(dim=-1, dtype=torch.float32)[None, :]).sum(dim=-1)
            boot = (m[:, idx] * lp[idx].softmax(dim=-1, dtype=torch.float32)[None, :]).sum(dim=-1)
        best = int(torch.argmax(expected) if higher_is_better else torch.argmin(expected))
        wins = boot >= boot[best] if higher_is_better else boot <= boot[best]
        return best, wins.float().mean(dim=1).numpy()
    expected = _expect(scored, lprobs)
    best = int(np.argmax(expected) if higher_is_better else np.argmin(expected))
    picked = scored[:, samples]  # candidates x resamples x columns
    if lprobs is None:
        boot = picked.mean(axis=-1)
    else:
        w = np.exp(lprobs[samples] - lprobs[samples].max(axis=-1, keepdims=True))
        boot = np.einsum("hbr,br->hb", picked, w / w.sum(axis=-1, keepdims=True))
    wins = boot >= boot[best] if higher_is_better else boot <= boot[best]
    return best, wins.mean(axis=1)


def decode(seg: Segment, cfg: Any, draws: str, nbest: int,
           higher_is_better: bool) -> Generator[Cells, np.ndarray, Tuple[np.ndarray, np.ndarray, np.ndarray, int]]:
    """One segment: yields each step's cells; returns ``(expected utilities with NaN for the pruned, the scored
    cells' values, their mask, cells computed)``."""
    h, total = len(seg.candidates), len(seg.references)
    lp = None if seg.lprobs is None else np.asarray(seg.lprobs, dtype=np.float64)
    width = min(max(cfg.sampling_scheduler), total)
    values = np.zeros((h, width))
    mask = np.zeros((h, width), dtype=bool)
    alive = np.arange(h)
    g = Draws(cfg.seed, draws)
    done = computed = 0
    for r in cfg.sampling_scheduler:
        r = min(r, total)
        if r <= done:
            break
        asked = Cells.of_block(alive, np.arange(done, r))
        rows, cols = asked.rows, asked.cols
        got = yield asked
        values[rows, cols] = got
        mask[rows, cols] = True
        computed += len(rows)
        best, rates = _win_rates(values[alive, :r], g.randint(r, (cfg.bootstrap_samples, r)),
                                 None if lp is None else lp[:r], higher_is_better, draws)
        winners = np.nonzero(rates > 1 - cfg.alpha)[0]
        if len(winners) < nbest:
            break
        alive = alive[winners]
        done = r
    # (mbrs takes the mean over no column when the first step ends the search: undefined; the columns of that
    # first step are used instead)
    used = done or min(cfg.sampling_scheduler[0], total)
    expected = np.full(h, np.nan)
    expected[alive] = _expect(values[alive, :used], None if lp is None else lp[:used])
    return expected, values, mask, computed
