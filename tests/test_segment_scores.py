"""Segment scores computed elsewhere as a metric (issue 35, part 1): ``score-corpus --segment-scores NAME=FILE``.

Anchors: MTME's published system-level MQM (``*.mqm.sys.score``, the mean of the rated segments of its
``*.seg.score``) on the real WMT21 files; ``scipy.stats.ttest_rel``, the call comet-compare makes
(unbabel-comet 2.2.7, ``comet/cli/compare.py``: ``stats.ttest_rel(x_seg_scores, y_seg_scores,
alternative="two-sided")``, printed with ``"{:.4f}"``).  comet-score's output is written here with the format strings
of unbabel-comet 2.2.7's ``comet/cli/score.py`` (a transcription of its traffic: ``"{}\\tSegment {}\\tscore:
{:.4f}"`` per segment, system by system within a segment, then ``"{}\\tscore: {:.4f}"`` per system).
"""
from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from evalpipe import load_metric
from evalpipe.errors import InputError, UsageError
from evalpipe.score_files import read_scores, scores_for_systems

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
DEMO = ROOT / "src" / "evalpipe" / "demo" / "wmt21-ende"
SHARED = ROOT.parent / "shared" / "data" / "wmt21.news" / "human-scores"


def _run(args, cwd=None):
    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)
    return subprocess.run([str(BIN / "evalpipe"), *map(str, args)], capture_output=True, text=True, timeout=300,
                          env=env, cwd=cwd)


def comet_score_output(files, scores):
    """What comet-score prints for ``files`` with these segment scores (unbabel-comet 2.2.7's format strings)."""
    lines = []
    for i in range(len(scores[0])):
        for j, name in enumerate(files):
            lines.append("{}\tSegment {}\tscore: {:.4f}".format(name, i, scores[j][i]))
    for j, name in enumerate(files):
        lines.append("{}\tscore: {:.4f}".format(name, sum(scores[j]) / len(scores[j])))
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def systems():
    files = sorted(str(p) for p in (DEMO / "systems").glob("*.de"))[:3]
    n = len((DEMO / "ref.de").read_text(encoding="utf-8").splitlines())
    rng = random.Random(7)
    return files, [[round(rng.uniform(-0.2, 1.0), 4) for _ in range(n)] for _ in files]


def test_comet_score_output_of_several_systems_is_a_metric(systems, tmp_path):
    files, scores = systems
    (tmp_path / "comet.txt").write_text(comet_score_output(files, scores), encoding="utf-8")
    done = _run(["score-corpus", "-r", DEMO / "ref.de", *files, "-m", "bleu", "--segment-scores",
                 f"COMET={tmp_path / 'comet.txt'}", "-f", "json"])
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)["results"]
    got = {(r["system"], r["metric"]): r["score"] for r in results}
    for name, values in zip(files, scores):
        assert got[(name, "COMET")] == pytest.approx(statistics.mean(values), rel=1e-12)
    assert {r["metric"] for r in results} == {"bleu", "COMET"}


def test_comet_compare_t_test(systems, tmp_path):
    scipy_stats = pytest.importorskip("scipy.stats")
    files, scores = systems
    (tmp_path / "comet.txt").write_text(comet_score_output(files, scores), encoding="utf-8")
    done = _run(["score-corpus", "--segment-scores", f"comet={tmp_path / 'comet.txt'}", "--paired-ttest", "-f",
                 "json"])
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)["results"]
    for j in (1, 2):  # comet-compare's pair (x = the first system, y = this one)
        expected = scipy_stats.ttest_rel(scores[0], scores[j], alternative="two-sided")
        ours = results[j]
        assert "{:.4f}".format(ours["statistic"]) == "{:.4f}".format(expected.statistic)
        assert "{:.4f}".format(ours["p_value"]) == "{:.4f}".format(expected.pvalue)
        assert ours["statistic"] == pytest.approx(expected.statistic, rel=1e-12)
    assert results[0]["baseline"] and results[0]["p_value"] is None


