"""TER's edit count, the C kernel (evaluators/kernels/tercom.c) and its Python reference (evaluators/kernels/tercom.py),
gives sacrebleu's own ``translation_edit_rate`` integers on real WMT21 segments, on random word sequences that
force many shifts and the 1,000-candidate cap, and on edge cases; the metric's stats are the same with every
kernel.  Each test runs on both implementations (the C one skips where no compiler built it)."""
from __future__ import annotations

import random

import numpy as np
import pytest
import sacrebleu
from sacrebleu.metrics.lib_ter import translation_edit_rate

from evalpipe import load_metric
from evalpipe.evaluators.kernels import tercom as ter_kernel


@pytest.fixture(params=["c", "python"], autouse=True)
def implementation(request, monkeypatch):
    """Every test once with the C kernel and once with the Python reference."""
    if request.param == "c" and not ter_kernel.native_edits:
        pytest.skip("the C kernel was not built (no compiler at install)")
    chosen = ter_kernel.native_edits if request.param == "c" else ter_kernel.python_edits
    monkeypatch.setattr(ter_kernel, "edits", chosen)
    # the Python reference is slow: it checks every fourth case (the C kernel checks them all)
    monkeypatch.setattr(__import__(__name__), "EVERY", 1 if request.param == "c" else 4)
    return request.param


EVERY = 1


def ids(hyp, ref):
    vocab: dict = {}
    as_ids = [np.array([vocab.setdefault(w, len(vocab)) for w in side], dtype=np.int64) for side in (hyp, ref)]
    return as_ids


def check(pairs):
    """The kernel under test against its judge: sacrebleu for the C kernel; for the Python reference the C
    kernel (itself judged by sacrebleu on every case) where it was built, else sacrebleu."""
    python = ter_kernel.edits is ter_kernel.python_edits
    for hyp, ref in pairs[::EVERY]:
        a, b = ids(hyp, ref)
        judge = ter_kernel.native_edits(a, b) if python and ter_kernel.native_edits else \
            translation_edit_rate(hyp, ref)[0]
        assert ter_kernel.edits(a, b) == judge, (hyp, ref)


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
    for n in (110, 150):  # (both reach the cap of 1,000 shift candidates)
        ref = [rng.choice("abc") for _ in range(n)]
        hyp = ref[n // 3:] + ref[:n // 3]
        check([(hyp, ref), (hyp[::-1], ref)])


def test_edge_cases():
    check([([], []), ([], ["a"]), (["a"], []), (["a", "b"], ["b", "a"]), (["x"] * 30, ["x"] * 3),
           (["a"] * 3, ["a"] * 90), ("the cat sat on the mat".split(), "on the mat the cat sat".split())])


@pytest.mark.parametrize("options", [{}, {"case_sensitive": True}, {"normalized": True, "no_punct": True}])
def test_metric_stats_equal_with_every_kernel(news, options, implementation):
    refs = news["en-de.refs"]
    hyps = next(iter(news["en-de.systems"].values()))
    # sacrebleu judges: the first 60 segments for the C kernel (test_real_segments has every one), 30 for the slow
    # Python reference
    cut = 60 if implementation == "c" else 30
    refs, hyps = [r[:cut] for r in refs], hyps[:cut]
    for k in (1, 3):
        fast = load_metric("ter", kernel=implementation, **options).corpus_stats(hyps, refs[:k])
        slow = load_metric("ter", kernel="sacrebleu", **options).corpus_stats(hyps, refs[:k])
        assert fast == slow
    assert load_metric("ter", kernel=implementation, **options).corpus_score(hyps, refs[:1]) == \
        sacrebleu.TER(**options).corpus_score(hyps, refs[:1]).score
    # several references of unequal length: evalpipe sums the float lengths exactly (module docstring)
    assert load_metric("ter", kernel=implementation, **options).corpus_score(hyps, refs) == \
        pytest.approx(sacrebleu.TER(**options).corpus_score(hyps, refs).score, rel=1e-13)


def test_the_c_kernel_without_a_build_is_a_clear_error(monkeypatch):
    from evalpipe.errors import OptionError

    monkeypatch.setattr(ter_kernel, "NATIVE", False)
    with pytest.raises(OptionError, match="kernel=c needs the C kernels"):
        load_metric("ter", kernel="c")


def test_the_default_is_the_c_kernel_where_it_was_built():
    metric = load_metric("ter")
    assert metric._kernel is (ter_kernel.native_edits if ter_kernel.NATIVE else None)
