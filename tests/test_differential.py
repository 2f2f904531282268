"""Differential tests: evalpipe against the anchors' own code, on generated inputs that hunt for edges.

Each property is compared with the code that really computes it:

* correlations -- scipy's ``pearsonr`` / ``spearmanr`` / ``kendalltau`` (variants b and c), row by row under
  MT Metrics Eval's averaging rules, restated here from its ``stats.AverageCorrelation`` (commit 68a481ae; no
  MTME code): the packed ``num_sys x items`` vector gives one row (none), each system's row (sys) or each
  item's column (item); positions whose human score is None leave the row; rows left with fewer than two
  positions are skipped; Pearson and Spearman of a row whose human or metric scores are all equal
  (``a == a[0]`` everywhere, so never for NaN) are NaN; NaN row values are dropped from the plain mean (or
  count as 0 with ``replace_nans_with_zeros``); 0 when no row is left.  Kendall 23 / acc23 and tau-b with
  a tie threshold: the pair-counting definitions of Deutsch et al. (2023), pair by pair.
* BLEU, chrF, chrF++ and TER with every option -- sacrebleu, sentence by sentence and for the corpus
  (evalpipe's corpus path is the batched C kernels).
* Latency, ``simuleval`` convention -- SimulEval 1.1.4's scorers, per sentence, to the bit.
* Latency, ``iwslt2020`` convention -- the transcription of the 2020 server's scorer (fairseq 12d5e6ff) in
  ``tests/test_iwslt2020_scorer.py``.

The strategies make degenerate data on purpose: constant rows (every human score of an item equal, every
metric score equal), one system, two systems, ties everywhere, NaN and missing scores, empty hypotheses and
references, one-word sources, agents that write after the source has ended or write nothing.  Profiles
(``tests/conftest.py``): ``ci`` by default, ``long`` with ``HYPOTHESIS_PROFILE=long``.
"""
from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
import sacrebleu
from hypothesis import example, given
from hypothesis import strategies as st
from scipy import stats

from evalpipe import load_metric
from evalpipe.errors import OptionError
from evalpipe.meta.correlation import average_correlation, kendall_with_ties_opt
from evalpipe.simul.records import records_input
from evalpipe.sufficient_stats import SimulHypothesis, sum_stats

# -- correlations ------------------------------------------------------------------------------------------

TIED = st.sampled_from([0.0, 1.0, 2.0, -1.0, -25.0])
SPREAD = st.floats(-100, 100, allow_nan=False, allow_infinity=False)


@st.composite
def packed_scores(draw, nan=True, none=True):
    """(human scores with None, metric scores, num_sys): 1-4 systems x 1-7 items, values from a few tied ones
    or spread out; whole items or systems made constant at times."""
    num_sys, items = draw(st.integers(1, 4)), draw(st.integers(1, 7))
    value = draw(st.sampled_from([TIED, SPREAD, st.one_of(TIED, SPREAD)]))
    human = st.one_of(st.none(), value) if none and draw(st.booleans()) else value
    metric = st.one_of(value, st.just(math.nan)) if nan and draw(st.booleans()) else value
    gold = draw(st.lists(human, min_size=num_sys * items, max_size=num_sys * items))
    scores = draw(st.lists(metric, min_size=num_sys * items, max_size=num_sys * items))
    for vector in (gold, scores):
        if draw(st.booleans()):  # one item constant over every system
            item, v = draw(st.integers(0, items - 1)), draw(TIED)
            for s in range(num_sys):
                vector[s * items + item] = v
        if draw(st.booleans()):  # one system constant over every item
            system, v = draw(st.integers(0, num_sys - 1)), draw(TIED)
            vector[system * items:(system + 1) * items] = [v] * items
    return gold, scores, num_sys


