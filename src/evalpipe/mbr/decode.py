"""MBR decisions: the utility matrices of every segment (:mod:`.utilities`, or a saved file, :mod:`.matrix`) or an
efficient decoder's estimates (:mod:`.decoders`), each candidate's expected utility and the selection
(:mod:`.select`, :mod:`.selectors`), computed where an engine runs them."""
from __future__ import annotations

from typing import Any, Dict, List, NamedTuple, Optional, Sequence

import numpy as np

from evalpipe.errors import UsageError
from evalpipe.mbr.decoders import EFFICIENT, Decoder, Selector
from evalpipe.mbr.matrix import UtilityMatrix, texts_hash
from evalpipe.mbr.select import TIES, _torch, expectations, select
from evalpipe.mbr.sets import CandidateSets, Given, Settings, segment_rows
from evalpipe.mbr.utilities import _check, aggregate_utilities


class Choice(NamedTuple):
    """One segment's decision: the chosen candidate's index and text, every candidate's expected utility (None:
    undefined, a candidate the pruning decoder dropped), the n-best list (indices, best first), the cells of the
    utility matrix computed (efficient decoders) and the diverse selector's objective."""

    index: int
    text: str
    utilities: List[Optional[float]]
    ranked: Optional[List[int]] = None
    cells: Optional[int] = None
    objective: Optional[Dict[str, float]] = None


def _as_list(u: np.ndarray) -> List[Optional[float]]:
    """Python floats, None where undefined (NaN: a pruned candidate)."""
    u = np.asarray(u, dtype=np.float64)
    values = u.tolist()
    return values if np.isfinite(u).all() else [v if np.isfinite(v) else None for v in values]


def _choices(candidates: Sequence[Sequence[str]], rows: Sequence[Any], higher_is_better: bool, ties: str,
             selector: Selector, cells: Optional[Sequence[int]] = None) -> List[Choice]:
    from evalpipe.mbr import selectors

    similarity = None
    if selector.name == "diverse":
        from evalpipe.mbr.utilities import pairwise_batch
        from evalpipe.registry import load_metric

        options = {"effective_order": True} if selector.diversity_metric == "bleu" else {}
        similarity = pairwise_batch(load_metric(selector.diversity_metric, **options), candidates)
    choices = []
    for g, (cands, (u, kept, *_)) in enumerate(zip(candidates, rows)):
        count = None if cells is None else int(cells[g])
        if selector.name == "diverse":
            from evalpipe.mbr.draws import kind

            ranked, obj = selectors.diverse(u, similarity[g], selector.n, higher_is_better, selector.diversity_lambda,
                                            selector.local_search_iterations, selector.local_search_neighbors,
                                            selector.seed, kind(), ties)
            choices.append(Choice(ranked[0], cands[ranked[0]], _as_list(u), ranked, count,
                                  {"objective": obj.score, "expected": obj.expected, "diversity": obj.diversity}))
        elif selector.n > 1 or not np.isfinite(u).all():
            ranked = selectors.nbest(kept if ties == "mbrs" and kept is not None else u, selector.n,
                                     higher_is_better, ties)
            choices.append(Choice(ranked[0], cands[ranked[0]], _as_list(u), ranked if selector.n > 1 else None, count))
        else:
            k = select(kept if ties == "mbrs" else u, higher_is_better, ties)
            choices.append(Choice(k, cands[k], _as_list(u), None, count))
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


def resolve(metric: Any, decoder: Optional[Decoder], aggregate: bool) -> Decoder:
    """The decoder asked for (``aggregate=True`` is ``Decoder("aggregate")``); by default exact MBR, or reranking
    for a metric that reads no reference (cometkiwi)."""
    reference_free = metric is not None and getattr(metric, "reads_source", False) and \
        not getattr(metric, "uses_reference", True)
    if decoder is None:
        return Decoder("aggregate" if aggregate else "rerank" if reference_free else "mbr")
    if aggregate and decoder.name != "aggregate":
        raise UsageError(f"--aggregate is the aggregate decoder: it does not go with decoder {decoder.name}")
    if metric is not None and decoder.name == "rerank" and not reference_free:
        raise UsageError(f"the rerank decoder ranks candidates by a metric that reads no reference (-m cometkiwi); "
                         f"{metric.name} compares them with references (use it with decoder mbr)")
    if metric is not None and decoder.name != "rerank" and reference_free:
        raise UsageError(f"{metric.name} reads no reference: it reranks candidates by their own scores (decoder "
                         f"rerank), not decoder {decoder.name}")
    return decoder


