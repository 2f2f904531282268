"""Any number of systems against one reference: compare-mt 0.2.10's default analyses, number for number.

The analyses are compare-mt's defaults (``compare-mt REF SYS1 ... SYSn`` with no analysis flag), built from the
two-system functions of :mod:`evalpipe.scoring.compare_systems` (tokens, BLEU, buckets are compare-mt's):

* scores: compare-mt's corpus BLEU (0-100) and the length ratio ``output words / reference words`` of each system;
* word F-measure by reference frequency (:func:`~evalpipe.scoring.compare_systems.word_accuracy_by_frequency`);
* sentence buckets: BLEU by reference length; sentence counts by ``len(output) - len(reference)`` (cutoffs -20,
  -10, -5 ... 5, 6, 11, 21); sentence counts by sentence BLEU (cutoffs 10.0 ... 90.0);
* for the first two systems (compare-mt's ``compare_directions=0-1``): the ``top`` n-grams (1-4) of each side of
  the smoothed share ``(m1 + 1) / (m1 + m2 + 2)`` of reference matches, and the ``examples`` sentences whose
  sentence BLEU differs most each way.

n-grams of one share are listed by more matches of the side's system, then by the n-gram: compare-mt lists them in
the order of a Python set of strings, which changes from run to run with the interpreter's string hashing, so its
lists agree with these in every share and count and may differ in which of equal-share n-grams fill the last places.
"""
from __future__ import annotations

from bisect import bisect_right
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

from evalpipe.errors import InputError
from evalpipe.scoring.compare_systems import (Tokens, bleu_by_length, bucket_labels, labelled_ngram_counts,
                                              ngram_counts,
                                              comparemt_bleu, comparemt_bleu_of_sums, comparemt_bleu_stats_of_systems,
                                              sentence_bleu_of,
                                              score_differences, tokens, word_accuracy_by_frequency)

LENGTH_DIFFERENCE_CUTOFFS = (-20, -10, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 11, 21)
SENTENCE_BLEU_CUTOFFS = tuple(x * 100 / 10.0 for x in range(1, 10))


def _counts(values: Sequence[float], cutoffs: Sequence[float]) -> List[int]:
    counts = [0] * (len(cutoffs) + 1)
    for v in values:
        counts[bisect_right(cutoffs, v)] += 1
    return counts


def analyse(ref_lines: Sequence[str], outs_lines: Sequence[Sequence[str]], names: Sequence[str], top: int = 50,
            examples: int = 10, bootstrap: int = 0, seed: int = 0, ngrams: Optional[NgramSettings] = None,
            pairs: Sequence[Tuple[int, int]] = ((0, 1),), corpus_lines: Optional[Sequence[str]] = None,
            settings: Optional[Settings] = None) -> Dict[str, Any]:
    """The analyses of the module docstring as a JSON-ready document (``kind: compare-mt``); with ``bootstrap``
    resamples, the BLEU scores' paired bootstrap (:func:`paired_bootstrap`) under ``bleu_bootstrap``; ``ngrams``
    compare-mt's n-gram settings, ``pairs`` its ``compare_directions`` (of the n-grams and the examples),
    ``corpus_lines`` its ``freq_corpus_file`` (word frequencies from a training corpus); ``settings`` the other
    analyses asked (:class:`Settings`)."""
    settings = settings or Settings()
    lower = (lambda lines: [x.lower() for x in lines]) if settings.lowercase else list
    # compare-mt's case_insensitive: its tokens lowercased (str.lower) in every analysis; the texts shown as given
    ref, outs = tokens(lower(ref_lines)), [tokens(lower(lines)) for lines in outs_lines]
    corpus_lines = None if corpus_lines is None else lower(corpus_lines)
    if any(len(out) != len(ref) for out in outs):
        raise InputError(f"expected as many lines in every system as in the reference ({len(ref)}), got "
                         f"{[len(out) for out in outs]}")
    ref_words = sum(len(r) for r in ref)
    out_words = [sum(len(o) for o in out) for out in outs]
    stats = comparemt_bleu_stats_of_systems(ref, outs)  # once: three analyses read it
    sentbleu = [[sentence_bleu_of(s) for s in column] for column in stats]
    doc: Dict[str, Any] = {
        "kind": "compare-mt", "systems": list(names), "sentences": len(ref),
        "bleu": [comparemt_bleu(column) for column in stats],
        "length_ratio": {"ratio": [w / ref_words if ref_words else 0.0 for w in out_words], "reference_words":
                         ref_words, "output_words": out_words},
        "word_accuracy": dict(word_accuracy_by_frequency(
            ref, outs, corpus=None if corpus_lines is None else tokens(corpus_lines), counts=settings.counts),
            frequency_from="counts" if settings.counts is not None else "reference" if corpus_lines is None
            else "corpus"),
        "length": bleu_by_length(ref, outs, stats=stats),
        "length_difference": {"buckets": bucket_labels(LENGTH_DIFFERENCE_CUTOFFS), "sentences": [
            _counts([len(o) - len(r) for r, o in zip(ref, out)], LENGTH_DIFFERENCE_CUTOFFS) for out in outs]},
        "sentence_bleu": {"buckets": bucket_labels(SENTENCE_BLEU_CUTOFFS, integer=False),
                          "sentences": [_counts(values, SENTENCE_BLEU_CUTOFFS) for values in sentbleu]},
    }
    _asked(doc, settings, (ref_lines, outs_lines), ref, outs, stats, sentbleu, corpus_lines)
    if bootstrap:
        doc["bleu_bootstrap"] = paired_bootstrap(stats, bootstrap, seed, settings.sample_ratio)
        if settings.scored:
            doc["metric_bootstrap"] = [metric_bootstrap(metric, _rows(settings, name, (ref_lines, outs_lines)),
                                                        bootstrap, seed, settings.sample_ratio)
                                       for name, metric in settings.scored.items()]
    if len(outs) > 1:
        src_lines = settings.source[0] if settings.source else None
        by = _example_scores(settings, ref, outs, sentbleu, outs_lines, ref_lines)
        labelled = (settings.ref_labels, settings.out_labels) if settings.ngram_label_files else None
        doc["pairs"] = [_pair(ref, ref_lines, outs, outs_lines, left, right, top, examples, ngrams or NgramSettings(),
                              src_lines, by, labelled) for left, right in pairs]
        if labelled:
            for pair in doc["pairs"]:
                pair["ngram_settings"]["label_files"] = settings.ngram_label_files
    return doc


