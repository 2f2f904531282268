"""A faster, output-identical version of sacrebleu's ``13a`` tokenizer (mteval-v13a.pl).

sacrebleu applies four regular expressions with ``\\1``-style templates; on Python < 3.12 every
match expands its template in Python code, and the first rule matches almost every character
(it pads every ASCII symbol *and every space* with spaces).  Here:

* rule 1 pads each ASCII symbol ``c`` present in the line with ``str.replace(c, " c ")``.  Spaces
  are not padded: that only changes the length of whitespace runs, which the final
  ``" ".join(line.split())`` removes, and rules 2-4 treat a space like any other non-digit and can
  consume at most the one space next to the ``.``, ``,`` or ``-`` they act on;
* rules 2 and 3 pad a ``.`` or ``,`` preceded (2) or followed (3) by a non-digit.  They consume
  one neighbour, which matters only where two of ``.,`` stand side by side: there sacrebleu's own
  patterns run (replacements written as small functions); elsewhere one lookaround pattern per mark
  with a constant replacement does the same;
* rule 4 pads a ``-`` after a digit (a lookbehind: the consumed digit is never needed again).

:func:`tokens_13a` and :func:`tokens_13a_flat` run the C tokenizer ``_tokenize_13a``
(``evaluators/kernels/tokenize_13a.c``, built at install when a compiler is there: the steps of sacrebleu
one for one, in one pass each over a UCS-4 copy of the line) and otherwise the Python functions
here (``python_tokens_13a``, ``python_tokens_13a_flat``), which stay the reference.
``tests/test_tokenize_13a.py`` checks both against sacrebleu on every line of the shared WMT data,
on adversarial strings and on random symbol soup.  Source: sacrebleu ``tokenizers/tokenizer_13a.py`` and
``tokenizer_re.py`` (Post, 2018).
"""
from __future__ import annotations

import re
from typing import Dict, List, Tuple

from evalpipe.evaluators.kernels import compiled
from evalpipe.evaluators.kernels.flat_lines import flat_tokens, per_line

# The symbols of sacrebleu's first rule, [\{-\~\[-\` -\&\(-\+\:-\@\/], without the space: the ranges
# {-~, [-`, !-&, (-+, :-@ and /.
_SYMBOLS = frozenset("{|}~[\\]^_`!\"#$%&()*+:;<=>?@/")
_PADDED = {c: f" {c} " for c in _SYMBOLS}
_SYMBOL = re.compile("[" + re.escape("".join(sorted(_SYMBOLS))) + "]")
_PERIOD_COMMA_BEFORE = re.compile(r"([^0-9])([\.,])")  # -> \1 \2
_PERIOD_COMMA_AFTER = re.compile(r"([\.,])([^0-9])")  # -> ' \1 \2'
# Where no two of [.,] stand side by side, the consumption of a neighbour by rules 2 and 3 never
# matters, and each rule just pads the mark with spaces: one lookaround pattern per mark, with a
# constant replacement (no template expansion).
# (The mark comes first in each pattern so the engine scans for it instead of trying every position.)
_LONE_PERIOD = re.compile(r"\.(?:(?<=[^0-9]\.)|(?=[^0-9]))")
_LONE_COMMA = re.compile(r",(?:(?<=[^0-9],)|(?=[^0-9]))")
# Rule 4, ([0-9])(-) -> \1 \2 , consumes only the digit, which no other match needs.
_DASH_AFTER_DIGIT = re.compile(r"-(?<=[0-9]-)")


def _space_after_both(m: "re.Match[str]") -> str:
    return f"{m[1]} {m[2]} "


def _space_before_both(m: "re.Match[str]") -> str:
    return f" {m[1]} {m[2]}"


def tokenize_13a(line: str) -> str:
    """Tokenize ``line`` exactly as ``sacrebleu.tokenizers.tokenizer_13a.Tokenizer13a`` does."""
    return " ".join(tokens_13a(line))


def _entities_and_symbols(text: str) -> str:
    """The 13a rules that act on fixed strings and single characters: entities, then symbol padding."""
    if "&" in text:
        text = text.replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
    for c in set(_SYMBOL.findall(text)):
        text = text.replace(c, _PADDED[c])
    return text


def _lone_marks_and_dashes(text: str) -> str:
    """Rules 2-4 where no two of ``.,`` stand side by side: the lookaround forms."""
    if "." in text:
        text = _LONE_PERIOD.sub(" . ", text)
    if "," in text:
        text = _LONE_COMMA.sub(" , ", text)
    return _DASH_AFTER_DIGIT.sub(" - ", text) if "-" in text else text


