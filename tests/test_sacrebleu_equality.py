"""BLEU, chrF and TER: summed per-segment stats score to sacrebleu's corpus_score, bit for bit.

Expected values come from sacrebleu itself, run here on the same data (never typed in).
"""
from __future__ import annotations

import itertools

import pytest
import sacrebleu

from evalpipe import load_metric
from evalpipe.sufficient_stats import sum_stats

EDGE_HYPS = ["", "Hello world !", "ünïcödé — “quotes” …", "a b c d e f", "3.5 , 4-5 (x) &amp;", "   ", "中文 测试"]
EDGE_REFS = [["", "Hello, world!", "ünïcödé - \"quotes\" ...", "a b c d e f", "3.5, 4-5 (x) &", "", "中文测试"],
             ["nothing", "", "unicode", "f e d c b a", "3.5 , 4 - 5", "x", "中 文"]]


def corpus(metric, hyps, ref_streams):
    rows = [metric.stats(h, [r[i] for r in ref_streams]) for i, h in enumerate(hyps)]
    return metric.score(sum_stats(rows))


@pytest.mark.parametrize("nrefs", [1, 2, 3])
def test_bleu_real_data_all_reference_counts(news, nrefs):
    refs = news["en-de.refs"][:nrefs]
    for hyps in news["en-de.systems"].values():
        assert corpus(load_metric("bleu"), hyps, refs) == sacrebleu.BLEU().corpus_score(hyps, refs).score


@pytest.mark.parametrize("options", [
    {"tokenize": "intl"}, {"tokenize": "char"}, {"tokenize": "none"}, {"tokenize": "zh"},
    {"lowercase": True}, {"smooth_method": "floor"}, {"smooth_method": "add-k", "smooth_value": 2},
    {"smooth_method": "none"}, {"max_ngram_order": 2}, {"max_ngram_order": 6}, {"effective_order": True},
])
def test_bleu_options_real_data(news, options):
    refs = news["en-de.refs"][:2]
    hyps = next(iter(news["en-de.systems"].values()))
    assert corpus(load_metric("bleu", **options), hyps, refs) == sacrebleu.BLEU(**options).corpus_score(hyps, refs).score


def test_bleu_zh_en_with_empty_lines(news):
    for hyps in news["zh-en.systems"].values():
        refs = news["zh-en.refs"]
        assert corpus(load_metric("bleu"), hyps, refs) == sacrebleu.BLEU().corpus_score(hyps, refs).score


@pytest.mark.parametrize("options", [{}, {"tokenize": "intl"}, {"smooth_method": "add-k"}, {"effective_order": True},
                                     {"lowercase": True}])
def test_bleu_edge_cases(options):
    for k in (1, 2):
        ours = corpus(load_metric("bleu", **options), EDGE_HYPS, EDGE_REFS[:k])
        assert ours == sacrebleu.BLEU(**options).corpus_score(EDGE_HYPS, EDGE_REFS[:k]).score


def test_bleu_sentence_level_equals_sacrebleu(news):
    hyps = next(iter(news["en-de.systems"].values()))[:200]
    refs = news["en-de.refs"][0][:200]
    ours, theirs = load_metric("bleu", effective_order=True), sacrebleu.BLEU(effective_order=True)
    for h, r in zip(hyps, refs):
        assert ours.score(ours.stats(h, [r])) == theirs.sentence_score(h, [r]).score


def test_bleu_stats_equal_sacrebleu_stats(news):
    hyps = next(iter(news["en-de.systems"].values()))
    refs = news["en-de.refs"]
    theirs = sacrebleu.BLEU()._extract_corpus_statistics(hyps, refs)
    metric = load_metric("bleu")
    assert [metric.stats(h, [r[i] for r in refs]) for i, h in enumerate(hyps)] == theirs


def test_score_does_not_mutate_stats():
    metric = load_metric("bleu", smooth_method="add-k")
    stats = metric.stats("a b c", ["a b d"])
    copy = list(stats)
    metric.score(stats)
    assert stats == copy


@pytest.mark.parametrize("options", [{}, {"word_order": 2}, {"char_order": 4, "beta": 1}, {"lowercase": True},
                                     {"whitespace": True}, {"eps_smoothing": True}, {"word_order": 2, "eps_smoothing": True}])
@pytest.mark.parametrize("nrefs", [1, 3])
def test_chrf_real_data(news, options, nrefs):
    refs = news["en-de.refs"][:nrefs]
    hyps = next(iter(news["en-de.systems"].values()))
    assert corpus(load_metric("chrf", **options), hyps, refs) == sacrebleu.CHRF(**options).corpus_score(hyps, refs).score


def test_chrf_edge_cases():
    for k, options in itertools.product((1, 2), ({}, {"word_order": 2})):
        ours = corpus(load_metric("chrf", **options), EDGE_HYPS, EDGE_REFS[:k])
        assert ours == sacrebleu.CHRF(**options).corpus_score(EDGE_HYPS, EDGE_REFS[:k]).score


@pytest.mark.parametrize("options", [{}, {"normalized": True}, {"no_punct": True}, {"case_sensitive": True},
                                     {"normalized": True, "asian_support": True}])
def test_ter_real_data_single_reference(news, options):
    refs = news["en-de.refs"][:1]
    hyps = next(iter(news["en-de.systems"].values()))[:120]
    assert corpus(load_metric("ter", **options), hyps, refs) == sacrebleu.TER(**options).corpus_score(hyps, refs).score


def test_ter_multi_reference(news):
    """Average reference lengths are floats: evalpipe sums them exactly (fsum), sacrebleu left to right.

    The totals agree to the last bit whenever sacrebleu's running sum makes no rounding error,
    and to within a few ulps otherwise; the per-segment stats are identical.
    """
    refs = [r[:120] for r in news["en-de.refs"][:3]]
    hyps = next(iter(news["en-de.systems"].values()))[:120]
    metric = load_metric("ter")
    theirs = sacrebleu.TER()
    assert [metric.stats(h, [r[i] for r in refs]) for i, h in enumerate(hyps)] == \
        theirs._extract_corpus_statistics(hyps, refs)
    assert corpus(metric, hyps, refs) == pytest.approx(theirs.corpus_score(hyps, refs).score, rel=1e-13, abs=0)


def test_ter_edge_cases():
    ours = corpus(load_metric("ter"), EDGE_HYPS, EDGE_REFS[:1])
    assert ours == sacrebleu.TER().corpus_score(EDGE_HYPS, EDGE_REFS[:1]).score


@pytest.mark.parametrize("name, cls", [("bleu", sacrebleu.BLEU), ("chrf", sacrebleu.CHRF), ("ter", sacrebleu.TER)])
def test_signatures_equal_sacrebleu(name, cls):
    ours, theirs = load_metric(name), cls()
    theirs.corpus_score(["a b"], [["a c"], ["a b"]])
    assert ours.signature(nrefs=2) == theirs.get_signature().format()
    assert "nrefs:?" in ours.signature()


def test_reference_cache_is_bounded_and_correct():
    metric = load_metric("bleu", cache_size=2)
    first = metric.stats("a b c", ["a b c d"])
    assert len(metric._cache) == 0  # seen once: computed, not kept
    for ref in (["a b c d"], ["y"], ["z"]):
        metric.stats("x", ref)
        metric.stats("x y", ref)
    assert len(metric._cache) == 2
    assert metric.stats("a b c", ["a b c d"]) == first
    hits = metric._cache.hits
    metric.stats("a b", ["z"])
    assert metric._cache.hits == hits + 1
