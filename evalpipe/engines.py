"""Where per-segment stats are extracted: in this process (``local``) or a process pool (``pool``).

Stats are additive, so a corpus computation is a map (stats per segment) and a reduce (exact
vector sum, :func:`evalpipe.sufficient_stats.vectors.sum_stats`).  The pool splits the corpus into
contiguous chunks, builds the metric in each worker from its name and options (metrics need not be
picklable), and returns the rows in corpus order, so results are identical to ``local``.
"""
from __future__ import annotations

import multiprocessing as mp
from typing import Any, Dict, List, Optional, Sequence

_WORKER_METRIC: Dict[str, Any] = {}


def _init_worker(name: str, options: Dict[str, Any]) -> None:
    from evalpipe.registry import load_metric

    _WORKER_METRIC["metric"] = load_metric(name, **options)


def _chunk_stats(args: tuple) -> List[list]:
    hyps, refs = args
    metric = _WORKER_METRIC["metric"]
    return [metric.stats(h, [r[i] for r in refs]) for i, h in enumerate(hyps)]


def extract_stats(metric: Any, name: str, options: Dict[str, Any], hypotheses: Sequence[str],
                  references: Sequence[Sequence[str]], workers: int = 1,
                  chunk_size: Optional[int] = None) -> List[list]:
    """Per-segment stats rows of ``hypotheses`` against reference streams, in order."""
    n = len(hypotheses)
    if workers <= 1 or n < 2 * workers:
        return [metric.stats(h, [r[i] for r in references]) for i, h in enumerate(hypotheses)]
    size = chunk_size or max(1, min(20000, -(-n // (workers * 4))))
    chunks = [(list(hypotheses[i:i + size]), [list(r[i:i + size]) for r in references]) for i in range(0, n, size)]
    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
    with ctx.Pool(workers, initializer=_init_worker, initargs=(name, options)) as pool:
        rows: List[list] = []
        for part in pool.imap(_chunk_stats, chunks):
            rows.extend(part)
    # The parent's metric object also sees one segment, so what it records about its input (the
    # reference count in its signature) is what it would have recorded scoring locally.
    metric.stats(hypotheses[0], [r[0] for r in references])
    return rows
