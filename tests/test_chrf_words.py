"""chrF++'s word splits -- the block substitution (the reference) and the C split used when it was built --
equal sacrebleu's ``CHRF._remove_punctuation`` line by line."""
from __future__ import annotations

import random

import pytest
import sacrebleu

from conftest import data_roots, lines
from evalpipe.evaluators.kernels import chrf_words, text_units
from evalpipe.evaluators.kernels.flat_lines import per_line

SACRE = sacrebleu.CHRF(word_order=2)
MARKS = "".join(sorted(sacrebleu.CHRF._PUNCTS))
SPLITS = [pytest.param(lambda lines, one_line: chrf_words.python_words_flat(lines, MARKS, one_line), id="python"),
          pytest.param(lambda lines, one_line: text_units.words(lines, MARKS), id="c",
                       marks=pytest.mark.skipif(not text_units.AVAILABLE, reason="the C split was not built"))]


@pytest.fixture(params=SPLITS)
def check(request):
    def check(block):
        got = per_line(*request.param(block, SACRE._remove_punctuation))
        assert got == [SACRE._remove_punctuation(line) for line in block], block

    return check


def test_the_marks_are_sacrebleus():
    from evalpipe.evaluators import chrf

    assert set(chrf._MARKS) == set(sacrebleu.CHRF._PUNCTS)


def test_random_soup_of_marks_words_and_whitespace(check):
    rng = random.Random(9)
    alphabet = ["a", "b", "(", ")", ".", ",", "-", "'", '"', "!", " ", "  ", "\t", "\u00a0", "\u2028", "\x1c",
                "\n", "é", "☃", "__", "...", "\0", "\x85", "\u3000", "«", "»"]
    for _ in range(4000):
        check(["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10))) for _ in range(rng.randint(0, 5))])


def test_hard_words(check):
    check(["(hi)", "((", "))", "(", "a", "a.", ".a", ".a.", "(a)b", "'s", "x-", "-x", "", " ", "a\nb.", "!!!",
           "U.S.", "«a»", "(a) (b)."])


@pytest.mark.parametrize("root", data_roots())
def test_every_line_of_the_real_data(root, check):
    news = root / "wmt21.news"
    for path in sorted(news.glob("*/*.txt")) + sorted(news.glob("system-outputs/*/*.txt")):
        check(lines(path))
