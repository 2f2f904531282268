"""evalpipe's BLEU formula and 13a signature against sacrebleu's, which the test runs.

:func:`evalpipe.evaluators.kernels.bleu_score.bleu_score` takes ``compute_bleu``'s steps; these vectors (random
corpus-sized and sentence-sized counts, and the edge cases: nothing matched, no n-grams of an order, empty
hypothesis, every smoothing with and without a value, effective order, orders 1..6) must give its bits.
"""
from __future__ import annotations

import itertools
import random

import pytest
from sacrebleu.metrics.bleu import BLEU

from evalpipe.evaluators.kernels.bleu_score import bleu_score
from evalpipe.evaluators.sacrebleu_api import bleu_13a_signature, installed_version
from evalpipe.registry import load_metric


def _vectors(order, rng):
    yield [0, 5] + [0] * order + [0] * order
    yield [3, 5] + [0] * order + [max(0, 3 - n) for n in range(order)]
    yield [2, 2] + [2, 1] + [0] * (order - 2) + [2, 1] + [0] * (order - 2) if order >= 2 else [2, 2, 2, 2]
    for _ in range(300):
        hyp = rng.choice([rng.randint(1, 12), rng.randint(1000, 10 ** 6)])
        ref = max(1, int(hyp * rng.uniform(0.7, 1.3)))
        total = [max(0, hyp - n) for n in range(order)]
        correct = [rng.randint(0, t) if rng.random() > 0.15 else 0 for t in total]
        yield [hyp, ref] + correct + total


@pytest.mark.parametrize("order", [1, 2, 4, 6])
def test_bleu_score_equals_sacrebleu_compute_bleu_to_the_bit(order):
    rng = random.Random(order)
    settings = [("exp", None), ("none", None), ("floor", None), ("floor", 0.3), ("add-k", None), ("add-k", 2)]
    for vector in _vectors(order, rng):
        for (method, value), eff in itertools.product(settings, (False, True)):
            ours = bleu_score(vector, order, method, value, eff)
            theirs = BLEU.compute_bleu(list(vector[2:2 + order]), list(vector[2 + order:]), vector[0], vector[1],
                                       smooth_method=method, smooth_value=value, effective_order=eff,
                                       max_ngram_order=order).score
            assert ours == theirs, (vector, method, value, eff)


def test_13a_signature_is_sacrebleus():
    for nrefs, lc, eff, (method, value) in itertools.product(
            (None, 1, 3, -1), (False, True), (False, True),
            (("exp", None), ("none", None), ("floor", None), ("floor", 0.25), ("add-k", None), ("add-k", 3))):
        sacre = BLEU(lowercase=lc, effective_order=eff, smooth_method=method, smooth_value=value, tokenize="13a")
        sacre.num_refs = "?" if nrefs is None else nrefs
        expected = sacre.get_signature().format()
        assert bleu_13a_signature(nrefs, lc, eff, method, value) == expected
        metric = load_metric("bleu", lowercase=lc, effective_order=eff, smooth_method=method, smooth_value=value)
        assert metric.signature(nrefs) == expected


def test_installed_version_is_the_imported_one():
    import sacrebleu

    assert installed_version() == sacrebleu.__version__
