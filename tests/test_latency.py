"""Latency plugins against SimulEval 1.1.4 (installed by the test extra) on real wait-k logs,
the IWSLT 2020 convention, the anchor defects we do not copy, and the protocol form."""
from __future__ import annotations

import io
import json
import random
import warnings

import pytest

from conftest import DATA
from evalpipe import load_metric
from evalpipe.protocol.loop import serve
from evalpipe.evaluators.formulas.word_counts import word_counts
from evalpipe.engines import Job, make_engine
from evalpipe.registry import MetricSpec
from evalpipe.simul.records import record_hypothesis, records_input
from evalpipe.sufficient_stats import OptionError, SimulHypothesis, sum_stats
from evalpipe.sufficient_stats.vectors import parse_stats


def H(delays, source_length):
    """A simultaneous hypothesis from a delays string."""
    return SimulHypothesis([float(d) if "." in d else int(d) for d in delays.split()], source_length)


def record_stats(metric, record):
    """One SimulEval record through the exact per-segment path."""
    return metric.stats(record_hypothesis(record), [record["reference"]] if "reference" in record else [])

LOGS = DATA / "simul" / "iwslt17-dev2010.de-en" / "derived"


@pytest.fixture(scope="module")
def logs():
    return {p.stem.split(".")[0]: [json.loads(x) for x in open(p, encoding="utf-8")]
            for p in sorted(LOGS.glob("wait*.instances.jsonl"))[:4]}


def simuleval_scorers():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from simuleval.evaluator.instance import LogInstance
        from simuleval.evaluator.scorers import latency_scorer as ls
    return LogInstance, {"ap": ls.APScorer, "al": ls.ALScorer, "dal": ls.DALScorer, "laal": ls.LAALScorer,
                         "start_offset": ls.StartOffsetScorer, "end_offset": ls.EndOffsetScorer}


@pytest.mark.parametrize("name", ["ap", "al", "dal", "laal", "start_offset", "end_offset"])
def test_per_sentence_values_equal_simuleval(logs, name):
    LogInstance, scorers = simuleval_scorers()
    metric = load_metric(name)
    for records in logs.values():
        instances = {i: LogInstance(json.dumps(r)) for i, r in enumerate(records)}
        scorer = scorers[name]()
        corpus = scorer(instances)
        rows = [record_stats(metric, r) for r in records]
        assert [row[0] for row in rows] == [ins.metrics[scorer.metric_name] for ins in instances.values()]
        assert metric.score(sum_stats(rows)) == pytest.approx(corpus, rel=1e-15, abs=1e-15)


def test_atd_equals_simuleval_on_logs(logs):
    LogInstance, _ = simuleval_scorers()
    from simuleval.evaluator.scorers.latency_scorer import ATDScorer

    metric = load_metric("atd", unit="speech")  # SimulEval treats a log's input as speech
    records = logs["wait3"][:200]
    expected = ATDScorer()({i: LogInstance(json.dumps(r)) for i, r in enumerate(records)})
    assert metric.score(sum_stats([record_stats(metric, r) for r in records])) == pytest.approx(expected, rel=1e-12)


def test_engines_run_the_batched_path_and_agree_with_the_exact_path(logs):
    records = [r for rs in logs.values() for r in rs]
    data = records_input(records)
    for name in ("al", "ap", "dal", "laal"):
        metric = load_metric(name)
        exact = [record_stats(metric, r) for r in records]
        for engine in ("local", "pool"):
            with make_engine(engine, 2) as runner:
                assert runner.rows(Job(MetricSpec.of(name), data)) == exact, (name, engine)


def test_random_delays_equal_simuleval_to_the_bit():
    """Per-sentence AL / LAAL / DAL / AP / StartOffset / EndOffset of random text and speech-like
    delays (float source lengths, long sentences) equal SimulEval 1.1.4's, bit for bit."""
    LogInstance, scorers = simuleval_scorers()
    rng = random.Random(7)
    records = []
    for i in range(3000):
        src = rng.choice([rng.randint(1, 40), rng.uniform(500.0, 9000.0)])
        delays = sorted(rng.uniform(0, src * 1.2) for _ in range(rng.randint(1, 60)))
        records.append({"index": i, "source_length": src, "delays": delays, "elapsed": delays,
                        "prediction": " ".join("p" for _ in delays), "prediction_length": len(delays),
                        "reference": " ".join("w" for _ in range(rng.randint(1, 50)))})
    data = records_input(records)
    instances = {i: LogInstance(json.dumps(r)) for i, r in enumerate(records)}
    for name, scorer_class in scorers.items():
        scorer = scorer_class()
        scorer(instances)
        rows = load_metric(name).corpus_stats(data.hypotheses, data.references)
        assert [row[0] for row in rows] == [ins.metrics[scorer.metric_name] for ins in instances.values()], name