def mtme_rows(gold, metric, num_sys, average_by):
    g = np.array(gold, dtype=object).reshape(num_sys, -1)
    m = np.array(metric, dtype=object).reshape(num_sys, -1)
    if average_by == "none":
        g, m = g.reshape(1, -1), m.reshape(1, -1)
    elif average_by == "item":
        g, m = g.T, m.T
    for rg, rm in zip(g, m):
        kept = [(a, b) for a, b in zip(rg, rm) if a is not None]
        if len(kept) >= 2:
            yield [float(a) for a, _ in kept], [float(b) for _, b in kept]


def mtme_average(row_value, gold, metric, num_sys, average_by, replace_nans_with_zeros, constant_is_nan):
    total, n = 0.0, 0
    for y, x in mtme_rows(gold, metric, num_sys, average_by):
        if constant_is_nan and (all(v == y[0] for v in y) or all(v == x[0] for v in x)):
            value = math.nan
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = float(row_value(y, x))
        if not math.isnan(value):
            total += value
            n += 1
        elif replace_nans_with_zeros:
            n += 1
    return (total / n, n) if n else (0.0, 0)


def pair_counts(y, x, epsilon):
    con = dis = x_tie = y_tie = both = 0
    for i in range(len(y)):
        for j in range(i + 1, len(y)):
            dy, dx = y[i] - y[j], x[i] - x[j]
            tx, ty = abs(dx) <= epsilon, dy == 0
            if tx and ty:
                both += 1
            elif tx:
                x_tie += 1
            elif ty:
                y_tie += 1
            elif (dx > 0) == (dy > 0):
                con += 1
            else:
                dis += 1
    return con, dis, x_tie, y_tie, both


def kendall_by_pairs(y, x, variant, epsilon):
    """Kendall 23, acc23 (Deutsch et al., 2023) and tau-b with a metric tie threshold, from pair counts."""
    con, dis, x_tie, y_tie, both = pair_counts(y, x, epsilon)
    total = con + dis + x_tie + y_tie + both
    if variant == "23":
        return (con + both - dis - x_tie - y_tie) / total
    if variant == "acc23":
        return (con + both) / total
    if total in (x_tie + both, y_tie + both):
        return math.nan
    return (con - dis) / math.sqrt(total - x_tie - both) / math.sqrt(total - y_tie - both)


SCIPY = {"pearson": lambda y, x: stats.pearsonr(y, x).statistic,
         "spearman": lambda y, x: stats.spearmanr(y, x).statistic,
         "kendall-b": lambda y, x: stats.kendalltau(y, x, variant="b").statistic,
         "kendall-c": lambda y, x: stats.kendalltau(y, x, variant="c").statistic}


def close(got, want):
    return got == pytest.approx(want, rel=1e-9, abs=1e-12)


@given(packed_scores(), st.sampled_from(sorted(SCIPY)), st.sampled_from(["none", "sys", "item"]), st.booleans())
# found here: no row left crashed Kendall's batched path; NaN scores gave numbers (Kendall counted NaN pairs as
# discordant, Pearson clipped NaN to 1.0); Pearson of tiny differences underflowed to NaN, then 1.0
@example(([0.0], [0.0], 1), "kendall-b", "none", False)
@example(([0.0, 1.0], [0.0, math.nan], 1), "kendall-b", "none", False)
@example(([0.0, 1.0, 2.0], [0.0, math.nan, 1.0], 1), "pearson", "none", True)
@example(([0.0] * 11 + [5.804673745035624e-290], [0.0] * 10 + [1.0, 0.0], 3), "pearson", "none", False)
def test_correlations_equal_scipy_under_mtme_averaging(case, name, average_by, replace_nans_with_zeros):
    gold, metric, num_sys = case
    statistic, _, variant = name.partition("-")
    options = {"variant": variant} if variant else {}
    want = mtme_average(SCIPY[name], gold, metric, num_sys, average_by, replace_nans_with_zeros,
                        constant_is_nan=statistic in ("pearson", "spearman"))
    got = average_correlation(gold, metric, num_sys, average_by, statistic, replace_nans_with_zeros, **options)
    assert got[1] == want[1] and close(got[0], want[0]), (got, want)


