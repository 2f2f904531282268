"""Sufficient statistics: the metric contract and the arithmetic on stats vectors.

Every evalpipe metric splits into ``stats(hyp, refs)`` (a fixed-length vector, additive across
segments) and ``score(summed_stats)``.  Corpus scores, bootstrap intervals, significance tests
and distributed scoring only ever sum rows of a stats matrix and re-score.  This layer imports
nothing of evalpipe but :mod:`evalpipe.errors`.
"""
from evalpipe.errors import OptionError
from evalpipe.sufficient_stats.metric import Metric
from evalpipe.sufficient_stats.options import Option
from evalpipe.sufficient_stats.segments import SimulHypothesis
from evalpipe.sufficient_stats.vectors import add_stats, format_stats, parse_stats, sum_stats

__all__ = ["Metric", "Option", "OptionError", "SimulHypothesis", "add_stats", "format_stats", "parse_stats",
           "sum_stats"]