def test_batched_path_rejects_bad_delays_by_sentence():
    good = {"source_length": 5, "delays": [1, 2, 3], "reference": "a b c"}
    al = load_metric("al")
    for records, message in (([good, dict(good, delays=[1, 3, 2])], r"non-decreasing delays; sentence 2 has \[1, 3, 2\]"),
                             ([dict(good, delays=[1, float("nan")]), good], "finite delays; sentence 1")):
        hyps = [record_hypothesis(r) for r in records]  # the reader refuses these first (below)
        with pytest.raises(ValueError, match=message):
            al.corpus_stats(hyps, [[r["reference"] for r in records]])
        with pytest.raises(ValueError, match=r"line (1|2): expected (non-decreasing|finite) delays"):
            records_input(records, "log.jsonl")


def test_word_counts_equal_str_split():
    texts = ["a b  c", "", "  x", "y\t\x1cz ", "é ü x", "\U0001F600 b", "é\u3000ü\xa0x\u2003", "a\x85b",
             "«x»\u202fy\u205fz\u1680w", "x\u2028y\u2029z", "’“”—\xa0", "a\0 b", "\x0b\x0c\r\n"]
    assert word_counts(texts).tolist() == [len(t.split()) for t in texts]
    assert word_counts(["a b", None]).tolist() == [2, 0]
    assert word_counts([]).tolist() == []


def wait_k(k, src_len, hyp_len):
    return [min(i + k, src_len) for i in range(hyp_len)]


def test_conventions_disagree_on_the_worked_example():
    """wait-3, 10-word source, 10-word hypothesis and reference (README's worked example)."""
    delays = " ".join(map(str, wait_k(3, 10, 10)))
    ref = " ".join(["w"] * 10)
    simul = load_metric("al")
    iwslt = load_metric("al", convention="iwslt2020")
    assert simul.score(simul.stats(H(delays, 10), [ref])) == 3.0
    assert iwslt.score(iwslt.stats(H(delays, 10), [ref])) == pytest.approx(28 / 11)
    ap_simul, ap_iwslt = load_metric("ap"), load_metric("ap", convention="iwslt2020")
    assert ap_simul.score(ap_simul.stats(H(delays, 10), [ref])) == 0.72  # 72 / (10 * 10)
    assert ap_iwslt.score(ap_iwslt.stats(H(delays, 10), [ref])) == 83 / 121  # (72 + 11) / (11 * 11)


def test_ap_above_one_is_documented_and_preventable():
    delays = " ".join(["5"] * 8)  # 8 words written after the whole 5-word source; reference has 4 words
    ap = load_metric("ap")
    assert ap.score(ap.stats(H(delays, 5), ["a b c d"])) == 2.0
    capped = load_metric("ap", target_length="max")
    assert capped.score(capped.stats(H(delays, 5), ["a b c d"])) == 1.0


def test_missing_reference_is_an_error_not_length_one():
    for name in ("al", "ap", "laal"):
        with pytest.raises(ValueError, match="needs a reference"):
            load_metric(name).stats(H("1 2 3", 3), [""])
    assert load_metric("al", target_length="hypothesis").stats(H("1 2 3", 3), [""])[1] == 1
    assert load_metric("dal").stats(H("1 2 3", 3), [""])[1] == 1  # DAL does not use the reference


def test_reference_length_counts_words():
    al = load_metric("al")
    assert al.stats(H("1 2 3", 3), ["a  b   c"]) == al.stats(H("1 2 3", 3), ["a b c"])


def test_empty_hypothesis_is_skipped_and_counted():
    al = load_metric("al")
    rows = [al.stats(H("", 3), ["a b c"]), al.stats(H("1 2 3", 3), ["a b c"])]
    assert rows[0] == [0, 0, 1]
    total = sum_stats(rows)
    assert total[1:] == [1, 1] and al.score(total) == al.score(rows[1])


def test_all_empty_is_a_clear_error():
    al = load_metric("al")
    with pytest.raises(ValueError, match="no sentence has both a hypothesis and a source"):
        al.score(sum_stats([al.stats(H("", 3), ["a"]), al.stats(H("", 2), ["b"])]))


def test_computation_aware_differs_when_elapsed_differs():
    record = {"delays": [1000, 2000, 3000], "elapsed": [1500, 2900, 4100], "source_length": 3000,
              "reference": "a b c"}
    plain = load_metric("al", unit="speech")
    aware = load_metric("al", unit="speech", computation_aware=True)
    assert record_stats(plain, record)[0] != record_stats(aware, record)[0]
    with pytest.raises(OptionError, match="computation_aware needs unit=speech"):
        load_metric("al", computation_aware=True)


