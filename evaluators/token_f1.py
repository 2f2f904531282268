"""Token-overlap F1, as used by predict-only translation environments and SQuAD-style QA scoring.

Tokens: whitespace split by default (``tokenize=whitespace``), or sacrebleu's ``13a`` / ``intl`` /
``char`` tokenizers; ``lowercase`` folds case first.  Overlap ``|pred ∩ ref|`` is a *multiset*
intersection by default (a token counts as often as it occurs in both: sum over tokens of
min(count_pred, count_ref)); ``intersection=set`` counts distinct tokens instead (and then |pred|,
|ref| are numbers of distinct tokens too).  Per segment::

    P = overlap / |pred|,  R = overlap / |ref|,  F1 = 2PR / (P + R)  (0 when overlap = 0;
    1 when prediction and reference are both empty)

With several references the segment uses the one with the highest F1 (first on ties).

Stats layout (fixed): ``f1_sum, segments, overlap, pred_tokens, ref_tokens``.
Score (``average=macro``, default): ``f1_sum / segments`` -- the mean sentence F1, in [0, 1].
``average=micro``: F1 of the pooled counts, P = sum overlap / sum |pred|, R = sum overlap / sum |ref|.
An empty corpus scores 0.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Callable, List, Optional, Tuple

from evalpipe.sufficient_stats.metric import Metric
from evalpipe.sufficient_stats.options import Option


def _f1(overlap: float, n_pred: float, n_ref: float) -> float:
    if n_pred == 0 and n_ref == 0:
        return 1.0
    if overlap == 0:
        return 0.0
    p, r = overlap / n_pred, overlap / n_ref
    return 2 * p * r / (p + r)


def _tokenizer(name: str) -> Callable[[str], List[str]]:
    if name == "whitespace":
        return str.split
    if name == "13a":
        from evalpipe.evaluators.kernels.tokenize_13a import tokens_13a
        return tokens_13a
    from evalpipe.evaluators.sacrebleu_api import tokenizer

    tok = tokenizer(name)
    return lambda s: tok(s).split()


class TokenF1(Metric):
    """Token-overlap F1 (definition, stats layout and averaging in the module docstring)."""

    name = "token_f1"
    OPTIONS = {
        "average": Option(str, "macro", "macro: mean sentence F1; micro: F1 of pooled counts", choices=("macro", "micro")),
        "intersection": Option(str, "multiset", "count shared tokens with multiplicity, or distinct", choices=("multiset", "set")),
        "lowercase": Option(bool, False, "lowercase before tokenizing"),
        "tokenize": Option(str, "whitespace", "tokenizer", choices=("whitespace", "13a", "intl", "char")),
    }
    STATS_FIELDS = ("f1_sum", "segments", "overlap", "pred_tokens", "ref_tokens")
    NONNEGATIVE_STATS = True

    def stats_bounds(self) -> List[Tuple[str, str]]:
        return [("f1_sum", "segments"), ("overlap", "pred_tokens"), ("overlap", "ref_tokens")]

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._tok = _tokenizer(self.options["tokenize"])

    def _bag(self, text: str) -> Counter:
        if self.options["lowercase"]:
            text = text.lower()
        bag = Counter(self._tok(text))
        if self.options["intersection"] == "set":
            bag = Counter(dict.fromkeys(bag, 1))
        return bag

    def _against(self, pred: Counter, ref: Counter) -> Tuple[float, int, int, int]:
        overlap = sum((pred & ref).values())
        n_pred, n_ref = sum(pred.values()), sum(ref.values())
        return _f1(overlap, n_pred, n_ref), overlap, n_pred, n_ref

    def segment_stats(self, hypothesis: str, refs: Tuple[str, ...]) -> List[float]:
        """``[f1, 1, overlap, |pred|, |ref|]`` against the best reference."""
        pred = self._bag(hypothesis)
        f1, overlap, n_pred, n_ref = max((self._against(pred, self._bag(r)) for r in refs), key=lambda t: t[0])
        return [f1, 1, overlap, n_pred, n_ref]

    def score_from_stats(self, stats: List[float]) -> float:
        """Mean sentence F1 (macro) or pooled F1 (micro), in [0, 1]."""
        f1_sum, segments, overlap, n_pred, n_ref = stats
        if self.options["average"] == "micro":
            return 0.0 if segments == 0 else float(_f1(overlap, n_pred, n_ref))
        return float(f1_sum / segments) if segments else 0.0

    def signature(self, nrefs: Optional[int] = None) -> str:
        o = self.options
        return (f"avg:{o['average']}|inter:{o['intersection']}|case:{'lc' if o['lowercase'] else 'mixed'}"
                f"|tok:{o['tokenize']}|evalpipe")
