"""The fast 13a tokenizer gives sacrebleu's output on every line of the shared data and on hard strings."""
from __future__ import annotations

import pytest

import random

from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

from conftest import data_roots, lines
from evalpipe.evaluators.tokenize_13a import tokenize_13a, tokens_13a_block

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
    soup = []
    for _ in range(20000):
        line = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        assert tokenize_13a(line) == sacre(line), repr(line)
        soup.append(line)
    for size in (1, 2, 3, 50):  # the block tokenizer: lines side by side never act on each other
        for start in range(0, len(soup), size * 7):
            block = soup[start:start + size]
            assert tokens_13a_block(block) == [sacre(line).split() for line in block], block


def test_block_of_hard_strings():
    sacre = Tokenizer13a()
    alphabet = HARD + ["a-", "-\nb", "5", "-4", ".", ",", "&amp", ";x", "a.\n.b", "<skipped", ">", "\0", "x\0.", "\x01", ".\x01,"]
    rng = random.Random(5)
    for _ in range(3000):
        block = [rng.choice(alphabet) + rng.choice(alphabet) for _ in range(rng.randint(0, 6))]
        assert tokens_13a_block(block) == [sacre(line).split() for line in block], block


@pytest.mark.parametrize("root", data_roots())
def test_every_line_of_the_real_data(root):
    sacre = Tokenizer13a()
    news = root / "wmt21.news"
    for path in sorted(news.glob("*/*.txt")) + sorted(news.glob("system-outputs/*/*.txt")):
        text = lines(path)
        want = [sacre(line) for line in text]
        assert [tokenize_13a(line) for line in text] == want, path
        assert tokens_13a_block(text) == [w.split() for w in want], path
