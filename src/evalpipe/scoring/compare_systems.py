"""What two systems do differently: the analyses of compare-mt 0.2.10 (Neubig et al., 2019, "compare-mt: A
Tool for Holistic Comparison of Language Generation Systems"), number for number.

Texts are compare-mt's: each line stripped and split on single spaces (``line.strip().split(" ")``, so an
empty line is one empty token), case-sensitive.  Each analysis is a sum over sentences, computed once:

* :func:`word_accuracy_by_frequency` -- words bucketed by their frequency in the reference (cutoffs 1, 2, 3, 4,
  5, 10, 100, 1000: buckets ``<1``, ``1``, ... ``[10,100)`` ... ``>=1000``); per system and bucket the matched
  words ``sum min(count_out(w), count_ref(w))``, the reference and output words, recall, precision and F-measure
  (all 0 when nothing matches) -- compare-mt's ``FreqWordBucketer.calc_statistics``;
* :func:`bleu_by_length` -- sentences bucketed by reference length (cutoffs 10 ... 60), compare-mt's own corpus
  BLEU per bucket (:func:`comparemt_bleu`: per-sentence n-gram denominators of at least 1, zero precisions left
  out of the geometric mean, brevity penalty ``min(1, exp(1 - r/c))``; an empty bucket scores 0);
* :func:`characteristic_ngrams` -- n-grams (1-4) matched in the reference, counted per system, and for each
  the smoothed share ``(m1 + alpha) / (m1 + m2 + 2 alpha)`` (compare-mt's ``extract_salient_features``): near 1,
  system 1 matches it far more often; near 0, system 2 does;
* :func:`sentence_bleu` and :func:`sentence_differences` -- compare-mt's ``sentbleu`` (NLTK's sentence BLEU with
  Lin and Och's add-one smoothing of the orders above 1, times 100) and the sentences sorted by the
  difference ``system 2 - system 1`` (a repeated triple of outputs and reference counted once).
"""
from __future__ import annotations

import math
from bisect import bisect_right
from collections import Counter
from typing import Any, Dict, List, Optional, Sequence, Tuple

from evalpipe.errors import InputError

Tokens = List[str]
FREQUENCY_CUTOFFS = (1, 2, 3, 4, 5, 10, 100, 1000)
LENGTH_CUTOFFS = (10, 20, 30, 40, 50, 60)


def tokens(lines: Sequence[str]) -> List[Tokens]:
    """compare-mt's tokens of each line."""
    return [line.strip().split(" ") for line in lines]


def bucket_labels(cutoffs: Sequence[float], integer: bool = True) -> List[str]:
    """compare-mt's bucket names (its ``set_bucket_cutoffs``): ``<c0``, then ``[a,b)`` -- or, for ``integer``
    cutoffs, ``a`` for a bucket of the one value ``a`` -- then ``>=last``."""
    labels = [f"<{cutoffs[0]}"]
    labels += [f"{b - 1}" if integer and b - 1 == a else f"[{a},{b})" for a, b in zip(cutoffs, cutoffs[1:])]
    return labels + [f">={cutoffs[-1]}"]


def _ngrams(words: Tokens, n: int) -> Counter:
    return Counter(zip(*(words[i:] for i in range(n))))


def word_accuracy_by_frequency(ref: List[Tokens], outs: Sequence[List[Tokens]],
                               cutoffs: Sequence[int] = FREQUENCY_CUTOFFS,
                               corpus: Optional[List[Tokens]] = None,
                               counts: Optional[Dict[str, int]] = None) -> Dict[str, Any]:
    """``{"buckets": labels, "systems": [[(matches, ref words, out words, recall, precision, F), ...per bucket],
    ...per system]}`` with word frequencies counted in the reference, or in ``corpus`` (compare-mt's
    ``freq_corpus_file``: a training corpus), or read from ``counts`` (its ``freq_count_file``); a word without a
    count has frequency 0 -- see the module docstring."""
    frequency = counts if counts is not None else Counter(
        w for sentence in (ref if corpus is None else corpus) for w in sentence)
    bucket = {w: bisect_right(cutoffs, c) for w, c in frequency.items()}
    return {"buckets": bucket_labels(cutoffs), "systems": word_accuracy_by_word(
        ref, outs, bucket, bisect_right(cutoffs, 0), len(cutoffs) + 1)}


