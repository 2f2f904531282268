"""Short-form simultaneous evaluation against its anchors, run here:

* OmniSTEval 0.1.10's ``shortform`` (its CLI in a subprocess on real logs -- the shared wait-k logs and a log
  of evalpipe's own server -- and its ``evaluate_instances`` in process on Hypothesis-generated logs): every
  score equal to its printed decimals (scores.tsv byte for byte) or to 1e-9, every warning it logs raised;
* SimulEval 1.1.4's NumChunks, RTF, Discontinuity* and its ``--eval-latency-unit char|spm`` (a sentencepiece
  model trained here on real text), per sentence to the bit.
"""
from __future__ import annotations

import json
import logging
import math
import os
import subprocess
import sys
import warnings
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from evalpipe import load_metric
from evalpipe.engines.local import LocalEngine
from evalpipe.errors import InputError, OptionError
from evalpipe.inputs import SimulPairs
from evalpipe.scoring import shortform
from evalpipe.simul.records import records_input
from evalpipe.sufficient_stats import SimulHypothesis, sum_stats

ROOT = Path(__file__).resolve().parents[1]
LOGS = ROOT / "tests" / "data" / "simul" / "iwslt17-dev2010.de-en" / "derived"
BIN = Path(sys.executable).parent
SHARED_TED = ROOT.parent / "shared" / "data" / "wmt21.tedtalks" / "references"


def _env():
    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)
    return env


def _run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=300, env=_env(), **kw)


# -- OmniSTEval on real logs, through both command lines -------------------------------------------------------

def _omnisteval_tsv(log, ref, tmp_path, char=False):
    out = tmp_path / "omni"
    done = _run([str(BIN / "omnisteval"), "shortform", "--hypothesis_file", str(log), "--ref_sentences_file", str(ref),
                 "--char_level" if char else "--word_level", "--output_folder", str(out)])
    assert done.returncode == 0, done.stderr
    return (out / "scores.tsv").read_text(encoding="utf-8"), done.stderr


def _references(log, path):
    refs = [json.loads(line)["reference"].strip() for line in open(log, encoding="utf-8") if line.strip()]
    path.write_text("\n".join(refs) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("k", [1, 3, 10])
def test_shared_wait_k_logs_equal_omnisteval_scores_tsv(k, tmp_path):
    log = LOGS / f"wait{k}.instances.jsonl"
    ref = _references(log, tmp_path / "ref.txt")
    theirs, their_log = _omnisteval_tsv(log, ref, tmp_path)
    ours = _run([str(BIN / "evalpipe"), "simul", "score", str(log), "-r", str(ref), "-f", "tsv", "-w", "4",
                 "--output", str(tmp_path / "ours")])
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == theirs
    assert (tmp_path / "ours" / "scores.tsv").read_text(encoding="utf-8") == theirs
    for warning in ("computation-aware emission timestamps", "already contain 'reference'"):
        assert (warning in their_log) == (warning.split("'")[0].lower() in ours.stderr.lower()
                                          or "carry 'reference'" in ours.stderr), warning


def test_evalpipes_own_server_log_equals_omnisteval(tmp_path):
    run = _run([str(BIN / "evalpipe"), "simul", "run", "--demo", "--output", str(tmp_path / "run"), "-f", "json"])
    assert run.returncode == 0, run.stderr
    log = tmp_path / "run" / "instances.log"
    ref = _references(log, tmp_path / "ref.txt")
    theirs, _ = _omnisteval_tsv(log, ref, tmp_path)
    ours = _run([str(BIN / "evalpipe"), "simul", "score", str(log), "-r", str(ref), "-f", "tsv", "-w", "4"])
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == theirs
    assert "YAAL (CA)" in theirs  # the server records wall-clock elapsed times: both report the CA variants


# -- OmniSTEval in process on generated logs ----------------------------------------------------------------

WORDS = ["der", "Hund", "läuft", "schnell", "你好", "世界", "猫", "ﬁne", "Ｔｅｓｔ", "e\u0301t\u00e9", "a", "zu"]


@st.composite
def shortform_logs(draw):
    """SimulEval logs: text (1-30 words) or speech (ms) sources, one-word ones often; agents that write before
    reading (delay 0), only after the source ends (every delay |X|), at once, or nothing; CJK, NFKC-changing and
    combining-accent words; with elapsed times (>= the delays) on speech logs, sometimes with a large gap."""
    speech = draw(st.booleans())
    records = []
    for index in range(draw(st.integers(1, 7))):
        src = draw(st.floats(1.0, 9000.0).map(lambda v: round(v, 3))) if speech else \
            draw(st.one_of(st.just(1), st.just(0), st.integers(1, 30)))  # empty, one-word and longer sources
        point = st.floats(0.0, src) if speech else st.integers(0, src)
        kind = draw(st.sampled_from(["any", "at_end", "at_once", "nothing", "before_reading"]))
        count = 0 if kind == "nothing" else draw(st.integers(1, 25))
        if kind == "at_end":
            delays = [src] * count
        elif kind == "at_once":
            delays = [draw(point)] * count
        elif kind == "before_reading":
            delays = [0] * count
        else:
            delays = sorted(draw(st.lists(point, min_size=count, max_size=count)))
        words = draw(st.lists(st.sampled_from(WORDS), min_size=count, max_size=count))
        ref = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=30)))
        record = {"index": index, "source_length": src, "delays": delays, "prediction": " ".join(words),
                  "reference": ref}
        if speech:
            extra = draw(st.sampled_from([1.0, 150.0, 2500.0]))  # (all-zero elapsed times: not CA, on purpose)
            record["elapsed"] = [d + extra * (i + 1) for i, d in enumerate(delays)]
        records.append(record)
    return records, draw(st.booleans())