@given(packed_scores(nan=False), st.sampled_from(["23", "acc23", "b"]), st.sampled_from(["none", "sys", "item"]),
       st.sampled_from([0.0, 0.0, 0.5, 1.0, 30.0]))
def test_kendall_variants_with_ties_equal_their_pair_definition(case, variant, average_by, epsilon):
    gold, metric, num_sys = case
    want = mtme_average(lambda y, x: kendall_by_pairs(y, x, variant, epsilon), gold, metric, num_sys, average_by,
                        False, constant_is_nan=False)
    got = average_correlation(gold, metric, num_sys, average_by, "kendall", variant=variant, epsilon=epsilon)
    assert got[1] == want[1] and close(got[0], want[0]), (got, want)
    accuracy = average_correlation(gold, metric, num_sys, average_by, "accuracy")
    acc23 = mtme_average(lambda y, x: kendall_by_pairs(y, x, "acc23", 0.0), gold, metric, num_sys, average_by,
                         False, constant_is_nan=False)
    assert accuracy[1] == acc23[1] and close(accuracy[0], acc23[0])


@given(packed_scores(nan=False), st.sampled_from(["23", "acc23"]), st.sampled_from(["none", "sys", "item"]))
def test_tie_calibration_is_the_best_threshold_by_pairs(case, variant, average_by):
    """The calibrated tau is the highest average tau over every candidate threshold (0 and each pair's metric
    difference), and its epsilon gives that tau."""
    gold, metric, num_sys = case
    tau, epsilon = kendall_with_ties_opt(gold, metric, num_sys, average_by, variant)
    rows = list(mtme_rows(gold, metric, num_sys, average_by))
    if not rows:
        assert (tau, epsilon) == (0.0, 0.0)
        return
    candidates = {0.0} | {abs(x[i] - x[j]) for _, x in rows for i in range(len(x)) for j in range(i + 1, len(x))}
    best = max(np.mean([kendall_by_pairs(y, x, variant, e) for y, x in rows]) for e in candidates)
    assert close(tau, best) and epsilon in candidates
    assert close(np.mean([kendall_by_pairs(y, x, variant, epsilon) for y, x in rows]), best)


# -- sacrebleu ----------------------------------------------------------------------------------------------

WORDS = st.sampled_from("the a cat dog sat on the mat . , ! ? ' \" - ( ) 3.5 1,000 Haus Straße É é ß 猫 が 中文 🙂 "
                        "x y z don't U.S. e-mail &amp; a-b".split() + ["", " ", "\t"])
SENTENCE = st.lists(WORDS, min_size=0, max_size=10).map(" ".join)


@st.composite
def corpus(draw):
    """(hypotheses, reference streams): 1-12 segments, 1-3 references, empty and blank lines included."""
    n, k = draw(st.integers(1, 12)), draw(st.integers(1, 3))
    hyps = draw(st.lists(SENTENCE, min_size=n, max_size=n))
    refs = [draw(st.lists(SENTENCE, min_size=n, max_size=n)) for _ in range(k)]
    if draw(st.booleans()):  # hypotheses that copy a reference, in part
        hyps = [r if draw(st.booleans()) else h for h, r in zip(hyps, refs[0])]
    return hyps, refs


BLEU_OPTIONS = st.fixed_dictionaries({}, optional={
    "tokenize": st.sampled_from(["13a", "none", "intl", "char", "zh"]), "lowercase": st.booleans(),
    "smooth_method": st.sampled_from(["exp", "floor", "add-k", "none"]), "smooth_value": st.sampled_from([0.01, 0.1, 1, 2]),
    "max_ngram_order": st.integers(1, 6), "effective_order": st.booleans()})
