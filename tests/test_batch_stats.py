"""The block path (``corpus_stats``: references indexed once by evaluators/kernels/ngram_matches.py, C or its
numpy reference) gives exactly the rows of the per-segment ``stats`` path, and sacrebleu's corpus scores,
on real data -- including blocks whose keys do not fit 63 bits (counted segment by segment)."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import sacrebleu

from evalpipe import load_metric
from evalpipe.evaluators.kernels import ngram_matches
from evalpipe.sufficient_stats import metric as base

from conftest import NEWS, lines

CASES = [
    ("bleu", {}),
    ("bleu", {"lowercase": True}),
    ("bleu", {"max_ngram_order": 9}),  # several ranked phases
    ("bleu", {"tokenize": "char"}),
    ("chrf", {}),
    ("chrf", {"word_order": 2}),
    ("chrf", {"lowercase": True, "whitespace": True}),
    ("chrf", {"char_order": 14}),
]


def per_segment(metric, hyps, refs):
    """The per-segment path: ``stats`` of every segment."""
    return [metric.stats(h, [r[i] for r in refs]) for i, h in enumerate(hyps)]


@pytest.mark.parametrize("name,options", CASES)
@pytest.mark.parametrize("nrefs", [1, 3])
def test_batch_rows_equal_per_segment_rows_en_de(news, name, options, nrefs):
    refs = news["en-de.refs"][:nrefs]
    for hyps in list(news["en-de.systems"].values())[:2]:
        batch = load_metric(name, **options).corpus_stats(hyps, refs)
        assert batch == per_segment(load_metric(name, **options), hyps, refs)


@pytest.mark.parametrize("name,options", [("bleu", {"tokenize": "zh"}), ("chrf", {}), ("chrf", {"word_order": 2})])
def test_batch_rows_equal_per_segment_rows_on_chinese(news, name, options):
    """Chinese text has thousands of distinct characters: packed over one alphabet, chrF's 6-grams would need
    the ranked phase; the reference index numbers units per segment, where they fit."""
    source = lines(NEWS / "sources" / "zh-en.txt")
    hyps, refs = source[1:], [source[:-1]]
    assert len(set("".join(hyps))) > 1 << 10  # more distinct characters than one 6-gram key could pack
    metric = load_metric(name, **options)
    assert metric.corpus_stats(hyps, refs) == per_segment(load_metric(name, **options), hyps, refs)


def test_small_blocks_give_the_same_rows(news, monkeypatch):
    hyps, refs = news["en-de.systems"][next(iter(news["en-de.systems"]))], news["en-de.refs"][:2]
    whole = load_metric("chrf").corpus_stats(hyps, refs)
    monkeypatch.setattr(base, "BLOCK_SEGMENTS", 7)
    assert load_metric("chrf").corpus_stats(hyps, refs) == whole


def test_edge_cases_match_per_segment():
    hyps = ["", "a", "", "same same same same", "x y z", "   ", "Ünïcödé ☃ 𝄞 text", "a b a b a b a b"]
    refs = [["", "", "b", "same same", "", "x", "Ünïcödé ☃ 𝄞", "a b a b"],
            ["z", "a a a", "", "same", "x y z", "", "", "b a b a"]]
    for name, options in CASES:
        for k in (1, 2):
            metric = load_metric(name, **options)
            assert metric.corpus_stats(hyps, refs[:k]) == per_segment(load_metric(name, **options), hyps, refs[:k])
    assert load_metric("bleu").corpus_stats(["", ""], [["", ""]]) == [[0] * 10, [0] * 10]
    assert load_metric("chrf").corpus_stats([], [[]]) == []


@pytest.mark.parametrize("name,sacre", [("bleu", sacrebleu.BLEU), ("chrf", sacrebleu.CHRF)])
def test_corpus_score_equals_sacrebleu(news, name, sacre):
    refs = news["en-de.refs"]
    for hyps in news["en-de.systems"].values():
        metric = load_metric(name)
        assert metric.corpus_score(hyps, refs) == sacre().corpus_score(hyps, refs).score


def test_bad_segments_are_named_not_dropped():
    metric = load_metric("bleu")
    with pytest.raises(ValueError, match="hypothesis should be a string, got int"):
        metric.corpus_stats(["a", 3], [["a", "b"]])
    with pytest.raises(ValueError, match="reference stream 1 has 1 lines but the hypotheses have 2"):
        metric.corpus_stats(["a", "b"], [["a"]])


def _counted_matches(hyp, refs, order, clip):
    """The oracle: per order, clipped matches counted with Counters, segment by segment."""
    out = []
    for n in range(1, order + 1):
        rows = []
        for s, sentence in enumerate(hyp):
            grams = Counter(tuple(sentence[i:i + n]) for i in range(len(sentence) - n + 1))
            theirs = [Counter(tuple(r[s][i:i + n]) for i in range(len(r[s]) - n + 1)) for r in refs]
            if clip:
                rows.append(sum(min(c, max(t[g] for t in theirs)) for g, c in grams.items()))
            else:
                rows.append([sum(min(c, t[g]) for g, c in grams.items()) for t in theirs])
        out.append(rows)
    return out


@pytest.mark.parametrize("kind", ["numpy", "c"])
def test_reference_index_equals_counting(kind):
    """ngram_matches.RefIndex (numpy, the reference) and ngram_matches.CompiledIndex (the C kernel), references
    indexed once, give the clipped matches Counters give, with hypothesis units its segment's references lack,
    empty sentences, repeats and several references."""
    if kind == "c" and not ngram_matches.AVAILABLE:
        pytest.skip("the C kernel was not built (no compiler at install)")
    build = ngram_matches.RefIndex.build if kind == "numpy" else ngram_matches.CompiledIndex.build

    rng = np.random.default_rng(7)
    for trial in range(30):
        segments, refs, order = int(rng.integers(1, 40)), int(rng.integers(1, 4)), int(rng.integers(1, 7))
        alphabet = int(rng.choice([3, 50, 5000]))
        streams = [[rng.integers(0, alphabet, int(rng.integers(0, 25))).tolist() for _ in range(segments)]
                   for _ in range(refs + 1)]
        words = [[[str(u) for u in sentence] for sentence in stream] for stream in streams]
        vocab: dict = {}
        lengths = np.column_stack([ngram_matches.lengths_of(s) for s in words[1:]])
        index = build([ngram_matches.word_units(s, vocab) for s in words[1:]], lengths, order)
        hyp = ngram_matches.ids([t for sentence in words[0] for t in sentence], vocab)
        for clip in (False, True):
            want = _counted_matches(words[0], words[1:], order, clip)
            got = list(index.matches(hyp, ngram_matches.lengths_of(words[0]), clip_to_max=clip))
            assert [g.tolist() for g in got] == want, (trial, clip)


@pytest.mark.parametrize("name,options", [("bleu", {}), ("chrf", {}), ("chrf", {"word_order": 2})])
def test_one_metric_scores_many_systems_and_follows_new_references(news, name, options, monkeypatch):
    """The reference index is kept for the next system and rebuilt when the references change; with the
    index refused (keys too wide) the rows are the same."""
    metric = load_metric(name, **options)
    systems = list(news["en-de.systems"].values())[:3]
    for refs in (news["en-de.refs"][:1], news["en-de.refs"][1:3], news["en-de.refs"][:1]):
        rows = [metric.corpus_stats(hyps, refs) for hyps in systems]
        assert rows == [per_segment(load_metric(name, **options), hyps, refs) for hyps in systems]
    monkeypatch.setattr(ngram_matches, "build", lambda *a: None)
    assert [load_metric(name, **options).corpus_stats(h, refs) for h in systems] == rows