def paired_bootstrap(stats: Sequence[list], samples: int, seed: int, ratio: float = 0.5) -> Dict[str, Any]:
    """compare-mt's ``eval_with_paired_bootstrap`` of its BLEU (``--compare_scores score_type=bleu,bootstrap=N``
    with ``--seed``): ``samples`` times, ``int(n * ratio)`` sentences drawn with replacement by numpy's legacy
    generator seeded with ``seed`` (``np.random.seed``; one ``choice`` a resample), every system scored on them.
    Per system the sorted scores' ``[int(0.025 N)]`` and ``[int(0.975 N)]`` (``lower``, ``upper``); per pair
    ``i < j`` the shares of resamples where i scores higher (``wins``), lower (``losses``), and -- as compare-mt
    counts them -- not lower (``not_lower``: ties, and wins again).  The sums are integers, so the scores are
    compare-mt's to the last bit."""
    tables = [[[r, o, *(x for pair in p for x in pair)] for r, o, p in column] for column in stats]
    return bootstrap_of_rows(tables, lambda s: comparemt_bleu_of_sums(s[0], s[1], s[2::2], s[3::2]), samples, seed,
                             ratio)


def metric_bootstrap(metric: Any, rows: Sequence[list], samples: int, seed: int, ratio: float = 0.5
                     ) -> Dict[str, Any]:
    """:func:`paired_bootstrap`'s resamples (the same draws) of an evalpipe metric: its corpus score of each
    resample's summed statistics (``rows``: each system's per-segment statistics); ``wins`` and ``losses`` in the
    metric's direction (a win: a lower TER); ``scores``: each system's corpus score."""
    found = bootstrap_of_rows(rows, lambda s: metric.score(s), samples, seed, ratio,
                              1.0 if metric.higher_is_better else -1.0)
    return dict(found, metric=metric.display_name(), higher_is_better=metric.higher_is_better,
                scores=[metric.score([sum(c) for c in zip(*column)]) for column in rows])


