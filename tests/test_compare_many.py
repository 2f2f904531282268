"""``evalpipe compare`` with any number of systems against compare-mt 0.2.10's own command line, run here on real
WMT21 en-de outputs (the shipped subset, and the full 1,002 segments when ../shared/data is there): the same text,
line for line, but for two things compare-mt leaves to chance or prints as zero.

* n-grams of equal share: compare-mt lists them in the order of a Python set of strings (it changes with the
  interpreter's string hashing, run to run), evalpipe by matches then n-gram; so each list is compared as the
  multiset of its shares, and line for line (n-gram, share and counts) above the last share printed;
* an undefined cell (an F-measure of a bucket with no reference or no output words, a BLEU of a bucket of no
  sentences): compare-mt prints 0, evalpipe ``-``.
"""
from __future__ import annotations

import json
import subprocess
from collections import Counter

import pytest

from conftest import child_env, data_roots, script

pytest.importorskip("six")  # compare-mt imports it without declaring it
pytest.importorskip("compare_mt")

SYSTEMS = ("Facebook-AI", "ICL", "UEdin", "VolcTrans-GLAT")


def files(root, names):
    news = root / "wmt21.news"
    return (str(news / "references" / "en-de.refA.txt"),
            [str(news / "system-outputs" / "en-de" / f"{name}.txt") for name in names])


def run(*args):
    return subprocess.run([script("evalpipe"), *map(str, args)], capture_output=True, text=True, env=child_env(),
                          timeout=600)


def theirs(ref, outs, *flags):
    done = subprocess.run([script("compare-mt"), ref, *outs, *flags], capture_output=True, text=True,
                          env=child_env(), timeout=600)
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if line != "Reading frequency from the reference"]


def sections(lines):
    """The n-gram lists (each a list of lines) and everything else (lines, the lists left out)."""
    rest, grams, inside = [], [], False
    for line in lines:
        if line.startswith("********************** "):
            inside = line.startswith("********************** N-gram")
        if inside and line.startswith("--- ") and " n-grams where " in line:
            grams.append([])
        elif inside and grams and line and not line.startswith("*"):
            grams[-1].append(line)
        else:
            rest.append(line)
    return rest, grams


def assert_same_ngram_list(mine, their):
    def value(line):  # the share, without the counts: equal shares may come with other counts at the boundary
        return line.split("\t")[1].split(" (")[0]

    assert Counter(map(value, mine)) == Counter(map(value, their)) and len(mine) == len(their)
    boundary = value(their[-1])
    assert {line for line in mine if value(line) != boundary} == {line for line in their if value(line) != boundary}


@pytest.mark.parametrize("root", data_roots())
@pytest.mark.parametrize("count", [1, 3, 4])
def test_text_equals_compare_mt(root, count):
    ref, outs = files(root, SYSTEMS[:count])
    mine = run("compare", "-r", ref, *outs, "--labels", ",".join(f"sys{i + 1}" for i in range(count)))
    assert mine.returncode == 0, mine.stderr
    their = theirs(ref, outs)
    (mine_rest, mine_grams), (their_rest, their_grams) = sections(mine.stdout.splitlines()), sections(their)
    assert len(mine_rest) == len(their_rest) and len(mine_grams) == len(their_grams) == (2 if count > 1 else 0)
    undefined = 0
    for a, b in zip(mine_rest, their_rest):
        if a != b:
            cells = list(zip(a.split("\t"), b.split("\t")))
            assert len(a.split("\t")) == len(b.split("\t")) and all(x == y or (x == "-" and float(y) == 0)
                                                                     for x, y in cells), (a, b)
            undefined += sum(x != y for x, y in cells)
    assert undefined >= 2 * count  # the "<1" and ">=1000" frequency buckets: no reference word is in them
    for a, b in zip(mine_grams, their_grams):
        assert_same_ngram_list(a, b)
    if count > 1:
        assert "sentences where sys2>sys1 at sentence-level BLEU" in mine.stdout


