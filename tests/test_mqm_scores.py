"""MQM scores from MQM ratings (issue 34, part 7): ``evalpipe meta-eval mqm-scores``.

Anchors: MTME's ``converters/score_mqm.py`` run on the real TED ratings by tests/data/make_mqm_expected.py (its
output recorded in tests/data/mqm_expected with the commit and command), the published per-segment averages beside
the ratings (``*.avg_seg_scores.tsv``, 6 decimals) and MTME's own wmt21.tedtalks human-score files.
"""
from __future__ import annotations

import csv
import gzip
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evalpipe.errors import InputError
from evalpipe.meta.mqm import DEFAULT_WEIGHTS, error_weight, parse_weights, score_ratings

ROOT = Path(__file__).resolve().parents[1]
RATINGS = ROOT.parent / "shared" / "data" / "mqm-ratings" / "ted"
TED = ROOT.parent / "shared" / "data" / "wmt21.tedtalks"
EXPECTED = ROOT / "tests" / "data" / "mqm_expected"
BIN = Path(sys.executable).parent
shared = pytest.mark.skipif(not RATINGS.is_dir(), reason="needs ../shared/data")


def _run(args):
    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)
    return subprocess.run([str(BIN / "evalpipe"), *map(str, args)], capture_output=True, text=True, timeout=300,
                          env=env)


@pytest.mark.fullcorpus
@shared
@pytest.mark.parametrize("pair", ["ende", "zhen"])
def test_scores_equal_mtmes_score_mqm_output_line_for_line(pair):
    ours = score_ratings(str(RATINGS / f"mqm_ted_{pair}.tsv"), parse_weights(DEFAULT_WEIGHTS))
    lines = []
    for (system, doc, doc_id), (value, raters) in ours.items():
        lines.append(f"{system}\t{doc}\t{doc_id}\t{value}" + "".join(f"\t{r}={raters[r]}" for r in sorted(raters)))
    expected = gzip.decompress((EXPECTED / f"score_mqm.{pair}.tsv.gz").read_bytes()).decode("utf-8").splitlines()
    assert lines == expected


@pytest.mark.fullcorpus
@shared
@pytest.mark.parametrize("pair", ["ende", "zhen"])
def test_scores_within_1e_6_of_the_published_averages(pair):
    ours = score_ratings(str(RATINGS / f"mqm_ted_{pair}.tsv"), parse_weights(DEFAULT_WEIGHTS))
    seg_of = {}
    with open(RATINGS / f"mqm_ted_{pair}.tsv", encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE):
            seg_of[(row["system"], int(row["seg_id"]))] = (row["system"], row["doc"], int(row["doc_id"]))
    compared = 0
    for number, line in enumerate(open(RATINGS / f"mqm_ted_{pair}.avg_seg_scores.tsv", encoding="utf-8")):
        if number == 0:
            continue
        system, rest = line.rstrip("\n").split("\t")
        value, seg_id = rest.split(" ")
        key = seg_of.get(({"ref-A": "ref", "ref-B": "refB"}.get(system, system), int(seg_id)))  # their names
        if value == "None":
            assert key is None
            continue
        assert abs(ours[key][0] - float(value)) <= 1e-6, (system, seg_id)
        compared += 1
    assert compared == len(ours)


@pytest.mark.fullcorpus
@shared
def test_test_set_files_equal_mtmes_tedtalks_human_scores(tmp_path):
    shutil.copytree(TED, tmp_path / "wmt21.tedtalks")
    for path in (tmp_path / "wmt21.tedtalks" / "human-scores").iterdir():
        path.unlink()
    done = _run(["meta-eval", "mqm-scores", RATINGS / "mqm_ted_ende.tsv", "--root", tmp_path, "--test-set",
                 "wmt21.tedtalks", "-l", "en-de", "--rename", "ref=refA"])
    assert done.returncode == 0, done.stderr
    for level in ("seg", "sys"):
        ours = _score_file(tmp_path / "wmt21.tedtalks" / "human-scores" / f"en-de.mqm.{level}.score")
        theirs = _score_file(TED / "human-scores" / f"en-de.mqm.{level}.score")
        assert set(ours) == set(theirs)
        for system in theirs:
            for a, b in zip(ours[system], theirs[system], strict=True):
                assert (a is None) == (b is None) and (a is None or abs(a - b) <= 1e-6), (level, system)
    correlate = _run(["meta-eval", "echo", "--root", tmp_path, "--test-set", "wmt21.tedtalks", "-l", "en-de",
                      "scores", "--name", "mqm"])
    assert correlate.returncode == 0, correlate.stderr


