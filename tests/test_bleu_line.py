"""BLEU's one-sentence path (the line protocol's SCORE): the C kernel (evaluators/kernels/ngram_line.py) gives the
integers of the dict path (evaluators/kernels/ngram_line.py, the reference), and both give sacrebleu's statistics."""
from __future__ import annotations

import random

import pytest
import sacrebleu

from evalpipe import load_metric
from evalpipe.evaluators.kernels import ngram_line
from evalpipe.evaluators.kernels.ngram_line import clipped_matches, max_merge, ngram_table

from conftest import NEWS, lines

pytestmark = pytest.mark.skipif(not ngram_line.AVAILABLE, reason="the C kernel was not built")


def test_clipped_matches_equal_the_dict_path_on_random_sentences():
    """Repeats, tokens no reference has, empty sentences, one to three references, orders 1-7."""
    rng = random.Random(11)
    for trial in range(4000):
        order, refs = rng.randint(1, 7), rng.randint(1, 3)
        words = [str(w) for w in range(rng.choice([2, 4, 30]))]
        sentence = lambda: [rng.choice(words) for _ in range(rng.randint(0, 18))]  # noqa: E731
        references, hypothesis = [sentence() for _ in range(refs)], sentence() + ["unseen"] * rng.randint(0, 2)
        rng.shuffle(hypothesis)
        tables = [ngram_table(r, order) for r in references]
        want = clipped_matches(hypothesis, tables[0] if refs == 1 else max_merge(tables), order)
        assert ngram_line.matches(hypothesis, ngram_line.reference(references, order), order) == want, trial


def test_keys_too_wide_are_refused_and_the_dict_path_serves():
    references = [[str(w) for w in range(40000)]]
    assert ngram_line.reference(references, 4) is None
    metric = load_metric("bleu")
    hyp, ref = "0 1 2 3 4 x 7", " ".join(references[0])
    assert metric.stats(hyp, [ref]) == [float(x) for x in
                                        sacrebleu.BLEU()._extract_corpus_statistics([hyp], [[ref]])[0]]


def test_sentence_stats_equal_sacrebleu_on_real_lines_on_both_paths(monkeypatch):
    if not NEWS.is_dir():
        pytest.skip("needs ../shared/data")
    refs = lines(NEWS / "references" / "en-de.refA.txt")[:300]
    refs_b = lines(NEWS / "references" / "en-de.refC.txt")[:300]
    hyps = lines(sorted((NEWS / "system-outputs" / "en-de").glob("*.txt"))[0])[:300]
    sacre = sacrebleu.BLEU()
    want = [sacre._extract_corpus_statistics([h], [[r], [b]])[0] for h, r, b in zip(hyps, refs, refs_b)]
    for available in (True, False):
        monkeypatch.setattr(ngram_line, "AVAILABLE", available)
        metric = load_metric("bleu")
        got = [metric.segment_stats(h, (r, b)) for h, r, b in zip(hyps, refs, refs_b)]
        assert got == [list(map(int, w)) for w in want], available