def test_an_undefined_t_test_prints_as_undefined(tmp_path):
    """Where scipy's ttest_rel answers nan (the differences have no variance: identical systems, a constant shift;
    or one segment), the p-value is undefined: null in the JSON (valid JSON, no NaN), a note saying why, and the
    table prints no p-value -- never ``p=nan``."""
    pytest.importorskip("scipy.stats")
    for name, values in (("a", [0.5, 0.625, 0.75]), ("b", [0.5, 0.625, 0.75]), ("c", [0.75, 0.875, 1.0]),
                         ("d", [0.4])):
        (tmp_path / f"{name}.cc").write_text("".join(f"{v}\n" for v in values), encoding="utf-8")
    for name, n in (("A", 3), ("B", 3), ("D", 1), ("E", 1)):
        (tmp_path / f"{name}.txt").write_text("ein Satz\n" * n, encoding="utf-8")
    for pair, systems in (("a.cc,b.cc", ["A.txt", "B.txt"]), ("a.cc,c.cc", ["A.txt", "B.txt"]),
                          ("d.cc,d.cc", ["D.txt", "E.txt"])):
        done = _run(["score-corpus", *systems, "--segment-scores", f"COMET={pair}", "--paired-ttest", "-f", "json"],
                    cwd=tmp_path)
        assert done.returncode == 0 and "NaN" not in done.stdout, done.stderr
        other = json.loads(done.stdout)["results"][1]
        assert other["p_value"] is None and other["statistic"] is None and "t-test undefined" in other["note"]
        table = _run(["score-corpus", *systems, "--segment-scores", f"COMET={pair}", "--paired-ttest"], cwd=tmp_path)
        assert "nan" not in table.stdout.lower() and "t-test undefined" in table.stdout, table.stdout


def test_one_file_a_system_in_their_order_and_json_lines_with_a_field(systems, tmp_path):
    files, scores = systems
    plain = []
    for k, values in enumerate(scores):
        path = tmp_path / f"s{k}.jsonl"
        path.write_text("".join(json.dumps({"prediction": v, "id": i}) + "\n" for i, v in enumerate(values)),
                        encoding="utf-8")
        plain.append(str(path))
    lines = tmp_path / "lines.txt"
    lines.write_text("".join(f"{v!r}\n" for v in scores[0]), encoding="utf-8")
    done = _run(["score-corpus", "-r", DEMO / "ref.de", *files, "--segment-scores", f"metricx={','.join(plain)}",
                 "-o", "metricx.field=prediction", "-f", "json", "--paired-bs"])
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)["results"]
    assert [r["score"] for r in results] == pytest.approx([statistics.mean(v) for v in scores], rel=1e-12)
    assert all(r["higher_is_better"] is False for r in results)  # MetricX: lower is better by default
    assert read_scores(str(lines)) == {"": scores[0]}


@pytest.mark.fullcorpus
@pytest.mark.skipif(not SHARED.is_dir(), reason="needs ../shared/data")
@pytest.mark.parametrize("pair", ["en-de", "zh-en"])
def test_mtme_seg_scores_give_mtmes_published_system_mqm(pair):
    done = _run(["score-corpus", "--segment-scores", f"mqm={SHARED / f'{pair}.mqm.seg.score'}", "-f", "json"])
    assert done.returncode == 0, done.stderr
    ours = {r["system"]: r["score"] for r in json.loads(done.stdout)["results"]}
    published = dict(line.rstrip("\n").split("\t") for line in open(SHARED / f"{pair}.mqm.sys.score"))
    assert set(published) <= set(ours)
    for system, value in published.items():
        assert ours[system] == pytest.approx(float(value), rel=1e-12, abs=1e-12), system


def test_mtme_none_is_a_segment_without_a_score(tmp_path):
    path = tmp_path / "x.seg.score"
    path.write_text("A\t1.5\nA\tNone\nA\t-0.5\nB\tNone\nB\t2\nB\t4\n", encoding="utf-8")
    done = _run(["score-corpus", "--segment-scores", f"mqm={path}", "-f", "tsv"])
    assert done.returncode == 0, done.stderr
    rows = [line.split("\t") for line in done.stdout.splitlines()[1:]]
    assert [(r[0], float(r[2])) for r in rows] == [("A", 0.5), ("B", 3.0)]


