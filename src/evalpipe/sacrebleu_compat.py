"""sacrebleu's BLEU, CHRF and TER with evalpipe's statistics: the engine of ``evalpipe sacrebleu``.

Each class subclasses the sacrebleu 2.6 class of the same name and replaces one thing: how the
per-segment statistics of a corpus are extracted (``_cache_references`` and
``_extract_corpus_statistics``).  The rows come from the evalpipe plugin with the same options
(:mod:`evalpipe.evaluators.bleu`, ``chrf``, ``ter``: the compiled block path), which gives sacrebleu's
rows integer for integer (``tests/test_sacrebleu_equality.py``).  Everything done with the rows stays
sacrebleu's own code: scores, signatures, bootstrap intervals, paired tests, formatting.  So the
numbers a user sees are sacrebleu's byte for byte, only sooner.

Stats layouts are sacrebleu's (and evalpipe's): BLEU ``hyp_len ref_len correct_1..4 total_1..4``;
chrF ``hyp ref match`` per character order then word order; TER ``num_edits avg_ref_len``.

Every core without a flag: a corpus of :data:`evalpipe.engines.AUTO_MIN_WORK` segments or more has its rows
computed by the automatic engine (a pool over the cores this process may use; the same rows, in order); a
smaller one in this process.

A reference set with missing segments (``None``, which sacrebleu's API allows for a variable number of
references) is handed to sacrebleu's own extraction: evalpipe's plugins take strings only.
"""
from __future__ import annotations

import logging
from typing import Any, Dict, List, Optional, Sequence

from sacrebleu.metrics import BLEU as _BLEU, CHRF as _CHRF, TER as _TER

from evalpipe.engines import AUTO_MIN_WORK, Job, make_engine
from evalpipe.evaluators import sacrebleu_api as sb
from evalpipe.inputs import TextPairs
from evalpipe.registry import metric_specs

#: what sacrebleu's BLEU logs when 100 or more hypotheses end in a tokenized period
TOKENIZED_WARNING = (
    "That's 100 lines that end in a tokenized period ('.')",
    "It looks like you forgot to detokenize your test data, which may hurt your score.",
    "If you insist your data is detokenized, or don't care, you can suppress this message with the `force` "
    "parameter.",
)


class _References(list):
    """The cached references as parallel streams; as long (and as true) as the corpus is."""

    def __init__(self, streams: List[List[str]]) -> None:
        super().__init__(streams)
        self.segments = len(streams[0]) if streams else 0

    def __len__(self) -> int:
        return self.segments

    def __bool__(self) -> bool:
        return self.segments > 0


class _EvalpipeStats:
    """The shared half: evalpipe's plugin ``self._plugin`` computes the rows sacrebleu would."""

    _plugin: Any
    _plugin_name: str

    def __init__(self, *args: Any, references: Optional[Sequence[Sequence[str]]] = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # sacrebleu's class, without references: they are cached here
        self._build_plugin()
        if references is not None:
            self._ref_cache = self._cache_references(references)

    def _plugin_options(self) -> Dict[str, Any]:
        raise NotImplementedError

    def _build_plugin(self) -> None:
        (self._spec,) = metric_specs([self._plugin_name], self._plugin_options())
        self._plugin = self._spec.build()

    def __getstate__(self) -> Dict[str, Any]:
        """Paired tests with ``-j N`` send metrics to worker processes: the plugin (locks, caches) is
        rebuilt there from the options."""
        return {k: v for k, v in self.__dict__.items() if k not in ("_plugin", "_spec")}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._build_plugin()

    def _cache_references(self, references: Sequence[Sequence[Optional[str]]]) -> Any:
        if any(r is None for stream in references for r in stream):
            return super()._cache_references(references)  # type: ignore[misc]
        streams = [list(stream) for stream in references]
        lengths = {len(s) for s in streams}
        if len(lengths) > 1:  # sacrebleu zips the streams: the shortest decides
            streams = [s[:min(lengths)] for s in streams]
        self.num_refs = len(streams)
        return _References(streams)

    def _extract_corpus_statistics(self, hypotheses: Sequence[str], references: Optional[Sequence[Sequence[str]]]) -> Any:
        cache = self._cache_references(references) if references else self._ref_cache  # type: ignore[attr-defined]
        if not isinstance(cache, _References):  # no cache (sacrebleu's error), or references with gaps
            return super()._extract_corpus_statistics(hypotheses, references)  # type: ignore[misc]
        hyps = list(hypotheses[:len(cache)])
        streams = [s[:len(hyps)] for s in cache]
        self._warn_tokenized(hyps)
        if len(hyps) == 1:
            return [self._plugin.stats(hyps[0], [s[0] for s in streams])]
        if len(hyps) < AUTO_MIN_WORK:
            return self._plugin.corpus_stats(hyps, streams)
        with make_engine() as engine:  # every core the process may use
            return engine.rows(Job(self._spec, TextPairs(hyps, streams)))

    def _aggregate_and_compute(self, stats: Any) -> Any:
        """sacrebleu's score of the column sums, summed column by column (``sum_of_lists`` adds row by row,
        in the same order and from the same typed zero: the same totals, ints exact, floats bit for bit)."""
        if len(stats) < 2:
            return super()._aggregate_and_compute(stats)  # type: ignore[misc]
        zero = type(stats[0][0])(0.0)
        return self._compute_score_from_stats([sum(column, zero) for column in zip(*stats)])  # type: ignore[attr-defined]

    def _warn_tokenized(self, hypotheses: Sequence[str]) -> None:
        """Only BLEU warns about tokenized input."""


class BLEU(_EvalpipeStats, _BLEU):
    """sacrebleu's BLEU; corpus statistics by :class:`evalpipe.evaluators.bleu.BLEU`."""

    _plugin_name = "bleu"

    def _plugin_options(self) -> Dict[str, Any]:
        # the tokenizer sacrebleu chose: the one given, or its default for the target language
        return {"tokenize": sb.tokenizer_name(self.tokenizer), "lowercase": self.lowercase,
                "max_ngram_order": self.max_ngram_order}

    def _warn_tokenized(self, hypotheses: Sequence[str]) -> None:
        """sacrebleu's warning (on stderr) when 100 or more lines end in `` .``, unless ``force``."""
        if not self._force and sum(h.endswith(" .") for h in hypotheses) >= 100:
            for line in TOKENIZED_WARNING:
                logging.getLogger("sacrebleu").warning(line)


class CHRF(_EvalpipeStats, _CHRF):
    """sacrebleu's CHRF; corpus statistics by :class:`evalpipe.evaluators.chrf.ChrF`."""

    _plugin_name = "chrf"

    def _plugin_options(self) -> Dict[str, Any]:
        return {"char_order": self.char_order, "word_order": self.word_order, "beta": self.beta,
                "lowercase": self.lowercase, "whitespace": self.whitespace, "eps_smoothing": self.eps_smoothing}


class TER(_EvalpipeStats, _TER):
    """sacrebleu's TER; corpus statistics by :class:`evalpipe.evaluators.ter.TER`."""

    _plugin_name = "ter"

    def _plugin_options(self) -> Dict[str, Any]:
        return {"normalized": self.normalized, "no_punct": self.no_punct, "asian_support": self.asian_support,
                "case_sensitive": self.case_sensitive}


METRICS = {"BLEU": BLEU, "CHRF": CHRF, "TER": TER}