def word_accuracy_by_word(ref: List[Tokens], outs: Sequence[List[Tokens]], bucket: Dict[str, int], other: int,
                          buckets: int) -> List[List[tuple]]:
    """The rows of :func:`word_accuracy_by_frequency` where a word's bucket is ``bucket[word]`` (``other`` for a
    word not in it); a matched output word is in its reference word's bucket, which is its own."""
    ref_total = [0] * buckets
    out_total = [[0] * buckets for _ in outs]
    matched = [[0] * buckets for _ in outs]
    get = bucket.get
    for i, sentence in enumerate(ref):
        ref_counts = Counter(sentence)
        for w, c in ref_counts.items():
            ref_total[get(w, other)] += c
        for k, out in enumerate(outs):
            for w, c in Counter(out[i]).items():
                b = get(w, other)
                out_total[k][b] += c
                matched[k][b] += min(c, ref_counts.get(w, 0))
    return [accuracy_rows(matched[k], ref_total, out_total[k]) for k in range(len(outs))]


def accuracy_rows(matched: Sequence[int], ref_total: Sequence[int], out_total: Sequence[int]) -> List[tuple]:
    """compare-mt's ``(matches, ref words, out words, recall, precision, F)`` of each bucket (all three 0 where
    nothing matches)."""
    rows = []
    for m, r, o in zip(matched, ref_total, out_total):
        recall, precision = (m / r, m / o) if m else (0.0, 0.0)
        rows.append((m, r, o, recall, precision, 2 * precision * recall / (precision + recall) if m else 0.0))
    return rows


def comparemt_bleu_stats(ref: Tokens, out: Tokens, ref_grams: Optional[List[Counter]] = None
                         ) -> Tuple[int, int, List[Tuple[int, int]]]:
    """One sentence's ``(ref length, output length, [(matches_n, max(1, output n-grams)) for n = 1..4])``
    (``ref_grams``: the reference's n-gram counts of orders 1-4, when several outputs share them)."""
    precisions = []
    for n in range(1, 5):
        hyp = _ngrams(out, n)
        reference = ref_grams[n - 1] if ref_grams is not None else _ngrams(ref, n)
        get = reference.get
        precisions.append((sum(min(c, get(g, 0)) for g, c in hyp.items()), max(1, len(out) - n + 1)))
    return len(ref), len(out), precisions


def comparemt_bleu_stats_of_systems(ref: List[Tokens], outs: Sequence[List[Tokens]]) -> List[list]:
    """:func:`comparemt_bleu_stats` of every sentence of every system: the clipped matches from the n-gram kernel
    (through the BLEU plugin's :func:`~evalpipe.evaluators.bleu.matches_of_token_lists`: the references indexed
    once for all systems), or counted here sentence by sentence where the kernel's keys do not fit."""
    from evalpipe.evaluators.bleu import matches_of_token_lists

    found = matches_of_token_lists(ref, outs)
    if found is None:
        grams = [[_ngrams(r, n) for n in range(1, 5)] for r in ref]
        return [[comparemt_bleu_stats(r, o, g) for r, o, g in zip(ref, out, grams)] for out in outs]
    return [[(len(r), len(o), [(matches[n][i], max(1, len(o) - n)) for n in range(4)])
             for i, (r, o) in enumerate(zip(ref, out))] for out, matches in zip(outs, found)]


def comparemt_bleu(stats: Sequence[Tuple[int, int, List[Tuple[int, int]]]]) -> float:
    """compare-mt's corpus BLEU (0-100) of summed :func:`comparemt_bleu_stats` (0 for no sentence)."""
    if not stats:
        return 0.0
    return comparemt_bleu_of_sums(sum(s[0] for s in stats), sum(s[1] for s in stats),
                                  [sum(s[2][n][0] for s in stats) for n in range(4)],
                                  [sum(s[2][n][1] for s in stats) for n in range(4)])