def bootstrap_of_rows(rows: Sequence[list], score_of_sums: Any, samples: int, seed: int, ratio: float,
                      sign: float = 1.0) -> Dict[str, Any]:
    """compare-mt's paired bootstrap (:func:`paired_bootstrap`) of any score of summed per-segment statistics
    (``rows[system][segment]``); ``sign`` -1 counts a lower score as a win."""
    import numpy as np

    n = len(rows[0])
    size = int(n * ratio)
    rng = np.random.RandomState(seed)
    draws = np.zeros((samples, n), dtype=np.int64)
    for k in range(samples):
        np.add.at(draws[k], rng.choice(n, size=size, replace=True), 1)
    scores = []
    for column in rows:
        table = np.asarray(column)
        sums = (draws @ (table if table.dtype.kind in "iu" else table.astype(np.float64))).tolist()
        scores.append([score_of_sums(s) for s in sums])
    pairs = []
    for i in range(len(rows)):
        for j in range(i + 1, len(rows)):
            wins = sum(sign * a > sign * b for a, b in zip(scores[i], scores[j]))
            losses = sum(sign * a < sign * b for a, b in zip(scores[i], scores[j]))
            pairs.append({"systems": [i, j], "wins": wins / samples, "losses": losses / samples,
                          "not_lower": (samples - losses) / samples})
    bounds = [sorted(column) for column in scores]
    return {"samples": samples, "sample_ratio": ratio, "seed": seed,
            "lower": [b[int(samples * 0.025)] for b in bounds], "upper": [b[int(samples * 0.975)] for b in bounds],
            "pairs": pairs}


class Settings(NamedTuple):
    """compare-mt's other analyses and settings: sentence-bucket tables
    (:class:`~evalpipe.scoring.compare_sentences.SentenceBuckets`, in place of the three defaults), word-accuracy
    analyses (:class:`~evalpipe.scoring.compare_words.WordBuckets`, in place of F-measure by frequency), word
    counts (``freq_count_file``), label files (a line of labels a segment: the reference's, one a system's),
    source words with alignments (``(source lines, alignment lines, alignment file)``), evalpipe metrics that are
    measures (name: metric), compare-mt's ``case_insensitive``, the measure the examples are chosen by
    (compare-mt's ``--compare_sentence_examples score_type``), and the measures' per-segment statistics where
    they were computed on an engine (name: a list of rows a system); with the bootstrap, the evalpipe metrics whose
    corpus scores are resampled beside BLEU (``-m``: name -> metric) and the share of sentences a resample draws
    (compare-mt's ``sample_ratio``); the label files (the reference's, the systems') when the n-grams compared are
    of labels; a label a segment, for sentence buckets by label."""

    sentence_buckets: Sequence[Any] = ()
    word_buckets: Sequence[Any] = ()
    counts: Optional[Dict[str, int]] = None
    ref_labels: Optional[List[List[str]]] = None
    out_labels: Optional[Sequence[List[List[str]]]] = None
    source: Optional[Tuple[Sequence[str], Sequence[str], str]] = None
    metrics: Dict[str, Any] = {}
    lowercase: bool = False
    rows: Dict[str, List[list]] = {}
    scored: Dict[str, Any] = {}
    sample_ratio: float = 0.5
    ngram_label_files: Optional[Tuple[str, List[str]]] = None
    segment_labels: Optional[List[str]] = None
    examples_by: str = "sentbleu"


def _example_scores(settings: Settings, ref: List[Tokens], outs: List[List[Tokens]], sentbleu: list,
                    outs_lines: Sequence[Sequence[str]], ref_lines: Sequence[str]) -> tuple:
    """``(measure, higher is better, [[sentence score] per system])`` the examples are chosen by: compare-mt's
    ``sentbleu`` or ``length`` (output / reference words), or an evalpipe metric (its score of each sentence's
    statistics, the texts as given)."""
    measure = settings.examples_by
    if measure == "sentbleu":
        return measure, True, sentbleu
    if measure == "length":
        return measure, True, [[len(o) / len(r) for r, o in zip(ref, out)] for out in outs]
    metric = settings.metrics[measure]
    return measure, metric.higher_is_better, [[metric.score(row) for row in rows]
                                              for rows in _rows(settings, measure, (ref_lines, outs_lines))]


def _rows(settings: Settings, name: str, lines: tuple) -> List[list]:
    """Each system's per-segment statistics of the evalpipe metric ``name``: those computed on an engine
    (``settings.rows``), or computed here."""
    if name in settings.rows:
        return settings.rows[name]
    metric = {**settings.metrics, **settings.scored}[name]
    return [metric.corpus_stats(list(out), [list(lines[0])]) for out in lines[1]]


