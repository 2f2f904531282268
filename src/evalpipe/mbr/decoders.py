"""The MBR decoders and selectors as data (:class:`Decoder`, :class:`Selector`) and the driver of the efficient
decoders: every segment's decoder is a generator of requests (:mod:`.cells`), run in lockstep over chunks of
segments so that each round of requests is answered at once (one C pass, one model batch).

Decoders (mbrs 0.1.8's, under its option names):

* ``mbr`` -- exact: every candidate against every pseudo-reference (:mod:`.utilities`);
* ``aggregate`` -- reference aggregation: each candidate against the pseudo-references' mean statistics;
* ``centroid`` -- k-means over the pseudo-references' vectors, candidates against the centroids (:mod:`.centroid`);
* ``probabilistic`` -- a random fraction of the cells, the rest by low-rank completion (:mod:`.probabilistic`);
* ``pruning`` -- pseudo-references in growing steps, candidates pruned by bootstrap confidence (:mod:`.pruning`);
* ``rerank`` -- quality estimation: each candidate's own score by a metric that reads no reference.

Selectors (:mod:`.selectors`): ``nbest`` (the n best) and ``diverse`` (a diverse n-best).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from evalpipe.errors import InputError, UsageError
from evalpipe.mbr.cells import Against, Cells, Segment, Vectors

DECODERS = ("mbr", "aggregate", "centroid", "probabilistic", "pruning", "rerank")
SELECTORS = ("nbest", "diverse")
EFFICIENT = ("centroid", "probabilistic", "pruning")


@dataclass(frozen=True)
class Decoder:
    """A decoder and its options (defaults: mbrs 0.1.8's).  ``draws``: ``torch`` / ``numpy`` / None (torch where
    installed, :mod:`.draws`)."""

    name: str = "mbr"
    seed: int = 0
    ncentroids: int = 8
    kmeans_iterations: int = 5
    count_weight: bool = False
    reduction_factor: float = 8.0
    rank: int = 8
    regularization_weight: float = 0.1
    iterations: int = 10
    alpha: float = 0.99
    sampling_scheduler: Tuple[int, ...] = (8, 16, 32, 64, 128, 256)
    bootstrap_samples: int = 500
    draws: Optional[str] = None


@dataclass(frozen=True)
class Selector:
    """A selector and its options: ``n`` candidates a segment (mbrs's ``nbest``)."""

    name: str = "nbest"
    n: int = 1
    diversity_metric: str = "bleu"
    diversity_lambda: float = 0.1
    local_search_iterations: int = 20
    local_search_neighbors: int = 1
    seed: int = 0


#: the options that act with each decoder (``seed``: with the randomized ones)
DECODER_OPTIONS = {"centroid": ("ncentroids", "kmeans_iterations", "count_weight", "seed"),
                   "probabilistic": ("reduction_factor", "rank", "regularization_weight", "iterations", "seed"),
                   "pruning": ("alpha", "sampling_scheduler", "bootstrap_samples", "seed")}
SELECTOR_OPTIONS = {"nbest": (), "diverse": ("diversity_metric", "diversity_lambda", "local_search_iterations",
                                             "local_search_neighbors", "seed")}


def check(decoder: Decoder, selector: Selector, given: Iterable[str] = (), spell: Any = None) -> None:
    """Refuse (one line) an unknown decoder or selector, an option ``given`` (field names) that acts with
    neither, and values out of range.  ``spell(name)``: how the option is written where it came from."""
    spell = spell or (lambda name: name)
    if decoder.name not in DECODERS:
        raise UsageError(f"expected a decoder among {', '.join(DECODERS)}, got {decoder.name!r}")
    if selector.name not in SELECTORS:
        raise UsageError(f"expected a selector among {', '.join(SELECTORS)}, got {selector.name!r}")
    acting = set(DECODER_OPTIONS.get(decoder.name, ())) | set(SELECTOR_OPTIONS[selector.name])
    for name in given:
        if name not in acting and name not in ("name", "n", "draws"):
            owners = [d for d, names in {**DECODER_OPTIONS, **SELECTOR_OPTIONS}.items() if name in names]
            raise UsageError(f"{spell(name)} is an option of {' and '.join(owners)}, not of decoder {decoder.name} "
                             f"with selector {selector.name}")
    if decoder.name == "pruning" and selector.name != "nbest":
        raise UsageError("the pruning decoder keeps the best candidates only: it goes with selector nbest, not "
                         f"{selector.name} (as mbrs)")
    positive = {"ncentroids": decoder.ncentroids, "kmeans_iterations": decoder.kmeans_iterations,
                "rank": decoder.rank, "iterations": decoder.iterations, "bootstrap_samples": decoder.bootstrap_samples,
                "n": selector.n, "local_search_neighbors": selector.local_search_neighbors}
    for name, value in positive.items():
        if not value >= 1:
            raise UsageError(f"{spell(name)} must be at least 1, got {value}")
    if selector.local_search_iterations < 0:
        raise UsageError(f"{spell('local_search_iterations')} must be at least 0, got {selector.local_search_iterations}")
    if not (math.isfinite(decoder.reduction_factor) and decoder.reduction_factor > 0):
        raise UsageError(f"{spell('reduction_factor')} must be a positive number, got {decoder.reduction_factor}")
    if not (math.isfinite(decoder.regularization_weight) and decoder.regularization_weight >= 0):
        raise UsageError(f"{spell('regularization_weight')} must be a number at least 0, got "
                         f"{decoder.regularization_weight}")
    if not 0 < decoder.alpha < 1:
        raise UsageError(f"{spell('alpha')} must be between 0 and 1 (a confidence), got {decoder.alpha}")
    sched = list(decoder.sampling_scheduler)
    if not sched or any(s < 1 for s in sched) or any(b <= a for a, b in zip(sched, sched[1:])):
        raise UsageError(f"{spell('sampling_scheduler')} must grow: positive sample sizes, each larger than the one "
                         f"before, got {','.join(map(str, sched))}")
    if not math.isfinite(selector.diversity_lambda):
        raise UsageError(f"{spell('diversity_lambda')} must be a number, got {selector.diversity_lambda}")


class Outcome(NamedTuple):
    """One segment's result of an efficient decoder: expected utilities (NaN: undefined, a pruned candidate), the
    cells to save (values and which were computed; None for centroid) and how many cells were computed."""

    utilities: np.ndarray
    values: Optional[np.ndarray]
    computed: Optional[np.ndarray]
    cells: int


def _strategy(decoder: Decoder, seg: Segment, draws: str, n: int, higher_is_better: bool) -> Any:
    from evalpipe.mbr import centroid, probabilistic, pruning
    from evalpipe.mbr.select import weighted_mean as _expect

    if decoder.name == "centroid":
        matrix, lprobs = yield from centroid.decode(seg, decoder, draws)
        return Outcome(_expect(matrix, lprobs), None, None, matrix.size)
    if decoder.name == "probabilistic":
        completed, values, mask, cells = yield from probabilistic.decode(seg, decoder, draws)
        return Outcome(_expect(completed, seg.lprobs), values, mask, cells)
    u, values, mask, cells = yield from pruning.decode(seg, decoder, draws, n, higher_is_better)
    return Outcome(u, values, mask, cells)


PAIRS_PER_ROUND = 200_000  # segments run in lockstep in chunks of about this many candidate x reference pairs


def run(decoder: Decoder, provider: Any, segments: Sequence[Segment], higher_is_better: bool, n: int = 1,
        keep: bool = False) -> List[Outcome]:
    """Every segment's :class:`Outcome` under an efficient decoder, requests answered by ``provider``
    (:class:`~evalpipe.mbr.cells.MetricCells` or :class:`~evalpipe.mbr.cells.SavedCells`); ``keep``: the computed
    cells come back for saving."""
    from evalpipe.mbr.draws import kind

    draws = kind(decoder.draws)
    out: List[Outcome] = []
    start = 0
    while start < len(segments):
        end, pairs = start, 0
        while end < len(segments) and (end == start or pairs < PAIRS_PER_ROUND):
            pairs += len(segments[end].candidates) * len(segments[end].references)
            end += 1
        out += _round(decoder, provider, segments[start:end], draws, n, higher_is_better, keep)
        start = end
    return out


def _round(decoder: Decoder, provider: Any, segments: Sequence[Segment], draws: str, n: int, higher_is_better: bool,
           keep: bool) -> List[Outcome]:
    results: Dict[int, Outcome] = {}
    live: Dict[int, Tuple[Any, Any]] = {}

    def advance(k: int, gen: Any, answer: Any) -> None:
        try:
            live[k] = (gen, gen.send(answer))
        except StopIteration as done:
            live.pop(k, None)
            results[k] = done.value

    for k, seg in enumerate(segments):
        advance(k, _strategy(decoder, seg, draws, n, higher_is_better), None)
    while live:
        for kind_, ask in ((Cells, provider.cells), (Vectors, provider.vectors), (Against, provider.against)):
            ks = [k for k, (_, req) in live.items() if isinstance(req, kind_)]
            if not ks:
                continue
            answers = ask([(segments[k], live[k][1]) for k in ks])
            for k, answer in zip(ks, answers):
                advance(k, live[k][0], answer)
    outcomes = [results[k] for k in range(len(segments))]
    if not keep:
        outcomes = [o._replace(values=None, computed=None) for o in outcomes]
    return outcomes


def check_segments(decoder: Decoder, segments: Sequence[Segment]) -> None:
    """Refuse (one line) what a decoder cannot do with these segments."""
    if decoder.name == "centroid":
        for seg in segments:
            if decoder.ncentroids > len(seg.references):
                raise InputError(f"segment {seg.index + 1} has {len(seg.references)} pseudo-references, fewer than "
                                 f"the {decoder.ncentroids} centroids asked (--ncentroids)")


__all__ = ["DECODERS", "DECODER_OPTIONS", "Decoder", "EFFICIENT", "Outcome", "SELECTORS", "SELECTOR_OPTIONS",
           "Selector", "check", "check_segments", "run"]