@pytest.mark.parametrize("text, fmt, message", [
    ("0.5\nabc\n", "lines", r"line 2: expected a score \(a number\), got 'abc'"),
    ("0.5\nnan\n", "lines", r"line 2: expected a score to be a finite number, got 'nan'"),
    ('{"s": 1}\n{"s": "x"}\n', "jsonl", r"line 2: expected 's' to be a number"),
    ('{"s": 1}\n{"t": 2}\n', "jsonl", r"line 2: expected the field 's'"),
    ("a.txt\tSegment 0\tscore: 0.5\na.txt\tSegment 2\tscore: 0.5\n", "comet", r"line 2: expected segment 1"),
    ("a.txt\tSegment 0\tscore: 0.5\na.txt\tscore: 0.9000\n", "comet", r"line 2: a.txt's system score 0.9"),
    ("A\t1\nA\t2\nB\t3\n", "mtme", r"expected every system to have the same number of segments"),
    ("A 1\n", "mtme", r"line 1: expected 'SYSTEM<TAB>SCORE'"),
])
def test_bad_score_files_name_the_file_and_line(tmp_path, text, fmt, message):
    path = tmp_path / "scores"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        read_scores(str(path), fmt, "s" if fmt == "jsonl" else None)


def test_missing_and_extra_lines_and_unknown_systems(tmp_path):
    short, long = tmp_path / "short.txt", tmp_path / "long.txt"
    short.write_text("1\n2\n", encoding="utf-8")
    long.write_text("1\n2\n3\n4\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"short.txt, line 3: expected 3 scores .* segment 3 has none"):
        scores_for_systems("comet", [str(short)], ["sys.txt"], 3)
    with pytest.raises(InputError, match=r"long.txt, line 4: expected 3 scores .* an extra score"):
        scores_for_systems("comet", [str(long)], ["sys.txt"], 3)
    table = tmp_path / "t.seg.score"
    table.write_text("A\t1\nB\t2\n", encoding="utf-8")
    with pytest.raises(UsageError, match=r"has no scores of the system 'C'; it has A, B"):
        scores_for_systems("m", [str(table)], ["A", "C"], 1)
    with pytest.raises(UsageError, match=r"2 score file\(s\) for 3 systems"):
        scores_for_systems("m", [str(short), str(long)], ["a", "b", "c"], None)


@pytest.mark.parametrize("args, message", [
    (["--paired-ttest", "-r", DEMO / "ref.de", DEMO / "systems" / "UEdin.de"], "--paired-ttest compares means"),
    (["--segment-scores", "x"], "expects NAME=FILE"),
    (["--segment-scores", "a.b=f.txt"], "a metric name is letters"),
    (["--segment-scores", "c=f.txt", "-o", "c.colour=red"], "-o c.colour: segment scores take"),
    (["--segment-scores", "c=f.txt", "-m", "bleu"], "-m bleu needs the system files"),
    (["--segment-scores", "c=f.txt", "-o", "tokenize=intl"], "-o tokenize: no metric takes it"),
    (["--segment-scores", "c=f.txt", "--segment-scores", "c=g.txt"], "the name 'c' is given twice"),
    (["--segment-scores", "c=f.txt", "--paired-ttest", "--paired-bs"], "choose one paired test"),
])
def test_options_that_cannot_act_are_refused(tmp_path, args, message):
    (tmp_path / "f.txt").write_text("A\t1\nB\t2\n", encoding="utf-8")
    (tmp_path / "g.txt").write_text("A\t1\nB\t2\n", encoding="utf-8")
    done = _run(["score-corpus", *args], cwd=tmp_path)
    assert done.returncode == 2 and message in done.stderr and done.stdout == "", done.stderr


def test_the_metric_itself():
    metric = load_metric("segment_scores", label="MetricX-24")
    assert metric.higher_is_better is False
    assert load_metric("segment_scores", label="COMET").higher_is_better is True
    assert load_metric("segment_scores", label="MetricX", direction="higher").higher_is_better is True
    rows = metric.corpus_stats([0.5, None, 1.5], [])
    assert rows == [[0.5, 1], [0.0, 0], [1.5, 1]] and metric.score([2.0, 2]) == 1.0
    with pytest.raises(InputError, match="expected the hypothesis to be a segment score"):
        metric.corpus_stats([float("nan")], [])


def test_mbr_reranks_by_precomputed_scores(systems, tmp_path):
    files, scores = systems
    (tmp_path / "kiwi.txt").write_text(comet_score_output(files, scores), encoding="utf-8")
    done = _run(["mbr", *files, "--segment-scores", f"cometkiwi={tmp_path / 'kiwi.txt'}", "-f", "json"])
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    texts = [Path(f).read_text(encoding="utf-8").splitlines() for f in files]
    for g, segment in enumerate(doc["segments"]):
        column = [s[g] for s in scores]
        best = column.index(max(column))  # the first of the highest
        assert segment["choice"] == best and segment["text"] == texts[best][g]
        assert segment["utilities"] == column
    lower = _run(["mbr", *files, "--segment-scores", f"metricx={tmp_path / 'kiwi.txt'}", "-f", "json"])
    assert [s["choice"] for s in json.loads(lower.stdout)["segments"]] == \
        [[s[g] for s in scores].index(min(s[g] for s in scores)) for g in range(len(scores[0]))]
    refused = _run(["mbr", *files, "--segment-scores", f"k={tmp_path / 'kiwi.txt'}", "-m", "bleu"])
    assert refused.returncode == 2 and "-m and --segment-scores cannot go together" in refused.stderr


def test_meta_eval_add_metric_writes_mtme_files_from_segment_scores(tmp_path):
    import shutil

    shutil.copytree(ROOT / "tests" / "data" / "wmt21.news", tmp_path / "wmt21.news")
    outputs = sorted((tmp_path / "wmt21.news" / "system-outputs" / "en-de").glob("*.txt"))
    n = len(outputs[0].read_text(encoding="utf-8").splitlines())
    rng = random.Random(11)
    scores = [[round(rng.uniform(0, 1), 4) for _ in range(n)] for _ in outputs]
    names = [f"system-outputs/en-de/{p.name}" for p in outputs]
    (tmp_path / "comet.txt").write_text(comet_score_output(names, scores), encoding="utf-8")
    done = _run(["meta-eval", "add-metric", "COMET-ext", "--root", tmp_path, "--test-set", "wmt21.news", "-l", "en-de",
                 "--segment-scores", tmp_path / "comet.txt"])
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "wmt21.news" / "metric-scores" / "en-de"
    sys_scores = dict(line.split("\t") for line in (folder / "COMET_ext-refA.sys.score").read_text().splitlines())
    by_name = {p.stem: v for p, v in zip(outputs, scores)}
    assert "refA" not in sys_scores  # the reference scored against is left out, as add-metric does
    for system, value in sys_scores.items():
        assert float(value) == pytest.approx(statistics.mean(by_name[system]), rel=1e-12)
    seg = [line.split("\t") for line in (folder / "COMET_ext-refA.seg.score").read_text().splitlines()]
    assert [float(v) for s, v in seg if s == "UEdin"] == by_name["UEdin"]
    correlate = _run(["meta-eval", "correlate", "--root", tmp_path, "--test-set", "wmt21.news", "-l", "en-de",
                      "--help"])
    assert correlate.returncode == 0


def test_stream_score_takes_scores_of_the_realigned_sentences(tmp_path):
    longform = ROOT / "src" / "evalpipe" / "demo" / "longform"
    log = tmp_path / "w.jsonl"
    run = _run(["stream", "run", "--source", longform / "source.en", "-a", longform / "audio.json", "--agent-option",
                f"hypothesis={longform / 'online-w.de'}", "--output", log])
    assert run.returncode == 0, run.stderr
    n = len((longform / "reference.de").read_text(encoding="utf-8").splitlines())
    values = [round(random.Random(3).uniform(0, 1) + i / 1000, 6) for i in range(n)]
    (tmp_path / "s.txt").write_text("".join(f"{v}\n" for v in values), encoding="utf-8")
    done = _run(["stream", "score", "--log-file", log, "-a", longform / "audio.json", "-r", longform / "reference.de",
                 "-m", "bleu", "--segment-scores", f"comet={tmp_path / 's.txt'}", "-f", "json"])
    assert done.returncode == 0, done.stderr
    got = {r["metric"]: r["score"] for r in json.loads(done.stdout)["results"]}
    assert got["comet"] == pytest.approx(statistics.mean(values), rel=1e-12)
    (tmp_path / "short.txt").write_text("0.5\n", encoding="utf-8")
    short = _run(["stream", "score", "--log-file", log, "-a", longform / "audio.json", "-r", longform / "reference.de",
                  "-m", "bleu", "--segment-scores", f"comet={tmp_path / 'short.txt'}"])
    assert short.returncode == 1 and "short.txt, line 2: expected" in short.stderr


def test_compare_by_segment_scores(systems, tmp_path):
    files, scores = systems
    (tmp_path / "comet.txt").write_text(comet_score_output(files, scores), encoding="utf-8")
    done = _run(["compare", files[0], files[1], "-r", DEMO / "ref.de", "--segment-scores",
                 f"COMET={tmp_path / 'comet.txt'}", "-f", "json", "--examples", "3"])
    assert done.returncode == 0, done.stderr
    (part,) = json.loads(done.stdout)["segment_scores"]
    assert part["mean"] == pytest.approx([statistics.mean(scores[0]), statistics.mean(scores[1])], rel=1e-12)
    gaps = sorted(((b - a), i) for i, (a, b) in enumerate(zip(scores[0], scores[1])))
    assert [e["index"] for e in part["examples"]["system1"]] == [i for _, i in gaps[:3]]
    assert [e["index"] for e in part["examples"]["system2"]] == [i for _, i in gaps[::-1][:3]]
    assert sum(part["length"]["sentences"]) == len(scores[0])
    table = json.loads(done.stdout)["metric_buckets"][0]  # and by bucket, as a metric
    assert table["metric"] == "COMET" and table["all"]["score"] == part["mean"]


def test_compare_any_number_of_systems_by_segment_scores(systems, tmp_path):
    """Three systems: the segment scores are a metric in every bucket (each bucket's score the mean of its
    segments' scores), resampled by --paired-bs beside BLEU, and drawn in the report."""
    from evalpipe.scoring.compare_systems import LENGTH_CUTOFFS, tokens

    files, scores = systems
    (tmp_path / "comet.txt").write_text(comet_score_output(files, scores), encoding="utf-8")
    report = tmp_path / "r.html"
    done = _run(["compare", *files, "-r", DEMO / "ref.de", "--segment-scores", f"COMET={tmp_path / 'comet.txt'}",
                 "--paired-bs", "--paired-n", "50", "-f", "json", "--report", report])
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    (table,) = doc["metric_buckets"]
    lengths = [len(t) for t in tokens((DEMO / "ref.de").read_text(encoding="utf-8").split("\n")[:-1])]
    which = [sum(n >= c for c in LENGTH_CUTOFFS) for n in lengths]
    for k, values in enumerate(scores):
        assert table["all"]["score"][k] == pytest.approx(statistics.mean(values), rel=1e-12)
        for b, score in enumerate(table["systems"][k]["score"]):
            mine = [v for v, w in zip(values, which) if w == b]
            assert score == (pytest.approx(statistics.mean(mine), rel=1e-12) if mine else None)
    (boot,) = doc["metric_bootstrap"]
    assert boot["metric"] == "COMET" and boot["scores"] == pytest.approx([statistics.mean(v) for v in scores])
    assert "COMET by length" in report.read_text(encoding="utf-8") and "segment_scores" not in doc
