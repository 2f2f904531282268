"""The C kernels (setup.py's optional extensions) are built where a C compiler is, and are the ones used.

Their output is tested against the Python and numpy paths (which stay the reference) in
test_tokenize_13a.py, test_batch_stats.py, test_bleu_line.py, test_text_units.py and
test_chrf_words.py; this file checks that those tests
ran on a build that has them, so a broken build cannot pass unnoticed as "skipped".
"""
from __future__ import annotations

import shutil
import sysconfig

import pytest

from evalpipe.evaluators import ngram_index, ngram_line, ngram_native, text_units, tokenize_13a


def compiler() -> bool:
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    return shutil.which(cc) is not None


@pytest.mark.skipif(not compiler(), reason="no C compiler here: the install falls back to Python")
def test_the_c_kernels_were_built_at_install():
    assert tokenize_13a.NATIVE and ngram_native.AVAILABLE and ngram_line.AVAILABLE and text_units.AVAILABLE


@pytest.mark.skipif(not ngram_native.AVAILABLE or not tokenize_13a.NATIVE, reason="C kernels not built")
def test_the_c_kernels_are_the_ones_used():
    import numpy as np

    assert tokenize_13a.tokens_13a is not tokenize_13a.python_tokens_13a
    index = ngram_index.build([np.array([1, 2, 3])], np.array([[3]]), 4)
    assert index.kernels is ngram_native
