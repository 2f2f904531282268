"""Corpus scoring as a pipeline (:mod:`.pipeline`): stats matrices first, then each analysis as
its own function over them, assembled into result records (:mod:`.results`), by
:func:`evalpipe.scoring.pipeline.score_systems`."""
from evalpipe.scoring.pipeline import System, score_systems, sentence_scores
from evalpipe.scoring.results import Result

__all__ = ["Result", "System", "score_systems", "sentence_scores"]