def _omnisteval(records, char, tmp_path_factory):
    from omnisteval.io import load_shortform_instances
    from omnisteval.scoring import evaluate_instances

    folder = tmp_path_factory.mktemp("log")
    log, ref = folder / "log.jsonl", folder / "ref.txt"
    log.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    ref.write_text("".join(r["reference"] + "\n" for r in records), encoding="utf-8")
    instances = load_shortform_instances(str(log), str(ref), "delays", "elapsed", char_level=char)
    captured = []
    handler = logging.Handler()
    handler.emit = lambda record: captured.append(record.getMessage())
    logger = logging.getLogger("omnisteval")
    logger.addHandler(handler)
    try:
        scores, empty, normalization = evaluate_instances(instances, is_longform=False)
    finally:
        logger.removeHandler(handler)
    return scores, empty, normalization, captured


@settings(max_examples=60, deadline=None)
@given(case=shortform_logs())
@example(case=([{"index": 0, "source_length": 0, "delays": [0, 0], "prediction": "a b", "reference": "a b"}], False))
@example(case=([{"index": 0, "source_length": 3, "delays": [], "prediction": "", "reference": "a"},
                {"index": 1, "source_length": 2, "delays": [2, 2], "prediction": "Ｔｅｓｔ 你好", "reference": "b"}], True))
def test_generated_logs_equal_omnisteval(case, tmp_path_factory):
    records, char = case
    theirs, their_empty, their_normalization, their_warnings = _omnisteval(records, char, tmp_path_factory)
    pairs = records_input(records)
    pairs = SimulPairs(pairs.hypotheses, [[r["reference"] for r in records]])
    ours = shortform.evaluate(pairs, LocalEngine(), options={"target_unit": "char"} if char else {})
    assert list(ours.scores) == [k for k in theirs if not (k.startswith("ca_") and not ours.scores.get("ca_yaal"))
                                 or k in ours.scores], (ours.scores, theirs)
    for key, value in ours.scores.items():
        expected = theirs[key]
        if math.isnan(expected):
            assert math.isnan(value), key
        else:
            assert value == pytest.approx(expected, rel=1e-9, abs=1e-9), key
    assert len(ours.empty) == int(their_empty[0].split(":")[1])
    assert [f"Instance {i} with reference '{r}' has an empty prediction." for i, r in ours.empty] == \
        [line for line in their_empty if line.startswith("Instance ")]
    lines = shortform.report_lines(ours, {"k": "v"}, 4, "x")
    assert [line for line in their_normalization] == lines[lines.index("Unicode Normalization Details") + 2:-1] \
        if their_normalization else "Unicode Normalization Details" not in lines
    for phrase in ("Unicode normalization issues", "CA-YAAL", "computation-aware emission timestamps"):
        assert any(phrase in w for w in their_warnings) == any(phrase in w for w in ours.warnings), phrase