def test_top_and_examples_are_compare_mts_report_lengths():
    ref, outs = files(data_roots()[0].values[0], SYSTEMS[:2])
    mine = run("compare", "-r", ref, *outs, "--labels", "sys1,sys2", "--top", "7", "--examples", "3").stdout
    their = theirs(ref, outs, "--compare_ngrams", "compare_type=match,report_length=7", "--compare_sentence_examples",
                   "score_type=sentbleu,report_length=3")
    (mine_rest, mine_grams), (their_rest, their_grams) = sections(mine.splitlines()), sections(their)
    def shown(lines):
        return [line for line in lines if "sentences where" in line or line.startswith(("sys1-sys2=", "Ref:  "))]

    assert len(shown(mine_rest)) == 2 + 3 * 2 * 2 and shown(mine_rest) == shown(their_rest)
    assert len(mine_grams[0]) == 7
    for a, b in zip(mine_grams, their_grams):
        assert_same_ngram_list(a, b)


def test_json_of_three_systems_and_what_three_cannot_do(tmp_path):
    ref, outs = files(data_roots()[0].values[0], SYSTEMS[:3])
    done = run("compare", "-r", ref, *outs, "-f", "json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["kind"] == "compare-mt" and doc["systems"] == list(SYSTEMS[:3]) and len(doc["bleu"]) == 3
    assert [p["systems"] for p in doc["pairs"]] == [[0, 1]]
    assert all(len(column) == len(doc["length_difference"]["buckets"]) for column in
               doc["length_difference"]["sentences"])
    for args, says in ((["--segment-scores", f"comet={outs[0]}", "--report", tmp_path / "r.html"],
                        f"{outs[0]}, line 1: expected a score (a number), got "),
                       (["--labels", "a,b"], "expected 3 labels")):
        refused = run("compare", "-r", ref, *outs, *args)
        assert refused.returncode != 0 and says in refused.stderr and "Traceback" not in refused.stderr
        assert refused.stderr.strip().splitlines()[-1].startswith("Error: ")
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("compiled", [True, False])
def test_the_kernels_bleu_statistics_are_the_sentence_counts(monkeypatch, compiled):
    """compare-mt's BLEU statistics of many systems from the n-gram kernel (C, or its numpy reference) equal
    the sentence-by-sentence counts, with compare-mt's tokens: an empty token from a double space, an empty line."""
    from evalpipe.evaluators.kernels import ngram_matches
    from evalpipe.scoring import compare_systems as C

    if compiled and not ngram_matches.AVAILABLE:
        pytest.skip("the C kernel is not built here")
    monkeypatch.setattr(ngram_matches, "AVAILABLE", compiled)
    ref_path, outs = files(data_roots()[0].values[0], SYSTEMS[:3])
    ref = C.tokens(open(ref_path, encoding="utf-8").read().splitlines()[:60] + ["a  b b", "", "x y z"])
    systems = [C.tokens(open(p, encoding="utf-8").read().splitlines()[:60] + ["a  b b b", "q", ""]) for p in outs]
    assert C.comparemt_bleu_stats_of_systems(ref, systems) == [[C.comparemt_bleu_stats(r, o) for r, o in
                                                               zip(ref, out)] for out in systems]


def _before_ngrams(lines):
    out = []
    for line in lines:
        if line.startswith("********************** N-gram"):
            break
        out.append(line)
    return out


@pytest.mark.parametrize("count", [1, 2, 3])
def test_paired_bootstrap_equals_compare_mts(count):
    """``--paired-bs --paired-n N --seed S`` against compare-mt's ``--compare_scores score_type=bleu,bootstrap=N
    score_type=length --seed S``: the intervals, the win column (two systems) or table (more), its p-values."""
    ref, outs = files(data_roots()[0].values[0], SYSTEMS[:count])
    mine = run("compare", "-r", ref, *outs, "--labels", ",".join(f"sys{i + 1}" for i in range(count)), "--paired-bs",
               "--paired-n", "300", "--seed", "11")
    assert mine.returncode == 0, mine.stderr
    their = theirs(ref, outs, "--compare_scores", "score_type=bleu,bootstrap=300", "score_type=length", "--seed", "11")
    a, b = _before_ngrams(mine.stdout.splitlines()), _before_ngrams(their)
    scores = a[:a.index("", 3)]
    assert scores == b[:len(scores)] and any(line.startswith("\t[") for line in scores) == (count <= 2)
    assert [x for x, y in zip(a, b) if x != y] == [x for x in a if x.split("\t")[0] in ("<1", ">=1000")]
    if count == 3:
        assert "v s1 / s2 ->\tsys2\tsys3" in a


def test_the_bootstrap_resamples_and_scores_as_compare_mt_in_process():
    """The JSON's intervals and win shares, to the last bit, against compare-mt's own function and generator."""
    import numpy as np
    from compare_mt import corpus_utils, scorers, sign_utils

    ref_path, outs = files(data_roots()[0].values[0], SYSTEMS[:3])
    done = run("compare", "-r", ref_path, *outs, "-f", "json", "--paired-bs", "--paired-n", "200", "--seed", "5")
    boot = json.loads(done.stdout)["bleu_bootstrap"]
    np.random.seed(5)
    direcs = [(0, 1), (0, 2), (1, 2)]
    wins, stats = sign_utils.eval_with_paired_bootstrap(corpus_utils.load_tokens(ref_path),
                                                        [corpus_utils.load_tokens(p) for p in outs], None,
                                                        scorers.BleuScorer(), direcs, num_samples=200)
    assert boot["lower"] == [s["lower_bound"] for s in stats] and boot["upper"] == [s["upper_bound"] for s in stats]
    assert [[p["wins"], p["losses"], p["not_lower"]] for p in boot["pairs"]] == wins


def test_a_seed_or_a_count_without_the_bootstrap_is_refused(tmp_path):
    ref, outs = files(data_roots()[0].values[0], SYSTEMS[:2])
    for args in (["--seed", "3"], ["--paired-n", "10"]):
        refused = run("compare", "-r", ref, *outs, *args)
        assert refused.returncode == 2 and f"Error: {args[0]} acts only with --paired-bs" in refused.stderr


SETTINGS = [  # (evalpipe's flags, compare-mt's settings of the same analyses)
    (["--ngram-type", "over", "--ngram-min", "2", "--ngram-max", "3", "--ngram-alpha", "0.5", "--pairs", "0-1;2-0",
      "--top", "20", "--examples", "2"],
     ["--compare_ngrams", "compare_type=over,min_ngram_length=2,max_ngram_length=3,alpha=0.5,compare_directions=0-1;"
      "2-0,report_length=20", "--compare_sentence_examples",
      "score_type=sentbleu,report_length=2,compare_directions=0-1;2-0"]),
    (["--ngram-type", "under", "--ngram-max", "1", "--ngram-alpha", "2"],
     ["--compare_ngrams", "compare_type=under,max_ngram_length=1,alpha=2.0"]),
    (["--ngram-min", "3", "--top", "15", "--pairs", "1-2", "--examples", "4"],
     ["--compare_ngrams", "min_ngram_length=3,report_length=15,compare_directions=1-2",
      "--compare_sentence_examples", "report_length=4,compare_directions=1-2"]),
    (["--pairs", "0-1;0-2;1-2"], ["--compare_ngrams", "compare_directions=0-1;0-2;1-2", "--compare_sentence_examples",
                                  "compare_directions=0-1;0-2;1-2"]),
    (["--freq-corpus", "SRC"], ["--compare_word_accuracies", "bucket_type=freq,freq_corpus_file=SRC"]),
]


@pytest.mark.parametrize("mine_flags, their_flags", SETTINGS, ids=[" ".join(m[:2]) for m, _ in SETTINGS])
def test_non_default_settings_equal_compare_mts(mine_flags, their_flags):
    root = data_roots()[0].values[0]
    ref, outs = files(root, SYSTEMS[:3])
    source = str(root / "wmt21.news" / "sources" / "en-de.txt")
    mine = run("compare", "-r", ref, *outs, "--labels", "sys1,sys2,sys3", *[source if f == "SRC" else f
                                                                           for f in mine_flags])
    assert mine.returncode == 0, mine.stderr
    their = [line for line in theirs(ref, outs, *[f.replace("SRC", source) for f in their_flags])
             if not line.startswith("Reading frequency from")]
    (mine_rest, mine_grams), (their_rest, their_grams) = sections(mine.stdout.splitlines()), sections(their)
    assert len(mine_grams) == len(their_grams) and len(mine_rest) == len(their_rest)
    for a, b in zip(mine_rest, their_rest):
        assert a == b or all(x == y or (x == "-" and float(y) == 0) for x, y in zip(a.split("\t"), b.split("\t")))
    for a, b in zip(mine_grams, their_grams):
        assert_same_ngram_list(a, b)


def test_pairs_and_ngram_lengths_that_cannot_be(tmp_path):
    ref, outs = files(data_roots()[0].values[0], SYSTEMS[:3])
    for args, says in ((["--pairs", "0-3"], "expected two different systems among 0..2, got '0-3'"),
                       (["--pairs", "1-1"], "expected two different systems among 0..2"),
                       (["--pairs", "a-b"], "expected I-J[;I-J...]"),
                       (["--ngram-min", "3", "--ngram-max", "2"], "expected at most --ngram-max (2), got 3")):
        refused = run("compare", "-r", ref, *outs, *args)
        assert refused.returncode == 2 and says in refused.stderr.strip().splitlines()[-1], refused.stderr
    for args in (["--pairs", "0-2"], ["--top", "3"], ["--ngram-type", "over"]):
        one = run("compare", "-r", ref, outs[0], *args)
        assert one.returncode == 2 and f"Error: {args[0]} compares pairs of systems; one system is given" in one.stderr


def test_the_report_of_three_systems(tmp_path):
    """One page: the scores (and the bootstrap's win shares), a figure whose bars are the JSON's numbers, the bucket
    counts, each pair's n-grams and sentences, each -m metric's buckets; `evalpipe report` of the JSON is the same
    page."""
    pytest.importorskip("matplotlib")
    from evalpipe.report import figures
    from test_report import assert_self_contained

    ref, outs = files(data_roots()[0].values[0], SYSTEMS[:3])
    report = tmp_path / "three.html"
    done = run("compare", "-r", ref, *outs, "-f", "json", "--report", report, "--paired-bs", "--paired-n", "100",
               "--pairs", "0-1;1-2", "--top", "4", "--examples", "2", "-m", "chrf", "--confidence-n", "100")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    html = report.read_text(encoding="utf-8")
    assert_self_contained(html)
    assert html.count("<svg") == 4 and html.count("<h2>") == 3 + 2 + 1  # compare-mt: 3, chrF: 1
    for a, b in (("Facebook-AI", "ICL"), ("ICL", "UEdin")):
        assert f"<h2>{a} and {b}</h2>" in html and f"Sentences where {b} is furthest ahead" in html
    boots = [doc["bleu_bootstrap"]] + doc["metric_bootstrap"]  # -m with --paired-bs: chrF resampled too
    assert [b.get("metric") for b in boots] == [None, "chrF2"]
    assert html.count('<td class="better">') == sum(1 - p["wins"] < 0.05 for b in boots for p in b["pairs"]) + \
        sum(1 - p["losses"] < 0.05 for b in boots for p in b["pairs"]) + \
        sum(v == "better" for column in doc["metric_buckets"][0]["systems"] for v in column["verdict"])
    bars = [p.get_height() for p in figures.bucket_figure(doc).axes[0].patches]
    assert bars == [x for column in doc["length"]["bleu"] for x in column]
    (tmp_path / "c.json").write_text(done.stdout, encoding="utf-8")
    again = run("report", tmp_path / "c.json", "-o", tmp_path / "again.html")
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "again.html").read_text(encoding="utf-8") == html
