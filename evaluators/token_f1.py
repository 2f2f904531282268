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
from typing import Any, Callable, List, Sequence, Tuple

from evalpipe.evaluators.refs import check_hypothesis, reference_tuple
from evalpipe.sufficient_stats.base import Metric, Option


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
    from sacrebleu.metrics.bleu import _get_tokenizer

    if name == "13a":
        from evalpipe.evaluators.tokenize_13a import tokenize_13a
        return lambda s: tokenize_13a(s).split()
    tok = _get_tokenizer(name)()
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

    def stats(self, hypothesis: str, references: Sequence[str]) -> List[float]:
        """``[f1, 1, overlap, |pred|, |ref|]`` against the best reference."""
        check_hypothesis(self.name, hypothesis)
        refs = reference_tuple(self.name, references)
        pred = self._bag(hypothesis)
        best = max((self._against(pred, self._bag(r)) for r in refs), key=lambda t: t[0])
        f1, overlap, n_pred, n_ref = best
        return [f1, 1, overlap, n_pred, n_ref]

    def score(self, stats: Sequence[float]) -> float:
        """Mean sentence F1 (macro) or pooled F1 (micro), in [0, 1]."""
        self.check_stats(stats)
        f1_sum, segments, overlap, n_pred, n_ref = stats
        if self.options["average"] == "micro":
            return 0.0 if segments == 0 else float(_f1(overlap, n_pred, n_ref))
        return float(f1_sum / segments) if segments else 0.0

    def signature(self) -> str:
        o = self.options
        return (f"avg:{o['average']}|inter:{o['intersection']}|case:{'lc' if o['lowercase'] else 'mixed'}"
                f"|tok:{o['tokenize']}|evalpipe")
