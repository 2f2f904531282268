"""MBR decisions: the utility matrices of every segment (:mod:`.utilities`, or a saved file, :mod:`.matrix`), each
candidate's expected utility and the choice (:mod:`.select`), computed where an engine runs them."""
from __future__ import annotations

from typing import Any, List, NamedTuple, Optional, Sequence

from evalpipe.errors import UsageError
from evalpipe.mbr.matrix import UtilityMatrix
from evalpipe.mbr.select import TIES, _torch, expectations, select
from evalpipe.mbr.sets import CandidateSets, Given, Row, segment_rows
from evalpipe.mbr.utilities import _check, aggregate_utilities


class Choice(NamedTuple):
    """One segment's decision: the chosen candidate's index and text, and every candidate's expected utility."""

    index: int
    text: str
    utilities: List[float]


def _choices(candidates: Sequence[Sequence[str]], rows: Sequence[Row], higher_is_better: bool,
             ties: str) -> List[Choice]:
    choices = []
    for cands, (u, kept, _) in zip(candidates, rows):
        k = select(kept if ties == "mbrs" else u, higher_is_better, ties)
        choices.append(Choice(k, cands[k], u.tolist()))
    return choices


def _check_modes(weights: Any, aggregate: bool, ties: str, lprobs: Any = None) -> None:
    if ties not in TIES:
        raise UsageError(f"expected ties first or mbrs, got {ties!r}")
    if lprobs is not None and weights is not None:
        raise UsageError("give weights over pseudo-references or their log-probabilities, not both")
    if lprobs is not None and aggregate:
        raise UsageError("log-probabilities of pseudo-references go with the full pairwise expectation, not "
                         "--aggregate")
    if ties == "mbrs" and weights is not None:
        raise UsageError("ties=mbrs reproduces mbrs's uniform expectation; weights are not part of it")
    if ties == "mbrs":
        _torch()
    if aggregate and weights is not None:
        raise UsageError("weights over pseudo-references go with the full pairwise expectation, not --aggregate")


def decode(metric: Any, candidates: Sequence[Sequence[str]], pseudo_references: Optional[Sequence[Sequence[str]]] = None,
           aggregate: bool = False, weights: Optional[Sequence[Sequence[float]]] = None, ties: str = "first",
           engine: Any = None, sources: Optional[Sequence[str]] = None,
           matrices: Optional[List[UtilityMatrix]] = None,
           lprobs: Optional[Sequence[Sequence[float]]] = None) -> List[Choice]:
    """MBR decisions of every segment (``weights[g]``: segment g's weights over its pseudo-references; ``ties``:
    see :func:`evalpipe.mbr.select.select`).  With an ``engine`` (:func:`evalpipe.engines.make_engine`) the
    segments are computed where it runs them -- every core by default -- with the same choices.  ``sources``: one
    a segment, for metrics that read them (COMET, MetricX: in this process, whatever the engine).  ``matrices``: a
    list to which every segment's :class:`~evalpipe.mbr.matrix.UtilityMatrix` is appended (to save them).
    ``lprobs[g]``: log-probabilities of segment g's pseudo-references (mbrs's ``reference_lprobs``)."""
    model = getattr(metric, "reads_source", False)
    if sources is not None and not model:
        raise UsageError(f"{metric.name} does not read the source: give no sources (they are read by -m comet)")
    _check_modes(weights, aggregate, ties, lprobs)
    if aggregate and not model and getattr(metric, "pairwise_rows", None) is None:
        aggregate_utilities(metric, [], [])  # the metric's refusal before any work
    refs = candidates if pseudo_references is None else pseudo_references
    _check(candidates, refs)
    keep = matrices is not None
    if model or engine is None:
        rows = segment_rows(metric, candidates, pseudo_references, aggregate, weights, ties, keep, sources, lprobs)
    else:
        from evalpipe.engines import Job

        rows = engine.rows(Job(Given(metric), CandidateSets(candidates, pseudo_references, weights, aggregate, ties,
                                                            keep, lprobs)))
    if keep:
        matrices += [UtilityMatrix.of(m, c, r) for (_, _, m), c, r in zip(rows, candidates, refs)]
    return _choices(candidates, rows, metric.higher_is_better, ties)


def decode_saved(saved: Sequence[UtilityMatrix], candidates: Sequence[Sequence[str]], higher_is_better: bool,
                 weights: Optional[Sequence[Sequence[float]]] = None, ties: str = "first",
                 lprobs: Optional[Sequence[Sequence[float]]] = None) -> List[Choice]:
    """The decisions read from saved matrices (checked against the candidates by :func:`evalpipe.mbr.matrix.check`
    first): nothing is computed."""
    _check_modes(weights, False, ties, lprobs)
    rows = []
    for g, m in enumerate(saved):
        u, kept = expectations(m.values, None if weights is None else weights[g], ties,
                               None if lprobs is None else lprobs[g])
        rows.append((u, kept, None))
    return _choices(candidates, rows, higher_is_better, ties)
