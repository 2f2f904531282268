"""TER's compiled edit count (evaluators/ter_kernel.py) gives sacrebleu's own ``translation_edit_rate``
integers on real WMT21 segments, on random word sequences that force many shifts and the 1,000-candidate
cap, and on edge cases; the metric's stats are the same with either kernel."""
from __future__ import annotations

import random

import numpy as np
import pytest
import sacrebleu
from sacrebleu.metrics.lib_ter import translation_edit_rate

from evalpipe import load_metric
from evalpipe.evaluators import ter_kernel

pytestmark = pytest.mark.skipif(not ter_kernel.COMPILED, reason="numba (the fast extra) is not installed")


def ids(hyp, ref):
    vocab: dict = {}
    as_ids = [np.array([vocab.setdefault(w, len(vocab)) for w in side], dtype=np.int64) for side in (hyp, ref)]
    return as_ids


def check(pairs):
    for hyp, ref in pairs:
        assert ter_kernel.edits(*ids(hyp, ref)) == translation_edit_rate(hyp, ref)[0], (hyp, ref)


def test_real_segments(news):
    ter = sacrebleu.TER()
    words = lambda text: ter._preprocess_segment(text).split()  # noqa: E731
    refs = news["en-de.refs"]
    pairs = [(words(h), words(refs[k % 3][i])) for k, hyps in enumerate(news["en-de.systems"].values())
             for i, h in enumerate(hyps)]
    check(pairs)


def test_random_sequences_with_many_shifts():
    rng = random.Random(11)
    pairs = []
    for _ in range(300):
        vocab = [str(v) for v in range(rng.choice([2, 3, 5, 40]))]
        ref = [rng.choice(vocab) for _ in range(rng.randint(0, 40))]
        hyp = ref[:]
        rng.shuffle(hyp) if rng.random() < 0.5 else None
        hyp = [w if rng.random() < 0.8 else rng.choice(vocab) for w in hyp][:rng.randint(0, 60)]
        pairs.append((hyp, ref))
    check(pairs)


def test_candidate_cap_and_long_segments():
    rng = random.Random(3)
    for n in (120, 200):
        ref = [rng.choice("abc") for _ in range(n)]
        hyp = ref[n // 3:] + ref[:n // 3]
        check([(hyp, ref), (hyp[::-1], ref)])


def test_edge_cases():
    check([([], []), ([], ["a"]), (["a"], []), (["a", "b"], ["b", "a"]), (["x"] * 30, ["x"] * 3),
           (["a"] * 3, ["a"] * 90), ("the cat sat on the mat".split(), "on the mat the cat sat".split())])


@pytest.mark.parametrize("options", [{}, {"case_sensitive": True}, {"normalized": True, "no_punct": True}])
def test_metric_stats_equal_with_either_kernel(news, options):
    refs = news["en-de.refs"]
    hyps = next(iter(news["en-de.systems"].values()))
    for k in (1, 3):
        fast = load_metric("ter", **options).corpus_stats(hyps, refs[:k])
        slow = load_metric("ter", kernel="sacrebleu", **options).corpus_stats(hyps, refs[:k])
        assert fast == slow
    assert load_metric("ter", **options).corpus_score(hyps, refs[:1]) == \
        sacrebleu.TER(**options).corpus_score(hyps, refs[:1]).score
    # several references of unequal length: evalpipe sums the float lengths exactly (module docstring)
    assert load_metric("ter", **options).corpus_score(hyps, refs) == \
        pytest.approx(sacrebleu.TER(**options).corpus_score(hyps, refs).score, rel=1e-13)


def test_numba_kernel_without_numba_is_a_clear_error(monkeypatch):
    from evalpipe.errors import OptionError

    monkeypatch.setattr(ter_kernel, "COMPILED", False)
    with pytest.raises(OptionError, match=r"evalpipe\[fast\]"):
        load_metric("ter", kernel="numba")