def decode(metric: Any, candidates: Sequence[Sequence[str]], pseudo_references: Optional[Sequence[Sequence[str]]] = None,
           aggregate: bool = False, weights: Optional[Sequence[Sequence[float]]] = None, ties: str = "first",
           engine: Any = None, sources: Optional[Sequence[str]] = None,
           matrices: Optional[List[UtilityMatrix]] = None,
           lprobs: Optional[Sequence[Sequence[float]]] = None, decoder: Optional[Decoder] = None,
           selector: Optional[Selector] = None, spec: Any = None) -> List[Choice]:
    """MBR decisions of every segment (``weights[g]``: segment g's weights over its pseudo-references; ``ties``:
    see :func:`evalpipe.mbr.select.select`).  With an ``engine`` (:func:`evalpipe.engines.make_engine`) the
    segments are computed where it runs them -- every core by default, or a Spark cluster's executors -- with the
    same choices; metrics that run a model compute in this process except on Spark, where each executor builds the
    metric from ``spec`` (:class:`~evalpipe.registry.MetricSpec`) once.  ``sources``: one a segment, for metrics
    that read them (COMET, MetricX).  ``matrices``: a list to which every segment's
    :class:`~evalpipe.mbr.matrix.UtilityMatrix` is appended (to save them).  ``lprobs[g]``: log-probabilities of
    segment g's pseudo-references (mbrs's ``reference_lprobs``).  ``decoder``, ``selector``:
    :mod:`evalpipe.mbr.decoders` (default: exact MBR, the best candidate)."""
    from evalpipe.mbr import decoders as dec

    decoder = resolve(metric, decoder, aggregate)
    selector = selector or Selector()
    dec.check(decoder, selector)
    aggregate = decoder.name == "aggregate"
    model = getattr(metric, "reads_source", False)
    if sources is not None and not model:
        raise UsageError(f"{metric.name} does not read the source: give no sources (they are read by -m comet)")
    _check_modes(weights, aggregate, ties, lprobs)
    if aggregate and not model and getattr(metric, "pairwise_rows", None) is None:
        aggregate_utilities(metric, [], [])  # the metric's refusal before any work
    refs = candidates if pseudo_references is None else pseudo_references
    _check(candidates, refs)
    keep = matrices is not None
    if decoder.name in EFFICIENT:
        _check_efficient(metric, decoder, candidates, refs, weights, keep)
    if model:
        if sources is None:
            raise UsageError(f"{metric.name} reads the source of each segment: give the sources (--source FILE)")
        if len(sources) != len(candidates):
            from evalpipe.errors import InputError

            raise InputError(f"{len(sources)} sources for {len(candidates)} segments of candidates")
    sets = CandidateSets(candidates, pseudo_references, weights, Settings(decoder, ties, keep, selector.n), lprobs,
                         sources)
    if engine is None or (model and engine.name != "spark"):
        rows = segment_rows(metric, sets)
    else:
        from evalpipe.engines import Job

        rows = engine.rows(Job(spec or Given(metric), sets))
    if keep:
        matrices += [UtilityMatrix(m, np.ones(m.shape, dtype=bool) if done is None else done, texts_hash(c),
                                   texts_hash(r)) for (_, _, m, done, _), c, r in zip(rows, candidates, refs)]
    cells = [row[4] for row in rows] if decoder.name in EFFICIENT else None
    return _choices(candidates, rows, metric.higher_is_better, ties, selector, cells)


def _check_efficient(metric: Any, decoder: Decoder, candidates: Sequence[Sequence[str]],
                     refs: Sequence[Sequence[str]], weights: Any, keep: bool, provider: Any = None) -> None:
    """What the centroid, probabilistic and pruning decoders refuse, before any work."""
    from evalpipe.mbr import decoders as dec
    from evalpipe.mbr.cells import MetricCells, Segment

    if weights is not None:
        raise UsageError(f"the {decoder.name} decoder weighs pseudo-references by their log-probabilities "
                         f"(--reference-lprobs), not by weights")
    if decoder.name == "centroid":
        if keep:
            raise UsageError("the centroid decoder scores candidates against centroids, not pseudo-references: there "
                             "is no candidate x pseudo-reference matrix to save (--save-utilities)")
        (provider or MetricCells(metric)).check_vectors()
    dec.check_segments(decoder, [Segment(g, c, r, None, None) for g, (c, r) in enumerate(zip(candidates, refs))])


def decode_saved(saved: Sequence[UtilityMatrix], candidates: Sequence[Sequence[str]], higher_is_better: bool,
                 weights: Optional[Sequence[Sequence[float]]] = None, ties: str = "first",
                 lprobs: Optional[Sequence[Sequence[float]]] = None, decoder: Optional[Decoder] = None,
                 selector: Optional[Selector] = None, references: Optional[Sequence[Sequence[str]]] = None,
                 path: str = "the utilities file") -> List[Choice]:
    """The decisions read from saved matrices (checked against the candidates by :func:`evalpipe.mbr.matrix.check`
    first): nothing is computed.  The efficient decoders read the cells they need (refused if the file lacks
    one); centroid MBR needs vectors and is refused."""
    from evalpipe.mbr import decoders as dec

    decoder = decoder or Decoder()
    selector = selector or Selector()
    dec.check(decoder, selector)
    if decoder.name in ("aggregate", "rerank"):
        raise UsageError(f"the {decoder.name} decoder is how utilities are computed, not decoded: the file holds "
                         f"what it was saved with")
    if decoder.name in EFFICIENT:
        from evalpipe.mbr import decoders as dec
        from evalpipe.mbr.cells import SavedCells, Segment
        from evalpipe.mbr.sets import outcome_rows

        refs = references or candidates
        provider = SavedCells(saved, path)
        _check_efficient(None, decoder, candidates, refs, weights, False, provider)
        segments = [Segment(g, c, r, None, None if lprobs is None else lprobs[g])
                    for g, (c, r) in enumerate(zip(candidates, refs))]
        rows = outcome_rows(dec.run(decoder, provider, segments, higher_is_better, selector.n), candidates, refs, ties)
        return _choices(candidates, rows, higher_is_better, ties, selector, [row[4] for row in rows])
    _check_modes(weights, False, ties, lprobs)
    rows = []
    for g, m in enumerate(saved):
        if not m.computed.all():
            from evalpipe.errors import InputError

            raise InputError(f"segment {g + 1}: exact MBR needs every utility, and the file computed part of the "
                             f"matrix (it was saved by an efficient decoder); decode it with that decoder", path)
        u, kept = expectations(m.values, None if weights is None else weights[g], ties,
                               None if lprobs is None else lprobs[g])
        rows.append((u, kept, None, None, None))
    return _choices(candidates, rows, higher_is_better, ties, selector)
