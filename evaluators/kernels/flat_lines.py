"""Tokens of a block of lines as one flat list, and back.

Block tokenizers (:func:`~evalpipe.evaluators.kernels.tokenize_13a.tokens_13a_flat`,
:func:`~evalpipe.evaluators.kernels.chrf_words.words_flat`) join the lines with ``SEPARATOR`` -- a NUL with a
space on each side, a token of its own that their rules never touch -- run their rules once, and cut
the result back into lines at the NULs (:func:`flat_tokens`).  Lines a block rule cannot take (a NUL or
a line break of their own, or a case the tokenizer leaves to its per-line form) are tokenized alone and
put back in their places.
"""
from __future__ import annotations

from itertools import chain
from typing import Callable, List, Sequence, Tuple

NUL = "\0"
SEPARATOR = f" {NUL} "


def flat_tokens(lines: Sequence[str], alone: Sequence[int], rules: Callable[[str], str],
                one_line: Callable[[str], List[str]]) -> Tuple[List[str], List[int]]:
    """(every line's tokens end to end, each line's token count): the lines not in ``alone`` (increasing
    indices) joined by ``SEPARATOR``, ``rules`` applied to that block once and the result split at the NULs
    and on whitespace -- every loop in C; the lines ``alone`` tokenized by ``one_line`` and put back."""
    skip = set(alone)
    rest = [line for k, line in enumerate(lines) if k not in skip] if alone else lines
    if rest:
        pieces = list(map(str.split, rules(SEPARATOR.join(rest)).split(NUL)))
        tokens, counts = list(chain.from_iterable(pieces)), list(map(len, pieces))
    else:
        tokens, counts = [], []
    put_back(tokens, counts, lines, alone, one_line)
    return tokens, counts


def put_back(tokens: List[str], counts: List[int], lines: Sequence[str], alone: Sequence[int],
             one_line: Callable[[str], List[str]]) -> None:
    """Tokenize the lines ``alone`` (increasing indices) one by one and insert them at their places."""
    for k in alone:  # in increasing order: counts[:k] are then the k lines before line k
        own = one_line(lines[k])
        start = sum(counts[:k])
        counts.insert(k, len(own))
        tokens[start:start] = own


def per_line(tokens: List[str], counts: Sequence[int]) -> List[List[str]]:
    """Flat tokens cut back into lines of the given token counts."""
    out, start = [], 0
    for n in counts:
        out.append(tokens[start:start + n])
        start += n
    return out
