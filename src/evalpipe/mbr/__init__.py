"""Minimum Bayes risk decoding on sufficient statistics.

For each segment, N candidates (samples, an n-best list, or several systems' outputs) are scored against M
pseudo-references (by default the candidates themselves) with a utility metric; a candidate's expected utility is
the mean of its row (or the weighted mean, weights over pseudo-references), and the candidate with the highest one
is chosen (the lowest for metrics where lower is better: TER, MetricX).

* :mod:`.utilities` -- the utility matrices: pairwise (one C pass per segment for BLEU, chrF, chrF++), reference
  aggregation, and the float32 matrices of models (COMET, MetricX);
* :mod:`.matrix` -- :class:`UtilityMatrix`, the matrix as data: saved (``--save-utilities``) and decoded again
  (``--utilities``) without computing anything;
* :mod:`.select` -- expected utilities and the choice (ties: the first, or mbrs 0.1.8's);
* :mod:`.decoders` -- the decoders (exact, aggregate, centroid, probabilistic, pruning, rerank) and selectors
  (nbest, diverse) as data, and the driver of the efficient ones; :mod:`.centroid`, :mod:`.probabilistic`,
  :mod:`.pruning`, :mod:`.selectors` hold each; :mod:`.cells` what they ask of a metric; :mod:`.draws` their
  random draws;
* :mod:`.decode` -- every segment's decision, computed where an engine runs it;
* :mod:`.candidates`, :mod:`.requests`, :mod:`.sets`, :mod:`.protocol` -- where candidates come from, the
  ``MBR`` request's keys, segments as an engine input, the line protocol's ``MBR`` reply.
"""
from __future__ import annotations

from evalpipe.mbr.decode import Choice, decode, decode_saved, resolve
from evalpipe.mbr.decoders import Decoder, Selector
from evalpipe.mbr.matrix import UtilityMatrix
from evalpipe.mbr.select import TIES, expected_utilities, select
from evalpipe.mbr.utilities import aggregate_utilities, iter_pairwise, pairwise, pairwise_batch

__all__ = ["Choice", "Decoder", "Selector", "TIES", "resolve", "UtilityMatrix", "aggregate_utilities", "decode", "decode_saved", "expected_utilities",
           "iter_pairwise", "pairwise", "pairwise_batch", "select"]