CHRF_OPTIONS = st.fixed_dictionaries({}, optional={
    "char_order": st.integers(0, 8), "word_order": st.integers(0, 3), "beta": st.integers(0, 4),
    "lowercase": st.booleans(), "whitespace": st.booleans(), "eps_smoothing": st.booleans()})
TER_OPTIONS = st.fixed_dictionaries({}, optional={
    "normalized": st.booleans(), "no_punct": st.booleans(), "asian_support": st.booleans(),
    "case_sensitive": st.booleans()})
METRICS = st.one_of(st.tuples(st.just("bleu"), BLEU_OPTIONS), st.tuples(st.just("chrf"), CHRF_OPTIONS),
                    st.tuples(st.just("ter"), TER_OPTIONS))
SACREBLEU = {"bleu": sacrebleu.BLEU, "chrf": sacrebleu.CHRF, "ter": sacrebleu.TER}


@given(corpus(), METRICS)
# found here: chrF with beta 0 or char_order 0 was refused, and char_order 0 crashed the C block kernel
@example(([""], [[""]]), ("chrf", {"beta": 0}))
@example((["the cat sat", ""], [["the cat", "a"]]), ("chrf", {"char_order": 0, "word_order": 2}))
@example((["the cat sat", ""], [["the cat", "a"]]), ("chrf", {"char_order": 0, "word_order": 0}))
def test_text_metrics_equal_sacrebleu_for_every_option(data, spec):
    hyps, refs = data
    name, options = spec
    if name == "chrf" and options.get("char_order", 6) + options.get("word_order", 0) == 0:
        with pytest.raises(OptionError, match="both 0"):  # sacrebleu answers 0.0 for nothing counted
            load_metric(name, **options)
        return
    ignored = {"smooth_value": name == "bleu" and options.get("smooth_method", "exp") not in ("floor", "add-k"),
               "asian_support": name == "ter" and not (options.get("normalized") or options.get("no_punct"))}
    ignored = [key for key, yes in ignored.items() if yes and options.get(key) not in (None, False)]
    if ignored:  # an option sacrebleu ignores in this combination is refused: scored without it, sacrebleu agrees
        with pytest.raises(OptionError, match=f"{ignored[0]} acts only with"):
            load_metric(name, **options)
        without = {k: v for k, v in options.items() if k not in ignored}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert SACREBLEU[name](**options).corpus_score(hyps, refs).score == \
                SACREBLEU[name](**without).corpus_score(hyps, refs).score
        return
    ours = load_metric(name, **options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = SACREBLEU[name](**options)
        want_corpus = theirs.corpus_score(hyps, refs).score
        want_sentences = [theirs.sentence_score(h, [r[i] for r in refs]).score for i, h in enumerate(hyps)]
    rows = ours.corpus_stats(hyps, refs)
    if name == "ter" and len(refs) > 1:  # average reference lengths: summed exactly here, left to right there
        assert ours.score(sum_stats(rows, ours.num_stats)) == pytest.approx(want_corpus, rel=1e-13, abs=0)
    else:
        assert ours.score(sum_stats(rows, ours.num_stats)) == want_corpus
    assert rows == [ours.stats(h, [r[i] for r in refs]) for i, h in enumerate(hyps)]
    assert [ours.score(row) for row in rows] == want_sentences


# -- latency: SimulEval 1.1.4 -------------------------------------------------------------------------------

LATENCY = ["ap", "al", "dal", "laal", "start_offset", "end_offset"]


@st.composite
def simul_records(draw):
    """SimulEval records: text sources of 1-30 words (one-word ones often) or speech of 1-9000 ms; delays
    non-decreasing, from the first unit to the whole source (agents that wait for the end, write at once,
    or write long after the source ended: every delay equal to |X|); references of 1-40 words."""
    records = []
    for index in range(draw(st.integers(1, 8))):
        speech = draw(st.booleans())
        src = draw(st.floats(1.0, 9000.0).map(lambda v: round(v, 3))) if speech else \
            draw(st.one_of(st.just(1), st.integers(1, 30)))
        low = 0.0 if speech else 1
        point = st.floats(low, src) if speech else st.integers(low, src)
        kind = draw(st.sampled_from(["any", "at_end", "at_once"]))
        count = draw(st.integers(1, 40))
        if kind == "at_end":
            delays = [src] * count
        elif kind == "at_once":
            delays = [draw(point)] * count
        else:
            delays = sorted(draw(st.lists(point, min_size=count, max_size=count)))
        records.append({"index": index, "source_length": src, "delays": delays, "elapsed": delays,
                        "prediction": " ".join("p" for _ in delays), "prediction_length": len(delays),
                        "reference": " ".join("w" for _ in range(draw(st.integers(1, 40))))})
    return records


@pytest.fixture(scope="module")
def simuleval():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from simuleval.evaluator.instance import LogInstance
        from simuleval.evaluator.scorers import latency_scorer as ls
    return LogInstance, {"ap": ls.APScorer, "al": ls.ALScorer, "dal": ls.DALScorer, "laal": ls.LAALScorer,
                         "start_offset": ls.StartOffsetScorer, "end_offset": ls.EndOffsetScorer}


@given(records=simul_records())
def test_latency_equals_simuleval_per_sentence(simuleval, records):
    LogInstance, scorers = simuleval
    data = records_input(records)
    instances = {i: LogInstance(json.dumps(r)) for i, r in enumerate(records)}
    for name in LATENCY:
        scorer = scorers[name]()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            corpus_value = scorer(instances)
        metric = load_metric(name)
        rows = metric.corpus_stats(data.hypotheses, data.references)
        assert [row[0] for row in rows] == [ins.metrics[scorer.metric_name] for ins in instances.values()], name
        assert metric.score(sum_stats(rows, metric.num_stats)) == pytest.approx(corpus_value, rel=1e-12, abs=1e-12)


# -- latency: the IWSLT 2020 server -------------------------------------------------------------------------

@st.composite
def server_steps(draw):
    """(steps of every target token and of the final </s>, |X|) as the 2020 server records them: a step is the
    source words served so far, |X| + 1 once </s> was served; agents that write before reading, write
    nothing but </s>, stop early, or go on writing after the source ended."""
    n = draw(st.one_of(st.just(1), st.integers(1, 20)))
    tokens = draw(st.integers(0, 25))
    steps = sorted(draw(st.lists(st.integers(0, n + 1), min_size=tokens, max_size=tokens)))
    if draw(st.booleans()):  # written after the source ended
        steps += [n + 1] * draw(st.integers(1, 6))
    final = draw(st.integers(max(steps[-1] if steps else 0, 0), n + 1))
    return steps + [final], n


@given(st.lists(server_steps(), min_size=1, max_size=6))
def test_iwslt2020_convention_equals_the_2020_scorer(sentences):
    from test_iwslt2020_scorer import scorer_2020

    steps, lengths = [s for s, _ in sentences], [n for _, n in sentences]
    hyps = [SimulHypothesis([min(max(d, 1), n) for d in s[:-1]], n, text=" ".join("w" for _ in s[:-1]),
                            server_delays=s) for s, n in sentences]
    want = scorer_2020(steps, lengths)
    for name, value in zip(("al", "ap", "dal"), want):
        metric = load_metric(name, convention="iwslt2020")
        rows = metric.corpus_stats(hyps, [[" ".join("w" for _ in range(n)) for n in lengths]])
        # float32 there: rounding errors of sums of terms up to |X| + 1, so the tolerance scales with |X|
        tolerance = 1e-6 * (max(lengths) + 1)
        assert metric.score(sum_stats(rows, metric.num_stats)) == pytest.approx(value, rel=1e-6, abs=tolerance), name
