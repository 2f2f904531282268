"""The fast 13a tokenizer gives sacrebleu's output on every line of the shared data and on hard strings."""
from __future__ import annotations

import pytest

import random

from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

from conftest import data_roots, lines
from evalpipe.evaluators.tokenize_13a import tokenize_13a

HARD = ["a...b", "x.,.,y", "1.2,3 a. b, -5 3-4", "&amp;&lt;&gt;&quot;", "<skipped> a-\nb", "", " ", "a..5",
        "!.,5 ,.a", "3-.4", "(.)", "x \t. y", "1,000.50", "e.g.,", "U.S.-based", "--", "9-", ".5", "5.", ",,", "..."]


def test_hard_strings():
    sacre = Tokenizer13a()
    for line in HARD:
        assert tokenize_13a(line) == sacre(line), line


def test_random_symbol_soup():
    sacre = Tokenizer13a()
    rng = random.Random(7)
    alphabet = "ab19.,-!&; ()\t\"'/:"
    for _ in range(20000):
        line = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        assert tokenize_13a(line) == sacre(line), repr(line)


@pytest.mark.parametrize("root", data_roots())
def test_every_line_of_the_real_data(root):
    sacre = Tokenizer13a()
    news = root / "wmt21.news"
    for path in sorted(news.glob("*/*.txt")) + sorted(news.glob("system-outputs/*/*.txt")):
        for line in lines(path):
            assert tokenize_13a(line) == sacre(line), (path, line)