def _asked(doc: Dict[str, Any], settings: Settings, lines: tuple, ref: List[Tokens], outs: List[List[Tokens]],
           stats: list, sentbleu: list, corpus_lines: Optional[Sequence[str]]) -> None:
    """The analyses of ``settings`` into ``doc``: ``sentence_buckets``, ``word_buckets``, ``source_words``
    (``lines``: the reference's and the systems' lines as given, what evalpipe metrics read)."""
    from evalpipe.scoring import compare_sentences, compare_words

    if settings.sentence_buckets:
        sentences = compare_sentences.Sentences([len(r) for r in ref], [[len(o) for o in out] for out in outs],
                                                stats, sentbleu, settings.segment_labels)
        measured = {name: (metric, _rows(settings, name, lines)) for name, metric in settings.metrics.items()}
        doc["sentence_buckets"] = [compare_sentences.table(spec, sentences, measured.get(spec.measure))
                                   for spec in settings.sentence_buckets]
    if settings.word_buckets:
        corpus = None if corpus_lines is None else tokens(corpus_lines)
        given = (tokens(lines[0]), [tokens(out) for out in lines[1]]) if settings.lowercase else (ref, outs)
        # buckets by case read the case: compare-mt's case buckets are case-sensitive whatever case_insensitive says
        doc["word_buckets"] = [compare_words.word_table(spec, *(given if spec.by == "case" else (ref, outs)), corpus,
                                                        settings.counts, settings.ref_labels, settings.out_labels)
                               for spec in settings.word_buckets]
    if settings.source:
        src_lines, align_lines, path = settings.source
        src = tokens([x.lower() for x in src_lines] if settings.lowercase else src_lines)
        aligns = compare_words.read_alignments(align_lines, src, ref, path)
        doc["source_words"] = compare_words.source_word_recall(src, ref, outs, aligns)


class NgramSettings(NamedTuple):
    """compare-mt's ``--compare_ngrams`` settings: ``compare_type``, ``min_ngram_length``, ``max_ngram_length``,
    ``alpha``."""

    kind: str = "match"
    min_order: int = 1
    max_order: int = 4
    alpha: float = 1.0


def _pair(ref: List[Tokens], ref_lines: Sequence[str], outs: List[List[Tokens]],
          outs_lines: Sequence[Sequence[str]], left: int, right: int, top: int, examples: int,
          settings: NgramSettings, src_lines: Optional[Sequence[str]] = None, by: Optional[tuple] = None,
          labelled: Optional[tuple] = None) -> Dict[str, Any]:
    """n-grams and sentence examples of systems ``left`` and ``right`` (compare-mt's lists, ties ordered): the
    share ``(c1 + alpha) / (c1 + c2 + 2 alpha)`` of the n-grams' counts of the kind asked (matched, over- or
    under-produced), each listed with its matches (what compare-mt prints beside every kind); each example with its
    source where ``src_lines`` are given; ``labelled``: the reference's and the systems' word labels, whose
    n-grams are compared instead of the words'."""
    if labelled is None:
        counted = [ngram_counts(ref, outs[k], settings.min_order, settings.max_order) for k in (left, right)]
    else:  # n-grams of labels
        counted = [labelled_ngram_counts(ref, outs[k], labelled[0], labelled[1][k], settings.min_order,
                                         settings.max_order) for k in (left, right)]
    kind = ("match", "over", "under").index(settings.kind)
    c1, c2 = counted[0][kind], counted[1][kind]
    m1, m2 = counted[0][0], counted[1][0]
    alpha = settings.alpha
    grams = {g: ((c1[g] + alpha) / (c1[g] + c2[g] + 2 * alpha), m1[g], m2[g], c1[g], c2[g])
             for g in c1.keys() | c2.keys()}
    ranked = sorted(grams.items(), key=lambda item: (-item[1][0], -item[1][3], item[0]))
    reverse = sorted(grams.items(), key=lambda item: (item[1][0], -item[1][4], item[0]))
    measure, higher_is_better, scores = by
    differences = score_differences(ref, outs[left], outs[right], scores[left], scores[right],
                                    1.0 if higher_is_better else -1.0)

    def example(row: tuple) -> Dict[str, Any]:
        i = row[3]
        found = {"index": i, "scores": [row[1], row[2]], "reference": ref_lines[i],
                 "outputs": [outs_lines[left][i], outs_lines[right][i]]}
        if measure == "sentbleu":
            found["sentbleu"] = found["scores"]
        return found if src_lines is None else dict(found, source=src_lines[i])

    return {"systems": [left, right], "top": top, "examples_asked": examples,
            "examples_by": {"measure": measure, "higher_is_better": higher_is_better},
            "ngram_settings": settings._asdict(),
            "ngrams": {"left": [[" ".join(g), *v[:3]] for g, v in ranked[:top]],
                       "right": [[" ".join(g), *v[:3]] for g, v in reverse[:top]]},
            "examples": {"left": [example(r) for r in differences[:examples]],
                         "right": [example(r) for r in differences[-examples:]] if examples else []}}
