"""The fast 13a tokenizers -- the Python one (the reference) and the C one -- give sacrebleu's output on
every line of the shared data, on hard strings and on random symbol soup."""
from __future__ import annotations

import pytest

import random

from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

from conftest import data_roots, lines
from evalpipe.evaluators.kernels import tokenize_13a as tok
from evalpipe.evaluators.kernels.flat_lines import per_line

HARD = ["a...b", "x.,.,y", "1.2,3 a. b, -5 3-4", "&amp;&lt;&gt;&quot;", "<skipped> a-\nb", "", " ", "a..5",
        "!.,5 ,.a", "(.<skipped>.1 9", "3-.4", "(.)", "x \t. y", "1,000.50", "e.g.,", "U.S.-based", "--", "9-", ".5", "5.", ",,", "..."]


def implementations():
    """(name, tokens of one line, tokens of a block as one list per line) of each 13a tokenizer."""
    found = [("python", tok.python_tokens_13a, tok.python_tokens_13a_flat)]
    if tok.NATIVE:
        found.append(("c", tok.tokens_13a, tok.tokens_13a_flat))
    return [pytest.param(line, lambda block, flat=flat: per_line(*flat(block)), id=name) for name, line, flat in found]


@pytest.mark.parametrize("tokens_13a,tokens_13a_block", implementations())
def test_hard_strings(tokens_13a, tokens_13a_block):
    sacre = Tokenizer13a()
    for line in HARD:
        assert tokens_13a(line) == sacre(line).split(), line
    assert tokens_13a_block(HARD) == [sacre(line).split() for line in HARD]


@pytest.mark.parametrize("tokens_13a,tokens_13a_block", implementations())
def test_random_symbol_soup(tokens_13a, tokens_13a_block):
    sacre = Tokenizer13a()
    rng = random.Random(7)
    alphabet = "ab19.,-!&; ()\t\"'/:<>\n\u00a0\u2003\x85é猫"
    alphabet = list(alphabet) + ["&quot;", "&amp;", "&lt;", "&gt;", "<skipped>", "-\n"]
    soup = []
    for _ in range(20000):
        line = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        assert tokens_13a(line) == sacre(line).split(), repr(line)
        soup.append(line)
    for size in (1, 2, 3, 50):  # the block tokenizer: lines side by side never act on each other
        for start in range(0, len(soup), size * 7):
            block = soup[start:start + size]
            assert tokens_13a_block(block) == [sacre(line).split() for line in block], block


@pytest.mark.parametrize("tokens_13a,tokens_13a_block", implementations())
def test_block_of_hard_strings(tokens_13a, tokens_13a_block):
    sacre = Tokenizer13a()
    alphabet = HARD + ["a-", "-\nb", "5", "-4", ".", ",", "&amp", ";x", "a.\n.b", "<skipped", ">", "\0", "x\0.", "\x01", ".\x01,"]
    rng = random.Random(5)
    for _ in range(3000):
        block = [rng.choice(alphabet) + rng.choice(alphabet) for _ in range(rng.randint(0, 6))]
        assert tokens_13a_block(block) == [sacre(line).split() for line in block], block


@pytest.mark.parametrize("tokens_13a,tokens_13a_block", implementations())
@pytest.mark.parametrize("root", data_roots())
def test_every_line_of_the_real_data(root, tokens_13a, tokens_13a_block):
    sacre = Tokenizer13a()
    news = root / "wmt21.news"
    for path in sorted(news.glob("*/*.txt")) + sorted(news.glob("system-outputs/*/*.txt")):
        text = lines(path)
        want = [sacre(line) for line in text]
        assert [tokens_13a(line) for line in text] == [w.split() for w in want], path
        assert tokens_13a_block(text) == [w.split() for w in want], path


def id_implementations():
    found = [pytest.param(tok.python_vocabulary, tok.python_ids_flat, id="python")]
    try:
        from evalpipe.evaluators.kernels import _tokenize_13a as c
    except ImportError:
        return found
    return found + [pytest.param(c.vocabulary, c.ids_flat, id="c")]


def as_ints(raw: bytes) -> list:
    from array import array

    return array("q", raw).tolist()


@pytest.mark.parametrize("vocabulary,ids_flat", id_implementations())
@pytest.mark.parametrize("root", data_roots())
def test_word_ids_of_the_real_data_and_of_symbol_soup(root, vocabulary, ids_flat):
    """ids_flat (the 13a tokens of a block as word ids, without a Python object per token): the tokens
    sacrebleu's 13a gives each ``line.rstrip()`` (as its BLEU tokenizes; a line ending in ``-\n`` tells), numbered in order of first appearance among the references (grow), a hypothesis
    token no reference has gets ``missing``; the vocabulary grows past many resizes (the real data)."""
    sacre = Tokenizer13a()
    news = root / "wmt21.news"
    refs = [line for path in sorted(news.glob("references/*.txt")) for line in lines(path)]
    hyps = [line for path in sorted(news.glob("system-outputs/*/*.txt"))[:4] for line in lines(path)]
    rng = random.Random(3)
    soup = ["".join(rng.choice(list("ab19.,-!&; ()\t\"'é猫\n\u3000") + ["&amp;", "<skipped>", "-\n"])
                    for _ in range(rng.randint(0, 12))) for _ in range(3000)]
    vocab = vocabulary()
    expected: dict = {}
    for block, grow in ((refs, True), (soup, True), (hyps, False), (soup[::-1], False)):
        ids, counts = ids_flat(block, vocab, grow, 2 ** 32 - 1)
        tokens = [t for line in block for t in sacre(line.rstrip()).split()]
        if grow:
            for t in tokens:
                expected.setdefault(t, len(expected))
        assert as_ints(counts) == [len(sacre(line.rstrip()).split()) for line in block]
        assert as_ints(ids) == [expected.get(t, 2 ** 32 - 1) for t in tokens]