def python_tokens_13a(line: str) -> List[str]:
    """The tokens of ``line`` under 13a: ``tokenize_13a(line).split()`` without the join and re-split."""
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    line = f" {_entities_and_symbols(line)} "
    if ".." in line or ".," in line or ",." in line or ",," in line:
        line = _PERIOD_COMMA_BEFORE.sub(_space_after_both, line)
        line = _PERIOD_COMMA_AFTER.sub(_space_before_both, line)
        if "-" in line:
            line = _DASH_AFTER_DIGIT.sub(" - ", line)
        return line.split()
    return _lone_marks_and_dashes(line).split()


# a line the block path leaves to tokens_13a: two of .,  side by side, a line break or a NUL of its own
#: lines the block path leaves to the one-line path: two of ``.,`` side by side (also once a ``<skipped>``
#: between them is removed: ``.<skipped>.``), a line break of their own, a NUL
_ALONE = re.compile(r"[.,][.,]|\n|\0|<skipped>")


def _lines_alone(lines: List[str]) -> List[int]:
    """The indices of the lines ``_ALONE`` matches in, by one search over the lines joined with ``"\x01"``
    (which keeps a match inside its line: every match is a ``.,`` pair or a single character)."""
    found = [m.start() for m in _ALONE.finditer("\x01".join(lines))]
    if not found:
        return []
    import numpy as np  # here, not at import: the line protocol's tokens_13a does without it

    ends = np.cumsum(np.fromiter(map(len, lines), dtype=np.int64, count=len(lines)) + 1)  # past each joiner
    return sorted(set(np.searchsorted(ends, found, side="right").tolist()))


def tokens_13a_block(lines: List[str]) -> List[List[str]]:
    """``[tokens_13a(line) for line in lines]`` with each rule applied once to a whole block of lines
    (:func:`tokens_13a_flat`, cut back into lines).

    The lines are joined with a separator, each padded with a space on both sides as :func:`tokens_13a`
    pads it, so no rule can match across a line break: rules 2 and 3 need a ``.`` or ``,`` next to
    their neighbour and rule 4 a ``-`` after a digit, and the break always has a space on both sides;
    symbol padding and entity replacement act on single characters and fixed strings without
    ``"\n"``.  Lines where two of ``.,`` stand side by side, or that hold a line break of their
    own, go through :func:`python_tokens_13a` one by one (they need sacrebleu's consuming patterns, or its
    first replacements in its order)."""
    return per_line(*tokens_13a_flat(lines))


def python_tokens_13a_flat(lines: List[str]) -> Tuple[List[str], List[int]]:
    """(the tokens of every line, end to end; each line's token count): :func:`tokens_13a_block` without
    a list per line, the lines joined by :data:`~evalpipe.evaluators.kernels.flat_lines.SEPARATOR`, which no 13a
    rule touches (:mod:`~evalpipe.evaluators.kernels.flat_lines`)."""
    return flat_tokens(lines, _lines_alone(lines), _block_rules, python_tokens_13a)


def _block_rules(block: str) -> str:
    """The 13a rules on a block of lines joined by the separator (its spaces pad each line as
    :func:`tokens_13a` pads it; only the block's ends need their own)."""
    return _lone_marks_and_dashes(_entities_and_symbols(f" {block} ".replace("<skipped>", "")))


def python_vocabulary() -> Dict[str, int]:
    """An empty vocabulary for :func:`python_ids_flat`: token -> id."""
    return {}


def python_ids_flat(lines: List[str], vocabulary: Dict[str, int], grow: bool, missing: int) -> Tuple[bytes, bytes]:
    """(int64 bytes of every line's 13a token ids end to end, int64 bytes of each line's count): the tokens of
    every ``line.rstrip()`` (as sacrebleu's BLEU tokenizes a line) by :func:`python_tokens_13a_flat`, looked up
    in ``vocabulary``; a token new to it gets the next id when ``grow`` (references), else ``missing``
    (hypotheses).  The reference of the C ``ids_flat``."""
    from array import array

    tokens, counts = python_tokens_13a_flat([line.rstrip() for line in lines])
    if grow:
        for word in dict.fromkeys(tokens):
            vocabulary.setdefault(word, len(vocabulary))
    return array("q", [vocabulary.get(t, missing) for t in tokens]).tobytes(), array("q", counts).tobytes()


_c = compiled("tokenize_13a")
NATIVE = _c is not None
if NATIVE:
    tokens_13a, tokens_13a_flat, vocabulary, ids_flat = _c.tokens, _c.tokens_flat, _c.vocabulary, _c.ids_flat
else:
    tokens_13a, tokens_13a_flat = python_tokens_13a, python_tokens_13a_flat
    vocabulary, ids_flat = python_vocabulary, python_ids_flat
