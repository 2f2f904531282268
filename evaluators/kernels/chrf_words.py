"""chrF++'s words for a whole block of lines at once, equal to sacrebleu's ``CHRF._remove_punctuation``
line by line.

sacrebleu splits a line on whitespace and, per word of two or more characters, splits off its last
character if that is a punctuation mark, else its first character if that is one.  Here one
substitution does it for every line of a block joined by a separator: a mark opening a word whose last
character is not a mark gets a space after it, and a mark ending a word of two or more characters gets
a space before it (the two cases exclude each other: the first needs the word's last character not to
be a mark, so it never meets a word the second acts on).  A word is a maximal run of non-whitespace
(the regular expression's ``\\s`` is Python's ``str.isspace``, as ``str.split`` uses it), so no
substitution reaches across a line.  Lines with a line break or a NUL of their own go one by one.
``tests/test_chrf_words.py`` checks it, and the C split of :mod:`~evalpipe.evaluators.kernels.text_units` used
when that was built, against sacrebleu.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable, List, Tuple

from evalpipe.evaluators.kernels import text_units
from evalpipe.evaluators.kernels.flat_lines import NUL, flat_tokens, per_line


@lru_cache(maxsize=4)
def _rule(marks: str) -> Callable[[str], str]:
    """The substitution for a set of punctuation marks (sacrebleu's, given by the chrF plugin)."""
    escaped = re.escape(marks)
    # (the pattern starts with the mark itself, so the engine skips to candidate marks)
    # a mark opening a word of 2+ characters whose last character is not a mark (group 2 set), or ending a
    # word of 2+ characters
    edge = re.compile(rf"([{escaped}])(?:(?<!\S[{escaped}])(?=\S*[^\s{escaped}](?!\S))()|(?<=\S[{escaped}])(?!\S))")
    # The replacement as a function, not r"\1 " templates: on Python < 3.12 a template is expanded by Python
    # code at every match (several times slower than a call that returns a prepared string).
    after = {mark: mark + " " for mark in marks}
    before = {mark: " " + mark for mark in marks}

    def spaced(match: "re.Match[str]") -> str:
        return after[match[1]] if match.lastindex == 2 else before[match[1]]
    return lambda block: edge.sub(spaced, block)


def words_flat(lines: List[str], marks: str, one_line: Callable[[str], List[str]]) -> Tuple[List[str], List[int]]:
    """(every line's words end to end, each line's word count), equal to ``one_line`` (sacrebleu's own
    split, whose punctuation ``marks`` are given) line by line; the lines joined by
    :data:`~evalpipe.evaluators.kernels.flat_lines.SEPARATOR` (a token no rule touches: it has no mark),
    lines with a line break or a NUL of their own alone.  In C (:func:`~evalpipe.evaluators.kernels.
    text_units.words`, line by line) when it was built."""
    if text_units.AVAILABLE:
        return text_units.words(lines, marks)
    return python_words_flat(lines, marks, one_line)


def python_words_flat(lines: List[str], marks: str, one_line: Callable[[str], List[str]]) -> Tuple[List[str], List[int]]:
    """:func:`words_flat` by the substitution over the joined block (the reference of the C split)."""
    alone = [k for k, line in enumerate(lines) if "\n" in line or NUL in line]
    return flat_tokens(lines, alone, _rule(marks), one_line)


def words_block(lines: List[str], marks: str, one_line: Callable[[str], List[str]]) -> List[List[str]]:
    """``[one_line(line) for line in lines]`` (``one_line``: sacrebleu's own split) done for the block."""
    return per_line(*words_flat(lines, marks, one_line))
