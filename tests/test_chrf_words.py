"""chrF++'s block word split equals sacrebleu's ``CHRF._remove_punctuation`` line by line."""
from __future__ import annotations

import random

import pytest
import sacrebleu

from conftest import data_roots, lines
from evalpipe.evaluators.chrf_words import words_block

SACRE = sacrebleu.CHRF(word_order=2)


def check(block):
    assert words_block(block, SACRE._remove_punctuation) == [SACRE._remove_punctuation(line) for line in block], block


def test_random_soup_of_marks_words_and_whitespace():
    rng = random.Random(9)
    alphabet = ["a", "b", "(", ")", ".", ",", "-", "'", '"', "!", " ", "  ", "\t", "\u00a0", "\u2028", "\x1c",
                "\n", "é", "☃", "__", "...", "\0"]
    for _ in range(4000):
        check(["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 10))) for _ in range(rng.randint(0, 5))])


def test_hard_words():
    check(["(hi)", "((", "))", "(", "a", "a.", ".a", ".a.", "(a)b", "'s", "x-", "-x", "", " ", "a\nb.", "!!!",
           "U.S.", "«a»", "(a) (b)."])


@pytest.mark.parametrize("root", data_roots())
def test_every_line_of_the_real_data(root):
    news = root / "wmt21.news"
    for path in sorted(news.glob("*/*.txt")) + sorted(news.glob("system-outputs/*/*.txt")):
        check(lines(path))