def comparemt_bleu_of_sums(ref_len: int, out_len: int, num: Sequence[int], den: Sequence[int]) -> float:
    """compare-mt's BLEU of summed statistics: zero precisions left out of the geometric mean, brevity
    ``min(1, exp(1 - r/c))``; 0 (an int, as compare-mt) when no unigram matches."""
    if num[0] == 0:
        return 0
    log_precision = 0
    for a, b in zip(num, den):
        p = a / b if b != 0 else 0
        log_precision += (math.log(p) if p > 0 else 0) * 0.25
    brevity = min(1, math.exp(1 - ref_len / out_len)) if out_len != 0 else 0
    return 100 * brevity * math.exp(log_precision)


def bleu_by_length(ref: List[Tokens], outs: Sequence[List[Tokens]],
                   cutoffs: Sequence[int] = LENGTH_CUTOFFS, stats: Optional[Sequence[list]] = None) -> Dict[str, Any]:
    """``{"buckets": labels, "sentences": [count per bucket], "bleu": [[BLEU per bucket], ...per system]}``, the
    sentences bucketed by reference length (``stats``: each system's :func:`comparemt_bleu_stats`, if computed)."""
    which = [bisect_right(cutoffs, len(r)) for r in ref]
    buckets = range(len(cutoffs) + 1)
    scores = []
    for k, out in enumerate(outs):
        stats_k = stats[k] if stats is not None else [comparemt_bleu_stats(r, o) for r, o in zip(ref, out)]
        scores.append([comparemt_bleu([s for s, b in zip(stats_k, which) if b == k]) for k in buckets])
    return {"buckets": bucket_labels(cutoffs), "sentences": [which.count(k) for k in buckets], "bleu": scores}


def ngram_counts(ref: List[Tokens], out: List[Tokens], min_order: int = 1, max_order: int = 4
                 ) -> Tuple[Counter, Counter, Counter]:
    """compare-mt's ``compare_ngrams``: per n-gram (orders ``min_order``..``max_order``) summed over sentences, the
    output's occurrences matched in the reference (``match``: ``min(out, ref)``), those it has in excess
    (``over``: ``out - match``) and the reference's it misses (``under``: ``ref - match``); an n-gram is a key only
    where its count is positive."""
    match: Counter = Counter()
    over: Counter = Counter()
    under: Counter = Counter()
    for r, o in zip(ref, out):
        for n in range(min_order, max_order + 1):
            reference, hyp = _ngrams(r, n), _ngrams(o, n)
            for g, c in hyp.items():
                m = min(c, reference.get(g, 0))
                if m:
                    match[g] += m
                if c > m:
                    over[g] += c - m
            for g, c in reference.items():
                left = c - min(c, hyp.get(g, 0))
                if left:
                    under[g] += left
    return match, over, under


def labelled_ngram_counts(ref: List[Tokens], out: List[Tokens], ref_labels: List[List[str]],
                          out_labels: List[List[str]], min_order: int = 1, max_order: int = 4
                          ) -> Tuple[Counter, Counter, Counter]:
    """:func:`ngram_counts` of label n-grams (compare-mt's ``compare_ngrams`` with ``ref_labels``/``out_labels``:
    POS tags, say): words are matched, their labels counted -- an output n-gram matched by a reference word n-gram
    counts for its own labels; a reference n-gram left unmatched counts for the labels of the last occurrences of
    its words (compare-mt walks them backwards)."""
    match: Counter = Counter()
    over: Counter = Counter()
    under: Counter = Counter()
    orders = range(min_order, max_order + 1)
    for r, o, rl, ol in zip(ref, out, ref_labels, out_labels):
        grams = [(tuple(r[i:i + n]), tuple(rl[i:i + n])) for n in orders for i in range(len(r) - n + 1)]
        left = Counter(g for g, _ in grams)
        for n in orders:
            for i in range(len(o) - n + 1):
                g, labels = tuple(o[i:i + n]), tuple(ol[i:i + n])
                if left[g] > 0:
                    match[labels] += 1
                    left[g] -= 1
                else:
                    over[labels] += 1
        for g, labels in reversed(grams):
            if left[g] > 0:
                under[labels] += 1
                left[g] -= 1
    return match, over, under


