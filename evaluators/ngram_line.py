"""BLEU's clipped n-gram matches of one sentence, by the C kernel (the line protocol's ``SCORE``).

The algorithm of :mod:`~evalpipe.evaluators.ngram_native` on one segment: the references' distinct
tokens get ranks 1..V in a dict, each position of each reference one key packing its next N ranks
(``bits = (V + 1).bit_length()`` bits each, 0 past the end, all ones for a token no reference has),
and each reference's keys are sorted once (:func:`reference`, kept in the metric's LRU cache).  A
hypothesis is then one C call (:func:`matches`): its tokens looked up in the dict, packed, sorted, and
per order ``sum_g min(hyp count, max_k ref_k count)`` by a walk over its distinct n-grams with one
pointer per reference -- the integers of :func:`~evalpipe.evaluators.ngrams.clipped_matches`, which
stays the reference path (``tests/test_bleu_line.py``).  Without numpy: a server need not import it.
"""
from __future__ import annotations

from array import array
from typing import Any, Dict, List, Optional, Sequence

try:
    from evalpipe.evaluators import _ngram_native as _c
    AVAILABLE = True
except ImportError:  # pragma: no cover - exercised when no C compiler was there at install
    _c = None
    AVAILABLE = False


def reference(refs: Sequence[List[str]], order: int) -> Optional[tuple]:
    """One segment's tokenized references prepared for :func:`matches`: (vocabulary, every reference's
    sorted keys end to end, their bounds, bits), or None when the keys would not fit in 63 bits."""
    vocab: Dict[str, int] = {}
    for tokens in refs:
        for token in tokens:
            if token not in vocab:
                vocab[token] = len(vocab) + 1
    bits = (len(vocab) + 1).bit_length()  # ranks 1..len(vocab); all ones marks a token no reference has
    if bits * order > 63:
        return None
    keys = b"".join(_c.line_keys(list(tokens), vocab, order, bits) for tokens in refs)
    bounds = array("q", [0])
    for tokens in refs:
        bounds.append(bounds[-1] + len(tokens))
    return vocab, keys, bounds.tobytes(), bits


def matches(tokens: List[str], prepared: Any, order: int) -> List[int]:
    """Per order 1..``order``, the clipped matches of a token list against a :func:`reference`
    (against the largest count of any reference)."""
    vocab, keys, bounds, bits = prepared
    return _c.line_matches(tokens, vocab, keys, bounds, order, bits)