# -- SimulEval's other scorers and units, per sentence ----------------------------------------------------------

@pytest.fixture(scope="module")
def simuleval():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from simuleval.evaluator import instance
        from simuleval.evaluator.scorers import latency_scorer as ls
    return instance, ls


@st.composite
def text_logs(draw):
    records = []
    for index in range(draw(st.integers(1, 8))):
        src = draw(st.one_of(st.just(1), st.integers(1, 30)))
        count = draw(st.integers(0, 30))
        delays = sorted(draw(st.lists(st.integers(0, src), min_size=count, max_size=count)))
        ref = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=30)))
        records.append({"index": index, "source_length": src, "delays": delays, "elapsed": [0] * count,
                        "prediction": " ".join(draw(st.sampled_from(WORDS)) for _ in delays), "reference": ref})
    return records


def _per_sentence(metric, records):
    data = records_input(records)
    rows = metric.corpus_stats(data.hypotheses, data.references)
    return [row[0] if row[1] else None for row in rows]


@given(records=text_logs())
def test_num_chunks_and_rtf_equal_simuleval_per_sentence(simuleval, records):
    instance, ls = simuleval
    logged = {i: instance.LogInstance(json.dumps(r)) for i, r in enumerate(records)}
    for name, scorer in (("num_chunks", ls.NumChunksScorer), ("rtf", ls.RTFScorer)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = [scorer().compute(ins) if ins.delays else None for ins in logged.values()]
        assert _per_sentence(load_metric(name), records) == expected, name


@pytest.fixture(scope="module")
def spm_model(tmp_path_factory):
    """A small sentencepiece model trained here on real text (WMT21 TED references; the shipped demo references
    without ../shared)."""
    sentencepiece = pytest.importorskip("sentencepiece")
    sources = sorted(SHARED_TED.glob("*.txt")) or [ROOT / "src" / "evalpipe" / "demo" / "newstest.ref.de"]
    text = tmp_path_factory.mktemp("spm") / "train.txt"
    text.write_text("".join(Path(p).read_text(encoding="utf-8") for p in sources) + " ".join(WORDS) + "\n",
                    encoding="utf-8")
    prefix = str(text.parent / "tiny")
    sentencepiece.SentencePieceTrainer.train(input=str(text), model_prefix=prefix, vocab_size=300,
                                             character_coverage=1.0, minloglevel=2)
    return prefix + ".model"


@settings(max_examples=40, deadline=None)
@given(records=text_logs(), unit=st.sampled_from(["char", "spm"]))
def test_target_units_equal_simuleval_per_sentence(simuleval, spm_model, records, unit):
    instance, ls = simuleval
    import sentencepiece

    processor = sentencepiece.SentencePieceProcessor(model_file=spm_model)
    logged = {}
    for i, r in enumerate(records):
        logged[i] = instance.LogInstance(json.dumps(r), latency_unit=unit)
        logged[i].set_target_spm_model(processor)
    options = {"target_unit": unit, **({"spm_model": spm_model} if unit == "spm" else {})}
    for name, scorer in (("al", ls.ALScorer), ("ap", ls.APScorer), ("laal", ls.LAALScorer)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = [scorer().compute(ins) if ins.delays else None for ins in logged.values()]
        assert _per_sentence(load_metric(name, **options), records) == expected, (name, unit)


class _Loader:
    def get_source_audio_path(self, index):
        return f"{index}.wav"


@given(segments=st.lists(st.lists(st.tuples(st.integers(0, 4000), st.integers(1, 900)), min_size=0, max_size=12),
                         min_size=1, max_size=6))
def test_speech_output_scorers_equal_simuleval(simuleval, segments):
    """Discontinuity*, EndOffset and RTF of speech outputs: SimulEval's own summarize() lays the segments out
    (soundfile's write stubbed), its scorers compute."""
    instance, ls = simuleval
    records, expected = [], {n: [] for n in ("discontinuity_sum", "discontinuity_ave", "discontinuity_num",
                                             "end_offset", "rtf")}

    class Probe(instance.SpeechOutputInstance):
        source_length = 5000.0
        wav_path = Path("unused.wav")

    for index, pairs in enumerate(segments):
        delays = sorted(d for d, _ in pairs)
        durations = [float(n) for _, n in pairs]
        ins = Probe.__new__(Probe)
        ins.index, ins.dataloader, ins.reference, ins.latency_unit = index, _Loader(), "", "word"
        ins.delays, ins.durations, ins.target_sample_rate = delays, durations, 100
        ins.prediction_list = [[0.0] * 3 for _ in delays]
        with mock.patch.object(instance, "soundfile", create=True):
            ins.summarize()
        for name, scorer in (("discontinuity_sum", ls.DiscontinuitySumScorer),
                             ("discontinuity_ave", ls.DiscontinuityAveScorer),
                             ("discontinuity_num", ls.DiscontinuityNumScorer), ("end_offset", ls.EndOffsetScorer),
                             ("rtf", ls.RTFScorer)):
            expected[name].append(scorer().compute(ins) if delays else None)
        records.append({"index": index, "source_length": 5000.0, "delays": delays, "durations": durations,
                        "prediction": "", "reference": "x"})
    for name, values in expected.items():
        options = {"unit": "speech"} if name in ("end_offset", "rtf") else {}
        assert _per_sentence(load_metric(name, **options), records) == values, name


# -- bad input -----------------------------------------------------------------------------------------------

def _log(tmp_path, records, name="log.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


GOOD = {"index": 0, "source_length": 4, "delays": [1, 2, 3], "prediction": "a b c", "reference": "a b c"}


@pytest.mark.parametrize("records, args, message", [
    ([GOOD, dict(GOOD, delays=[2, 1, 3])], [], r"log.jsonl, line 2: expected non-decreasing delays, got 2 then 1"),
    ([GOOD, dict(GOOD, delays=[1, 2])], [],
     r"log.jsonl, line 2: expected a delay for each word of the prediction \(3 words\), got 2 delays"),
    ([GOOD, {"index": 1, "source_length": 4, "prediction": "x", "reference": "y"}], [],
     r"line 2: expected a SimulEval instance with 'delays'"),
    ([GOOD, {k: v for k, v in GOOD.items() if k != "delays"}], ["--emission-cu-key", "delays"],
     r"line 2: expected a SimulEval instance with 'delays'"),
    ([dict(GOOD, emission=[1, 2, 3]), GOOD], ["--emission-cu-key", "emission"],
     r"line 2: expected the field 'emission' \(the delays field\)"),
    ([dict(GOOD, source_length=-1)], [], r"line 1: expected source_length to be a number, 0 or more, got -1"),
    ([GOOD], ["-o", "target_unit=spm"], r"target_unit=spm needs the sentencepiece model: -o spm_model=FILE"),
    ([GOOD], ["-o", "target_unit=spm", "-o", "spm_model=missing.model"], r"spm_model: missing.model: no such file"),
    ([GOOD], ["-o", "spm_model=x.model"], r"spm_model acts only with target_unit=spm"),
    ([GOOD], ["-o", "target_unit=syllable"], r"target_unit"),
    ([GOOD], ["-o", "lowercase=true"], r"-o: simul score takes tokenize"),
    ([dict(GOOD, reference="")], [], r"line 1: expected a reference \(the latency metrics count its length\)"),
    ([{k: v for k, v in GOOD.items() if k != "reference"}], [], r"has no 'reference' fields: give the references"),
    ([GOOD], ["--no-quality", "--no-latency"], r"--no-latency and --no-quality cannot go together"),
    ([GOOD], ["-f", "json", "-w", "3"], r"-w and -f json cannot go together"),
])
def test_bad_input_is_one_line(tmp_path, records, args, message):
    import re

    log = _log(tmp_path, records)
    done = _run([str(BIN / "evalpipe"), "simul", "score", "log.jsonl", *args], cwd=tmp_path)
    assert done.returncode != 0 and done.stdout == ""
    lines = [line for line in done.stderr.splitlines() if line.strip() and not line.startswith("Usage")
             and not line.startswith("Try ")]
    assert len(lines) == 1 and re.search(message, lines[0]), done.stderr
    assert log.exists()


def test_reference_count_mismatch_and_units_that_do_not_fit(tmp_path):
    log = _log(tmp_path, [GOOD, GOOD])
    (tmp_path / "ref.txt").write_text("one\n", encoding="utf-8")
    done = _run([str(BIN / "evalpipe"), "simul", "score", str(log), "-r", str(tmp_path / "ref.txt")])
    assert done.returncode == 2 and "has 1 lines and" in done.stderr
    speech = records_input([{"source_length": 900.0, "delays": [100.0, 200.0], "durations": [50.0, 60.0],
                             "reference": "你好"}])
    for name, options in (("al", {"target_unit": "char"}), ("al", {}), ("laal", {}), ("ap", {}), ("yaal", {})):
        with pytest.raises(InputError, match="this log has a speech output .durations.: its delays are when"):
            load_metric(name, **options).corpus_stats(speech.hypotheses, speech.references)
    with pytest.raises(InputError, match="discontinuity_sum needs a speech output"):
        load_metric("discontinuity_sum").corpus_stats([SimulHypothesis([1, 2], 3)], [])
    with pytest.raises(OptionError, match="the iwslt2020 convention counts words"):
        load_metric("al", convention="iwslt2020", target_unit="char")


def test_yaal_with_nothing_before_the_source_end_is_nan_with_a_warning(tmp_path):
    log = _log(tmp_path, [dict(GOOD, delays=[4, 4, 4])])
    done = _run([str(BIN / "evalpipe"), "simul", "score", str(log), "-f", "tsv", "-w", "4"])
    assert done.returncode == 0, done.stderr
    assert "YAAL (CU)\tnan" in done.stdout and "YAAL is undefined" in done.stderr
    assert "YAAL (CU): " in done.stderr and "yaal: yaal" not in done.stderr  # the metric named once
    corpus = records_input([dict(GOOD, delays=[4, 4, 4])])
    metric = load_metric("yaal")
    stats = sum_stats(metric.corpus_stats(corpus.hypotheses, corpus.references), metric.num_stats)
    assert stats == [0, 0, 1]


def test_server_cuts_hypotheses_by_target_unit_and_scores_as_simuleval(simuleval, tmp_path):
    """``simul run -o target_unit=char``: each character of the agent's words gets its own delay (SimulEval's
    char unit drops the spaces), the log's prediction is the characters joined, and /result's AL, LAAL and AP
    equal SimulEval's scorers on that log read with ``latency_unit="char"``."""
    instance, ls = simuleval
    demo = ROOT / "src" / "evalpipe" / "demo"
    src, ref = tmp_path / "src.txt", tmp_path / "ref.txt"
    src.write_text("".join(open(demo / "newstest.src.en", encoding="utf-8").readlines()[:12]), encoding="utf-8")
    ref.write_text("".join(open(demo / "newstest.ref.de", encoding="utf-8").readlines()[:12]), encoding="utf-8")
    done = _run([str(BIN / "evalpipe"), "simul", "run", "--source", str(src), "-r", str(ref), "-o", "target_unit=char",
                 "--output", str(tmp_path / "run"), "-f", "json"])
    assert done.returncode == 0, done.stderr
    scores = json.loads(done.stdout)
    records = [json.loads(line) for line in open(tmp_path / "run" / "instances.log", encoding="utf-8")]
    sources = src.read_text(encoding="utf-8").splitlines()
    for record, source in zip(records, sources):  # the copy agent writes the source's words
        assert record["prediction"] == source.replace(" ", "")[:len(record["delays"])]
        assert len(record["delays"]) == len(record["prediction"])
    logged = {i: instance.LogInstance(json.dumps(r), latency_unit="char") for i, r in enumerate(records)}
    for name, scorer in (("AL", ls.ALScorer), ("LAAL", ls.LAALScorer), ("AP", ls.APScorer)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert scores[name] == pytest.approx(scorer()(logged), rel=1e-12), name


def test_protocol_scores_in_characters_through_a_pipe(simuleval):
    """``evalpipe serve laal -o target_unit=char`` through a real pipe (unbuffered environment removed): each
    SCORE reply is the sentence's stats, equal to SimulEval's LAAL with ``latency_unit="char"``."""
    instance, ls = simuleval
    lines = [("6", "你好，世界！", [1, 2, 3, 4, 5, 6, 6]), ("3", "猫が好き", [0, 3]), ("0", "空", [0])]
    request = "".join(f"SCORE ||| {src} ||| {ref} ||| {' '.join(map(str, d))}\n" for src, ref, d in lines)
    done = subprocess.run([str(BIN / "evalpipe"), "serve", "laal", "-o", "target_unit=char"], input=request + "EVAL\n",
                          capture_output=True, text=True, timeout=120, env=_env())
    assert done.returncode == 0, done.stderr
    replies = done.stdout.splitlines()
    for (src, ref, delays), reply in zip(lines, replies):
        logged = instance.LogInstance(json.dumps({"index": 0, "source_length": float(src), "delays": delays,
                                                  "reference": ref}), latency_unit="char")
        value, scored, empty = map(float, reply.split())
        if float(src) == 0:  # an empty source: not scored (SimulEval divides by zero)
            assert (scored, empty) == (0, 1)
        else:
            assert (value, scored) == (ls.LAALScorer().compute(logged), 1)


def test_a_text_log_with_zero_elapsed_times_and_an_empty_prediction_is_scored_as_omnisteval_scores_it(tmp_path):
    """SimulEval writes elapsed times of 0 for text input: OmniSTEval prints the five CA rows computed from them, and
    its report puts two blank lines before the empty predictions; evalpipe's scores.tsv equals its own and the
    report equals it from the scores on (the header names evalpipe)."""
    records = [json.loads(line) for line in (LOGS / "wait3.instances.jsonl").read_text(encoding="utf-8").splitlines()]
    for r in records:
        r["elapsed"] = [0] * len(r["delays"])
    records[3]["prediction"], records[3]["delays"], records[3]["elapsed"] = "", [], []
    log = tmp_path / "zero.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    ref = _references(log, tmp_path / "ref.txt")
    theirs, _ = _omnisteval_tsv(log, ref, tmp_path)
    ours = _run([str(BIN / "evalpipe"), "simul", "score", str(log), "-r", str(ref), "-w", "4", "--output",
                 str(tmp_path / "ours")])
    assert ours.returncode == 0, ours.stderr
    assert "YAAL (CA)" in theirs and (tmp_path / "ours" / "scores.tsv").read_text(encoding="utf-8") == theirs
    assert "all zero" in ours.stderr
    mine = (tmp_path / "ours" / "evaluation_report.txt").read_text(encoding="utf-8")
    omni = (tmp_path / "omni" / "evaluation_report.txt").read_text(encoding="utf-8")
    assert "\n\n\nInstances with empty predictions:" in omni
    assert mine[mine.index("\nScores\n"):] == omni[omni.index("\nScores\n"):]