def characteristic_ngrams(ref: List[Tokens], out1: List[Tokens], out2: List[Tokens], alpha: float = 1.0,
                          max_order: int = 4) -> Dict[Tuple[str, ...], Tuple[float, int, int]]:
    """Every n-gram either system matches: ``(share, matches by system 1, matches by system 2)``, share
    ``(m1 + alpha) / (m1 + m2 + 2 alpha)``."""
    m1, m2 = ngram_counts(ref, out1, 1, max_order)[0], ngram_counts(ref, out2, 1, max_order)[0]
    return {g: ((m1[g] + alpha) / (m1[g] + m2[g] + 2 * alpha), m1[g], m2[g]) for g in m1.keys() | m2.keys()}


def sentence_bleu(ref: Tokens, out: Tokens) -> float:
    """compare-mt's ``sentbleu``: NLTK 3.x ``sentence_bleu`` with ``SmoothingFunction().method2``, times 100."""
    return sentence_bleu_of(comparemt_bleu_stats(ref, out))


def sentence_bleu_of(sentence: Tuple[int, int, List[Tuple[int, int]]]) -> float:
    """:func:`sentence_bleu` of a sentence's :func:`comparemt_bleu_stats`."""
    ref_len, out_len, stats = sentence
    if stats[0][0] == 0:
        return 0  # NLTK's int 0 (compare-mt prints "0", not "0.0000")
    precisions = [stats[0][0] / stats[0][1]] + [(a + 1) / (b + 1) for a, b in stats[1:]]
    log_precision = math.fsum(0.25 * math.log(p) for p in precisions if p > 0)
    brevity = 1 if out_len > ref_len else 0 if not out_len else math.exp(1 - ref_len / out_len)
    return 100 * (brevity * math.exp(log_precision))  # NLTK's score, then compare-mt's scale


def sentence_differences(ref: List[Tokens], out1: List[Tokens], out2: List[Tokens]
                         ) -> List[Tuple[float, float, float, int]]:
    """``(sentbleu 2 - sentbleu 1, sentbleu 1, sentbleu 2, index)`` of every sentence, ascending (system 1 far
    better first), a repeated (output 1, output 2, reference) triple counted once, at its first index."""
    return score_differences(ref, out1, out2, [sentence_bleu(r, o) for r, o in zip(ref, out1)],
                             [sentence_bleu(r, o) for r, o in zip(ref, out2)])


def score_differences(ref: List[Tokens], out1: List[Tokens], out2: List[Tokens], scores1: Sequence[float],
                      scores2: Sequence[float], sign: float = 1.0) -> List[Tuple[float, float, float, int]]:
    """:func:`sentence_differences` of any sentence scores: ``(sign * (score 2 - score 1), score 1, score 2,
    index)`` ascending (``sign`` -1 for a metric where lower is better, so system 1 far better still comes first)."""
    seen, rows = set(), []
    for i, (r, a, b) in enumerate(zip(ref, out1, out2)):
        key = (tuple(a), tuple(b), tuple(r))
        if key not in seen:
            seen.add(key)
            rows.append((sign * (scores2[i] - scores1[i]), scores1[i], scores2[i], i))
    return sorted(rows)