def test_protocol_form_and_quality_latency_combination():
    data = b"SCORE ||| 10 ||| w w w w w w w w w w ||| 3 4 5 6 7 8 9 10 10 10\nSCORE ||| 10 ||| w ||| 3 x\n"
    out = io.BytesIO()
    serve(load_metric("al"), io.BytesIO(data), out)
    first, second = out.getvalue().decode().splitlines()
    assert parse_stats(first) == [3, 1, 0]
    assert second.startswith("ERROR ||| ") and "DELAYS: expected a number, got 'x'" in second
    combo = load_metric("bleu-0.1*al")
    text = "the cat sat on the mat"
    request = f"SCORE ||| 6 ||| {text} ||| 2 3 4 5 6 6 ||| {text}\n"
    out = io.BytesIO()
    serve(combo, io.BytesIO(request.encode()), out)
    stats_line = out.getvalue().decode().strip()
    out = io.BytesIO()
    serve(combo, io.BytesIO(f"EVAL ||| {stats_line}\n".encode()), out)
    score_line = out.getvalue().decode().strip()
    al = load_metric("al").stats(H("2 3 4 5 6 6", 6), [text])[0]
    assert float(score_line) == pytest.approx(100.0 - 0.1 * al)
    assert len(parse_stats(stats_line)) == 13


def test_score_corpus_reads_instances_logs(logs):
    from click.testing import CliRunner

    from evalpipe.cli.score_corpus import score_corpus

    LogInstance, scorers = simuleval_scorers()
    path = str(LOGS / "wait3.instances.jsonl")
    result = CliRunner().invoke(score_corpus, ["--instances", path, "-f", "json"])
    assert result.exit_code == 0, result.output
    scores = {r["metric"]: r["score"] for r in json.loads(result.stdout)["results"]}
    records = logs["wait3"]
    import sacrebleu

    assert scores["bleu"] == sacrebleu.BLEU().corpus_score([r["prediction"] for r in records],
                                                            [[r["reference"] for r in records]]).score
    instances = {i: LogInstance(json.dumps(r)) for i, r in enumerate(records)}
    for name in ("ap", "al", "dal", "laal"):
        assert scores[name] == pytest.approx(scorers[name]()(instances), rel=1e-15)


@pytest.mark.parametrize("name,options", [("al", {}), ("laal", {}), ("dal", {}), ("ap", {"target_length": "max"}),
                                          ("al", {"convention": "iwslt2020"}),
                                          ("al", {"unit": "speech", "computation_aware": True}),
                                          ("atd", {})])
def test_corpus_totals_equal_the_sum_of_rows(name, options):
    """The column-wise totals (what engines sum) equal the exact sum of the per-sentence rows,
    with empty hypotheses mixed in, and both paths reject a bad source length alike."""
    rng = random.Random(7)
    hyps, refs = [], []
    for i in range(300):
        n = 0 if i % 17 == 0 else rng.randint(1, 30)
        src = rng.randint(1, 40)
        delays = sorted(rng.randint(1, src) for _ in range(n))
        hyps.append(SimulHypothesis(delays, src, [d * 250.0 + i for d in delays]))
        refs.append(" ".join("w" for _ in range(rng.randint(1, 30))))
    metric = load_metric(name, **options)
    expected = sum_stats(metric.corpus_stats(hyps, [refs]), metric.num_stats)
    assert metric.corpus_partial(hyps, [refs]).finish() == expected
    if name == "atd":  # ATD has no batched path and ignores the source length of an empty hypothesis
        return
    bad = hyps[:16] + [SimulHypothesis([], float("nan"))]
    with pytest.raises(Exception) as rows_error:
        metric.corpus_stats(bad, [refs[:17]])
    with pytest.raises(type(rows_error.value), match="source length"):
        metric.corpus_partial(bad, [refs[:17]])


def test_layout_shared_through_the_input_is_keyed_and_stays_in_process():
    """AL, LAAL, DAL and AP of one input share its delay layout (kept in the input's hypothesis
    cache); a different reference stream or delay kind gets its own, and pickling leaves it behind."""
    import pickle

    rng = random.Random(3)
    hyps = []
    for i in range(200):
        delays = sorted(rng.randint(1, 20) for _ in range(rng.randint(1, 15)))
        hyps.append(SimulHypothesis(delays, 20, [d * 300.0 + i for d in delays]))
    refs_a = [" ".join("w" for _ in range(rng.randint(1, 25))) for _ in hyps]
    refs_b = [" ".join("w" for _ in range(rng.randint(1, 25))) for _ in hyps]
    data = records_input([{"delays": h.delays, "source_length": h.source_length, "elapsed": h.elapsed,
                           "reference": r} for h, r in zip(hyps, refs_a)])
    for name, options in (("al", {}), ("laal", {}), ("dal", {}), ("ap", {}),
                          ("al", {"unit": "speech", "computation_aware": True}), ("al", {})):
        metric = load_metric(name, **options)
        for refs in (refs_a, refs_b, refs_a):  # the same hypotheses object with either stream
            expected = sum_stats(metric.corpus_stats(list(hyps), [refs]), 3)
            assert metric.corpus_partial(data.hypotheses, [refs]).finish() == expected
        assert data.partial(metric).finish() == sum_stats(metric.corpus_stats(list(hyps), [refs_a]), 3)
    layouts = [key for key in data.hypotheses.cache if key[0] == "latency"]
    assert len(layouts) == 6  # three stream objects (refs_a, refs_b, the input's own copy) x two delay kinds
    assert not pickle.loads(pickle.dumps(data)).hypotheses.cache
