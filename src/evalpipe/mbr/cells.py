"""What the efficient decoders ask of a utility: some cells of a segment's matrix, the pseudo-references' vectors,
and the candidates against centroids -- answered for many segments at once (one C pass, one model batch).

A decoder (:mod:`.decoders`) is a generator per segment that yields requests and receives their answers:

* :class:`Cells` ``(rows, cols)``: the utilities of candidate ``rows[k]`` against pseudo-reference ``cols[k]``;
* :class:`Vectors`: one vector per pseudo-reference, for k-means -- a COMET model's sentence embedding (float32),
  or for an n-gram metric its **statistic vector**: the counts of every n-gram the metric counts (chrF: character
  n-grams of orders 1..6 and chrF++'s word n-grams; BLEU: word n-grams 1..4 after its tokenizer), over the
  n-grams of the segment's pseudo-references;
* :class:`Against` ``(centroids, members)``: each candidate's utility against each centroid.  A COMET centroid is
  the mean embedding, scored by the model's estimator; an n-gram centroid is the mean statistic vector of its
  members, i.e. the members' reference aggregation: the candidate's matches are counted against the members' mean
  n-gram counts and mean length (exactly ``--aggregate`` over the cluster).

Two providers answer them: :class:`MetricCells` (computing with the metric) and :class:`SavedCells` (reading a
``--save-utilities`` file: only cells, and only those it holds).
"""
from __future__ import annotations

from typing import Any, List, NamedTuple, Optional, Sequence

import numpy as np

from evalpipe.errors import InputError, UsageError


class Segment(NamedTuple):
    """One segment as a decoder sees it (``index``: 0-based, for messages)."""

    index: int
    candidates: Sequence[str]
    references: Sequence[str]
    source: Optional[str]
    lprobs: Optional[Sequence[float]]


class Cells(NamedTuple):
    """Cells ``(rows[k], cols[k])``; ``block``: ``(rows, cols)`` when they are every pair of those rows and columns,
    candidate-major (pruning's steps), which an n-gram metric computes with each sentence's n-grams counted once."""

    rows: np.ndarray
    cols: np.ndarray
    block: Optional[Any] = None

    @classmethod
    def of_block(cls, rows: np.ndarray, cols: np.ndarray) -> "Cells":
        return cls(np.repeat(rows, len(cols)), np.tile(cols, len(rows)), (rows, cols))


class Vectors(NamedTuple):
    pass


class Against(NamedTuple):
    centroids: np.ndarray
    members: List[List[int]]


def _scores(metric: Any, rows: Any) -> np.ndarray:
    from evalpipe.mbr.utilities import _sentence_scores

    return _sentence_scores(metric, rows)


def _place(parts: List[Any], which: Sequence[int], asked: Sequence[Any], flat: np.ndarray) -> None:
    """Requests ``which`` of ``asked`` take their cells' values from ``flat``, in order (a block's candidate-major
    as its ``rows`` and ``cols`` list them)."""
    at = 0
    for k in which:
        n = len(asked[k][1].rows)
        parts[k], at = flat[at:at + n], at + n