def compare_two(ref_lines: Sequence[str], out1_lines: Sequence[str], out2_lines: Sequence[str],
                names: Sequence[str] = ("system 1", "system 2"), top: int = 30, examples: int = 10,
                alpha: float = 1.0) -> Dict[str, Any]:
    """Every analysis of two systems against one reference, as a JSON-ready document (``kind: compare``):
    compare-mt's corpus BLEU, sentence BLEU of every sentence, BLEU by reference length, word F-measure by
    frequency, the ``top`` n-grams each system matches far more often (share furthest from 1/2 first, then the
    more matches, then the n-gram), and the ``examples`` sentences where each system is furthest ahead."""
    ref, out1, out2 = tokens(ref_lines), tokens(out1_lines), tokens(out2_lines)
    if not len(ref) == len(out1) == len(out2):
        raise InputError(f"expected as many lines in both systems as in the reference ({len(ref)}), "
                         f"got {len(out1)} and {len(out2)}")
    grams = characteristic_ngrams(ref, out1, out2, alpha)
    ranked = sorted(grams.items(), key=lambda item: (-item[1][0], -item[1][1], item[0]))
    reverse = sorted(grams.items(), key=lambda item: (item[1][0], -item[1][2], item[0]))
    differences = sentence_differences(ref, out1, out2)

    def example(row: Tuple[float, float, float, int]) -> Dict[str, Any]:
        i = row[3]
        return {"index": i, "sentbleu": [row[1], row[2]], "reference": ref_lines[i],
                "outputs": [out1_lines[i], out2_lines[i]]}

    return {"kind": "compare", "systems": list(names), "sentences": len(ref),
            "bleu": [comparemt_bleu([comparemt_bleu_stats(r, o) for r, o in zip(ref, out)]) for out in (out1, out2)],
            "sentence_bleu": [[sentence_bleu(r, o) for r, o in zip(ref, out)] for out in (out1, out2)],
            "length": bleu_by_length(ref, [out1, out2]),
            "word_accuracy": word_accuracy_by_frequency(ref, [out1, out2]),
            "ngrams": {"alpha": alpha,
                       "system1": [[" ".join(g), *v] for g, v in ranked[:top] if v[0] > 0.5],
                       "system2": [[" ".join(g), *v] for g, v in reverse[:top] if v[0] < 0.5]},
            "examples": {"system1": [example(r) for r in differences[:examples] if r[0] < 0],
                         "system2": [example(r) for r in differences[::-1][:examples] if r[0] > 0]}}


def scores_by_length(ref: List[Tokens], values: Sequence[Sequence[Optional[float]]],
                     cutoffs: Sequence[int] = LENGTH_CUTOFFS) -> Dict[str, Any]:
    """``{"buckets": labels, "sentences": [scored sentences per bucket], "mean": [[mean per bucket or None], ...per
    system]}``: segment scores computed elsewhere, bucketed by reference length as :func:`bleu_by_length` buckets."""
    which = [bisect_right(cutoffs, len(r)) for r in ref]
    buckets = range(len(cutoffs) + 1)
    means = []
    for column in values:
        means.append([])
        for k in buckets:
            chosen = [v for v, b in zip(column, which) if b == k and v is not None]
            means[-1].append(sum(chosen) / len(chosen) if chosen else None)
    counts = [sum(1 for i, b in enumerate(which) if b == k and all(v[i] is not None for v in values)) for k in buckets]
    return {"buckets": bucket_labels(cutoffs), "sentences": counts, "mean": means}


def compare_scores(name: str, ref_lines: Sequence[str], outs: Sequence[Sequence[str]],
                   values: Sequence[Sequence[Optional[float]]], higher_is_better: bool, examples: int) -> Dict[str, Any]:
    """The analyses of segment scores computed elsewhere (``compare --segment-scores``): each system's mean over
    the scored segments, the means by reference length, and the ``examples`` sentences where each system is
    furthest ahead by these scores (a segment without a score in either system left out)."""
    sign = 1.0 if higher_is_better else -1.0
    rows = sorted((sign * (b - a), a, b, i) for i, (a, b) in enumerate(zip(*values)) if a is not None and b is not None)

    def example(row: Tuple[float, float, float, int]) -> Dict[str, Any]:
        i = row[3]
        return {"index": i, "scores": [row[1], row[2]], "reference": ref_lines[i], "outputs": [o[i] for o in outs]}

    means = []
    for column in values:
        scored = [v for v in column if v is not None]
        means.append(sum(scored) / len(scored) if scored else None)
    return {"name": name, "higher_is_better": higher_is_better, "mean": means,
            "length": scores_by_length(tokens(ref_lines), values),
            "examples": {"system1": [example(r) for r in rows[:examples] if r[0] < 0],
                         "system2": [example(r) for r in rows[::-1][:examples] if r[0] > 0]}}