def _score_file(path):
    out = {}
    for line in open(path, encoding="utf-8"):
        system, value = line.rstrip("\n").split("\t")
        out.setdefault(system, []).append(None if value == "None" else float(value))
    return out


HEADER = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\tcomment\n"


def _ratings(tmp_path, rows):
    path = tmp_path / "ratings.tsv"
    path.write_text(HEADER + "".join("\t".join(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_weights_take_the_most_specific_match():
    weights = parse_weights(DEFAULT_WEIGHTS)
    assert error_weight(weights, "Major", "Accuracy/Mistranslation") == 5
    assert error_weight(weights, "Major", "Non-translation!") == 25
    assert error_weight(weights, "Minor", "Fluency/Punctuation") == 0.1
    assert error_weight(weights, "Minor", "Fluency/Grammar") == 1
    assert error_weight(weights, "No-error", "No-error") == 0
    assert error_weight(parse_weights("Major:5 major/accuracy:7"), "MAJOR", "Accuracy/Addition") == 7


def test_raters_are_summed_then_averaged_then_negated(tmp_path):
    rows = [["S", "d", "1", "1", "r1", "s", "t", "Accuracy/Mistranslation", "Major", ""],
            ["S", "d", "1", "1", "r1", "s", "t", "Fluency/Punctuation", "Minor", ""],
            ["S", "d", "1", "1", "r2", "s", "t", "No-error", "No-error", ""],
            ["S", "d", "2", "2", "r1", "s", "t", "Fluency/Grammar", "Minor", ""]]
    scores = score_ratings(str(_ratings(tmp_path, rows)), parse_weights(DEFAULT_WEIGHTS))
    assert scores[("S", "d", 1)] == (-(5.1 + 0) / 2, {"r1": 5.1, "r2": 0.0})
    assert scores[("S", "d", 2)][0] == -1.0


@pytest.mark.parametrize("rows, message", [
    ([["S", "d", "1", "1", "r", "s", "t", "No-error", "No-error", ""],
      ["S", "d", "3", "3", "r", "s", "t", "No-error", "No-error", ""]],
     r"non-contiguous segments for S/d: doc_id 1 is followed by 3"),
    ([["S", "d", "1", "1", "r", "s", "t", "Accuracy", "Critical", ""]], r"line 2: unknown severity 'Critical'"),
    ([["S", "d", "x", "1", "r", "s", "t", "Accuracy", "Major", ""]], r"line 2: expected doc_id to be an integer"),
    ([["S", "d", "1", "1", "r", "s", "t", "Accuracy"]], r"line 2: expected 10 tab-separated fields"),
])
def test_bad_ratings_are_one_line(tmp_path, rows, message):
    with pytest.raises(InputError, match=message):
        score_ratings(str(_ratings(tmp_path, rows)), parse_weights(DEFAULT_WEIGHTS))


def test_the_command_refuses_what_it_cannot_use(tmp_path):
    shutil.copytree(ROOT / "tests" / "data" / "wmt21.tedtalks", tmp_path / "wmt21.tedtalks")
    ratings = _ratings(tmp_path, [["NoSuch", "talk.1", "1", "1", "r", "s", "t", "No-error", "No-error", ""]])
    base = ["meta-eval", "mqm-scores", ratings, "--root", tmp_path, "--test-set", "wmt21.tedtalks", "-l", "en-de"]
    done = _run(base)
    assert done.returncode == 1 and "the ratings name the system 'NoSuch'" in done.stderr
    done = _run(base + ["--rename", "Other=refA"])
    assert done.returncode == 2 and "the ratings have no system 'Other'" in done.stderr
    done = _run(base + ["--weights", "Major=5"])
    assert done.returncode == 2 and "expected SEVERITY[/CATEGORY...]:WEIGHT" in done.stderr
    gold = tmp_path / "wmt21.tedtalks" / "human-scores" / "en-de.mqm.seg.score"
    if gold.exists():  # the test set's own MQM scores are never replaced by one rating line without --force
        before = gold.read_bytes()
        done = _run(base + ["--rename", "NoSuch=Facebook-AI"])
        assert done.returncode == 1 and str(gold) in done.stderr and "--force" in done.stderr, done.stderr
        assert gold.read_bytes() == before
    done = _run(base + ["--rename", "NoSuch=Facebook-AI", "--force"])
    assert done.returncode == 0, done.stderr
    seg = _score_file(tmp_path / "wmt21.tedtalks" / "human-scores" / "en-de.mqm.seg.score")
    assert seg["Facebook-AI"][0] == -0.0 and all(v is None for v in seg["Facebook-AI"][1:])