class MetricCells:
    """Requests answered by a metric: n-gram metrics (``pairwise_rows``) in one C pass over every pair asked,
    model metrics (``reads_source``) in one model call, any other metric pair by pair from its statistics."""

    def __init__(self, metric: Any) -> None:
        self.metric = metric
        self.model = getattr(metric, "reads_source", False)

    def check_vectors(self) -> None:
        """Refuse a metric without vectors (before any work)."""
        m = self.metric
        if self.model and not hasattr(m, "sentence_vectors"):
            raise UsageError(f"centroid MBR clusters the pseudo-references' vectors: {m.name} has none (COMET "
                             f"regression models, chrF and BLEU do)")
        if not self.model and not hasattr(m, "profile_rows"):
            raise UsageError(f"centroid MBR clusters the pseudo-references' vectors: {m.name} has none (chrF, BLEU "
                             f"and COMET regression models do)")

    def cells(self, asked: Sequence[Any]) -> List[np.ndarray]:
        """``asked``: ``(segment, Cells)`` pairs; each answer float64, one value a cell."""
        hyps = [seg.candidates[i] for seg, req in asked for i in req.rows]
        refs = [seg.references[j] for seg, req in asked for j in req.cols]
        if not hyps:
            flat = np.zeros(0)
        elif self.model:
            srcs = [seg.source for seg, req in asked for _ in req.rows]
            flat = np.asarray(self.metric.score_rows(srcs, hyps, refs), dtype=np.float64)
        elif getattr(self.metric, "pairwise_rows", None) is not None:
            flat = self._ngram_cells(asked)
        else:
            m = self.metric
            flat = np.array([m.score(m.stats(h, [r])) for h, r in zip(hyps, refs)], dtype=np.float64)
        out, at = [], 0
        for _, req in asked:
            out.append(flat[at:at + len(req.rows)])
            at += len(req.rows)
        return out

    def _ngram_cells(self, asked: Sequence[Any]) -> np.ndarray:
        """Every cell asked, in order, in C: blocks (:class:`Cells` with ``block``: pruning's) as segments of the
        pairwise kernel, whose sentences' n-grams are then extracted once; scattered cells (probabilistic's) by its
        ``selected`` pass, each segment's n-grams counted once and only the pairs asked matched."""
        parts: List[Any] = [None] * len(asked)
        blocks = [k for k, (_, req) in enumerate(asked) if req.block is not None]
        scattered = [k for k, (_, req) in enumerate(asked) if req.block is None]
        if blocks:
            cands = [[asked[k][0].candidates[i] for i in asked[k][1].block[0]] for k in blocks]
            refs = [[asked[k][0].references[j] for j in asked[k][1].block[1]] for k in blocks]
            _place(parts, blocks, asked, _scores(self.metric, self.metric.pairwise_rows(cands, refs)))
        if scattered:
            rows = self.metric.pairwise_rows([asked[k][0].candidates for k in scattered],
                                             [asked[k][0].references for k in scattered],
                                             cells=[(asked[k][1].rows, asked[k][1].cols) for k in scattered])
            _place(parts, scattered, asked, _scores(self.metric, rows))
        return np.concatenate(parts) if parts else np.zeros(0)

    def vectors(self, asked: Sequence[Any]) -> List[np.ndarray]:
        """One matrix a segment: its pseudo-references' vectors, one a row."""
        if self.model:
            texts = [r for seg, _ in asked for r in seg.references]
            flat = np.asarray(self.metric.sentence_vectors(texts))
            out, at = [], 0
            for seg, _ in asked:
                out.append(flat[at:at + len(seg.references)])
                at += len(seg.references)
            return out
        return self.metric.profile_rows([seg.references for seg, _ in asked])

    def against(self, asked: Sequence[Any]) -> List[np.ndarray]:
        """One ``candidates x centroids`` matrix a segment."""
        if self.model:
            return self.metric.scores_against([seg.source for seg, _ in asked], [seg.candidates for seg, _ in asked],
                                              [req.centroids for _, req in asked])
        cands, groups = [], []
        for seg, req in asked:
            for members in req.members:
                cands.append(seg.candidates)
                groups.append([seg.references[j] for j in members])
        flat = _scores(self.metric, self.metric.pairwise_rows(cands, groups, aggregate=True))
        out, at = [], 0
        for seg, req in asked:
            n, k = len(seg.candidates), len(req.members)
            out.append(flat[at:at + n * k].reshape(k, n).T)
            at += n * k
        return out


class SavedCells:
    """Requests answered from saved matrices (:class:`~evalpipe.mbr.matrix.UtilityMatrix`): a cell the file did
    not compute is refused, and so are vectors (a file holds cells)."""

    def __init__(self, matrices: Sequence[Any], path: str) -> None:
        self.matrices, self.path = matrices, path

    def check_vectors(self) -> None:
        raise UsageError(f"centroid MBR clusters the pseudo-references' vectors: {self.path} holds utilities, not "
                         f"vectors; compute them with -m")

    def cells(self, asked: Sequence[Any]) -> List[np.ndarray]:
        out = []
        for seg, req in asked:
            m = self.matrices[seg.index]
            if not m.computed[req.rows, req.cols].all():
                raise InputError(f"segment {seg.index + 1}: the decoder needs utilities the file did not compute (it "
                                 f"was saved by a decoder that computed part of the matrix); save them with the "
                                 f"decoder you decode with, or with the exact one", self.path)
            out.append(np.asarray(m.values[req.rows, req.cols], dtype=np.float64))
        return out

    def vectors(self, asked: Sequence[Any]) -> List[np.ndarray]:
        self.check_vectors()
        return []

    against = vectors
