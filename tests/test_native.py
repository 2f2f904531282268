"""The C kernels (setup.py's optional extensions) are built where a C compiler is, and are the ones used.

Their output is tested against the Python and numpy paths (which stay the reference) in
test_tokenize_13a.py, test_batch_stats.py, test_bleu_line.py, test_text_units.py and
test_chrf_words.py, test_ter_kernel.py; this file checks that those tests
ran on a build that has them, so a broken build cannot pass unnoticed as "skipped".
"""
from __future__ import annotations

import shutil
import sysconfig

import pytest

from evalpipe.evaluators import ngram_index, ngram_line, ngram_native, ter_kernel, text_units, tokenize_13a


def compiler() -> bool:
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    return shutil.which(cc) is not None


@pytest.mark.skipif(not compiler(), reason="no C compiler here: the install falls back to Python")
def test_the_c_kernels_were_built_at_install():
    assert tokenize_13a.NATIVE and ngram_native.AVAILABLE and ngram_line.AVAILABLE and text_units.AVAILABLE
    assert ter_kernel.NATIVE and ter_kernel.edits is ter_kernel.native_edits


@pytest.mark.skipif(not ngram_native.AVAILABLE or not tokenize_13a.NATIVE, reason="C kernels not built")
def test_the_c_kernels_are_the_ones_used():
    import numpy as np

    assert tokenize_13a.tokens_13a is not tokenize_13a.python_tokens_13a
    index = ngram_index.build([np.array([1, 2, 3])], np.array([[3]]), 4)
    assert index.kernels is ngram_native


@pytest.mark.skipif(not ngram_native.AVAILABLE, reason="the C kernel was not built")
def test_the_c_kernel_refuses_arrays_that_do_not_fit_instead_of_reading_past_them():
    import numpy as np

    from evalpipe.evaluators import _ngram_native as c

    units, offsets = np.array([3, 1, 2], dtype=np.int64), np.array([[0, 3]], dtype=np.int64)
    alphabet, a_offsets = np.empty(3, dtype=np.int64), np.empty(2, dtype=np.int64)
    with pytest.raises(TypeError, match="ref_units: expected a contiguous int64 buffer, got format 'd'"):
        c.alphabets(units.astype(float), offsets, 1, alphabet, a_offsets)
    with pytest.raises(ValueError, match="ref_offsets: offsets must rise within 0..3"):
        c.alphabets(units, np.array([[0, 4]], dtype=np.int64), 1, alphabet, a_offsets)
    assert c.alphabets(units, offsets, 1, alphabet, a_offsets) == (3, 3)
    keys = np.empty(3, dtype=np.int64)
    c.reference_keys(units, offsets, 1, alphabet, a_offsets, 4, 3, keys)
    with pytest.raises(ValueError, match="matches: 1 hypothesis segments, 1 reference segments, out of 3"):
        c.matches(units, offsets[0], alphabet, a_offsets, keys, offsets, 1, 4, 3, False, np.empty(3, dtype=np.int64))
    with pytest.raises(ValueError, match="order 40 x 3 bits does not fit a 63-bit key"):
        c.reference_keys(units, offsets, 1, alphabet, a_offsets, 40, 3, keys)
    with pytest.raises(ValueError, match="1 bits cannot rank 3 distinct units"):
        c.reference_keys(units, offsets, 1, alphabet, a_offsets, 4, 1, keys)
    out = np.empty(4, dtype=np.int64)
    c.matches(units, offsets[0], alphabet, a_offsets, keys, offsets, 1, 4, 3, False, out)
    assert out.tolist() == [3, 2, 1, 0]


@pytest.mark.parametrize("name,options", [("bleu", {}), ("chrf", {}), ("chrf", {"word_order": 2}),
                                          ("bleu", {"lowercase": True})])
def test_corpus_and_sentence_rows_are_the_same_without_the_c_kernels(news, monkeypatch, name, options):
    """Every C piece switched off (as on a machine without a compiler): the rows of real systems, one and three
    references, en-de and zh-en, are the same integers, in blocks and sentence by sentence."""
    from evalpipe import load_metric
    from evalpipe.evaluators import bleu

    cases = [(news["en-de.systems"], news["en-de.refs"][:1]), (news["en-de.systems"], news["en-de.refs"]),
             (news["zh-en.systems"], news["zh-en.refs"])]

    def rows():
        metric = load_metric(name, **options)
        block = [metric.corpus_stats(hyps, refs) for systems, refs in cases for hyps in list(systems.values())[:2]]
        line = [metric.segment_stats(h, tuple(r)) for systems, refs in cases
                for h, *r in list(zip(next(iter(systems.values())), *refs))[:200]]
        return block, line

    with_c = rows()
    for module, flag in ((ngram_native, "AVAILABLE"), (ngram_line, "AVAILABLE"), (text_units, "AVAILABLE")):
        monkeypatch.setattr(module, flag, False)
    monkeypatch.setattr(bleu, "tokens_13a", tokenize_13a.python_tokens_13a)
    monkeypatch.setattr(bleu, "tokens_13a_flat", tokenize_13a.python_tokens_13a_flat)
    assert rows() == with_c


@pytest.mark.skipif(not ter_kernel.NATIVE, reason="the C kernel was not built")
def test_the_ter_kernel_refuses_what_is_not_int64():
    import numpy as np

    with pytest.raises(TypeError, match="hyp: expected a contiguous int64 buffer"):
        ter_kernel.native_edits(np.array([1.0, 2.0]), np.array([1, 2], dtype=np.int64))
    assert ter_kernel.native_edits(np.array([1, 2], dtype=np.int64), np.array([2, 1], dtype=np.int64)) == 1
    assert ter_kernel.native_edits(np.array([], dtype=np.int64), np.array([], dtype=np.int64)) == 0
