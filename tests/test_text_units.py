"""The C text units (evaluators/kernels/text_units.py) and the C token-id lookup (ngram_matches.ids) equal the Python
expressions they replace, which stay the reference: chrF's characters without whitespace and the vocabulary
lookup of token ids.  (chrF++'s word
split is checked against sacrebleu in test_chrf_words.py.)"""
from __future__ import annotations

import random

import numpy as np
import pytest

from conftest import data_roots, lines
from evalpipe.evaluators.kernels import ngram_matches, text_units

pytestmark = pytest.mark.skipif(not (text_units.AVAILABLE and ngram_matches.AVAILABLE), reason="the C modules were not built")

SOUP = ["a", "é", "猫", "🙂", " ", "\t", "\n", "\u00a0", "\u2003", "\u3000", "\x85", "\x1c", "\0", "ab c", ""]


def python_chars(texts):
    chars = ["".join(t.split()) for t in texts]
    return ngram_matches.char_units(chars).tolist(), [len(c) for c in chars]


def test_chars_on_random_soup_of_scripts_and_whitespace():
    rng = random.Random(3)
    for _ in range(3000):
        texts = ["".join(rng.choice(SOUP) for _ in range(rng.randint(0, 8))) for _ in range(rng.randint(0, 6))]
        units, lengths = text_units.chars(texts)
        assert (units.tolist(), lengths.tolist()) == python_chars(texts), texts


@pytest.mark.parametrize("root", data_roots())
def test_chars_and_ids_on_every_system_file(root):
    for path in sorted((root / "wmt21.news" / "system-outputs").glob("*/*.txt")):
        texts = lines(path)
        units, lengths = text_units.chars(texts)
        assert (units.tolist(), lengths.tolist()) == python_chars(texts), path
        tokens = [t for line in texts for t in line.split()]
        vocab = {t: i for i, t in enumerate(sorted(set(tokens[::3])))}
        want = [vocab.get(t, ngram_matches.NOT_IN_VOCABULARY) for t in tokens]
        assert ngram_matches.ids(tokens, vocab).tolist() == want, path


def test_bad_input_is_refused_with_what_came():
    with pytest.raises(TypeError, match="line 2: expected str, got int"):
        text_units.chars(["a", 3])
    with pytest.raises(TypeError, match="line 1: expected str, got bytes"):
        text_units.words([b"a"], ".")
    assert ngram_matches.ids([], {}).dtype == np.int64
