"""The C kernels (setup.py's optional extensions) are built where a C compiler is, and are the ones used.

Their output is tested against the Python and numpy paths (which stay the reference) in
test_tokenize_13a.py, test_batch_stats.py, test_bleu_line.py, test_text_units.py and
test_chrf_words.py, test_ter_kernel.py, test_log_columns.py; this file checks that those tests
ran on a build that has them, so a broken build cannot pass unnoticed as "skipped".
"""
from __future__ import annotations

import shutil
import sysconfig

import pytest

from evalpipe.evaluators.kernels import ngram_line, ngram_matches, tercom as ter_kernel, text_units, tokenize_13a
from evalpipe.simul import log_columns


def compiler() -> bool:
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    return shutil.which(cc) is not None


@pytest.mark.skipif(not compiler(), reason="no C compiler here: the install falls back to Python")
def test_the_c_kernels_were_built_at_install():
    assert tokenize_13a.NATIVE and ngram_matches.AVAILABLE and ngram_line.AVAILABLE and text_units.AVAILABLE
    assert ter_kernel.NATIVE and ter_kernel.edits is ter_kernel.native_edits
    assert log_columns.AVAILABLE  # (the SimulEval log reader, outside the kernel room)


@pytest.mark.skipif(not ngram_matches.AVAILABLE or not tokenize_13a.NATIVE, reason="C kernels not built")
def test_the_c_kernels_are_the_ones_used():
    import numpy as np

    assert tokenize_13a.tokens_13a is not tokenize_13a.python_tokens_13a
    index = ngram_matches.build([np.array([1, 2, 3])], np.array([[3]]), 4)
    assert isinstance(index, ngram_matches.CompiledIndex)


@pytest.mark.skipif(not ngram_matches.AVAILABLE, reason="the C kernel was not built")
def test_the_c_kernel_refuses_arrays_that_do_not_fit_instead_of_reading_past_them():
    import numpy as np

    from evalpipe.evaluators.kernels import _ngram_matches as c

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


ROWS = """
import json, sys
from evalpipe import load_metric
from evalpipe.evaluators.kernels import compiled
name, options, cases = json.loads(sys.stdin.read())
metric = load_metric(name, **options)
block = [metric.corpus_stats(hyps, refs) for hyps, refs in cases]
line = [metric.segment_stats(h, tuple(r)) for hyps, refs in cases for h, *r in list(zip(hyps, *refs))[:150]]
print(json.dumps([compiled("ngram_matches") is not None, block, line]))
"""


@pytest.mark.parametrize("name,options", [("bleu", {}), ("chrf", {}), ("chrf", {"word_order": 2}),
                                          ("bleu", {"lowercase": True}), ("bleu", {"tokenize": "intl"}),
                                          ("ter", {})])
def test_the_python_references_give_the_c_kernels_rows(news, name, options):
    """The one switch (``EVALPIPE_IMPLEMENTATION=python``, as on a machine without a compiler) runs every kernel's
    Python reference: the rows of real systems, one and three references, en-de and zh-en, are the same
    integers as the C kernels', in blocks and sentence by sentence."""
    import json
    import subprocess
    import sys

    from conftest import child_env

    cases = [(hyps, refs) for systems, refs in ((news["en-de.systems"], news["en-de.refs"][:1]),
                                                (news["en-de.systems"], news["en-de.refs"]),
                                                (news["zh-en.systems"], news["zh-en.refs"]))
             for hyps in list(systems.values())[:2]]
    if name == "ter":  # the Python Tercom is slow (and tested against sacrebleu in test_ter_kernel.py): a slice
        cases = [(hyps[:25], [r[:25] for r in refs]) for hyps, refs in cases[:4]]
    found = {}
    for implementation in ("c", "python"):
        env = {**child_env(), "EVALPIPE_IMPLEMENTATION": implementation}
        done = subprocess.run([sys.executable, "-c", ROWS], input=json.dumps([name, options, cases]), env=env,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        found[implementation] = json.loads(done.stdout)
    assert found["python"][0] is False and found["c"][0] is ngram_matches.AVAILABLE
    assert found["python"][1:] == found["c"][1:]


@pytest.mark.skipif(not ter_kernel.NATIVE, reason="the C kernel was not built")
def test_the_ter_kernel_refuses_what_is_not_int64():
    import numpy as np

    with pytest.raises(TypeError, match="hyp: expected a contiguous int64 buffer"):
        ter_kernel.native_edits(np.array([1.0, 2.0]), np.array([1, 2], dtype=np.int64))
    assert ter_kernel.native_edits(np.array([1, 2], dtype=np.int64), np.array([2, 1], dtype=np.int64)) == 1
    assert ter_kernel.native_edits(np.array([], dtype=np.int64), np.array([], dtype=np.int64)) == 0
