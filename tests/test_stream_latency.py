"""Stream-level AP, AL and DAL (Iranzo-Sánchez et al., 2021) through `evalpipe stream latency`.

On the full shared data every row of expected_latency.tsv -- the values published with the wait-k streams
(jairsan/Stream-level_Latency_Evaluation_for_Simultaneous_Machine_Translation, commit 187e3ef4) -- is
reproduced to the last bit, both setups (resegmented, penalty 0.95; the stream as one sentence, 1.0).  On
the shipped subset (tests/data: the first 60 sentences of two streams) the command agrees with the library
and bad input is named."""
from __future__ import annotations

import csv
import json
import subprocess

import pytest

from conftest import DATA, SHARED, child_env, script
from evalpipe.evaluators.formulas import stream_latency as S

FULL = SHARED / "simul" / "iwslt17-dev2010.de-en"
SUBSET = DATA / "simul" / "iwslt17-dev2010.de-en"


def run(root, k, *extra):
    completed = subprocess.run([script("evalpipe"), "stream", "latency", "--source", str(root / "source.de"),
                                "--stream", f"{root / 'REAL' / f'{k}.RW'}={root / 'REAL' / f'{k}.reseg_h'}",
                                "-f", "json", *extra], capture_output=True, text=True, env=child_env(), timeout=120)
    return completed


@pytest.mark.fullcorpus
@pytest.mark.skipif(not FULL.is_dir(), reason=f"full data not found at {FULL}")
def test_published_values_bit_for_bit():
    with open(FULL / "expected_latency.tsv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    assert len(rows) == 20
    for row in rows:
        extra = ["--penalty-scale", row["gamma_scale"]] + (["--one-sentence"] if row["setup"] == "concat_one_sentence"
                                                           else [])
        completed = run(FULL, row["k"], *extra)
        assert completed.returncode == 0, completed.stderr
        doc = json.loads(completed.stdout)
        assert [repr(doc[m]) for m in ("AP", "AL", "DAL")] == [row["AP"], row["AL"], row["DAL"]], row


@pytest.mark.parametrize("k", ["1", "5"])
def test_subset_command_equals_the_library(k):
    source = [len(line.split()) for line in (SUBSET / "source.de").read_text(encoding="utf-8").splitlines()]
    target = [len(line.split()) for line in (SUBSET / "REAL" / f"{k}.reseg_h").read_text(encoding="utf-8").splitlines()]
    delays = S.delays_of_actions((SUBSET / "REAL" / f"{k}.RW").read_text(encoding="utf-8").split())
    doc = json.loads(run(SUBSET, k, "--penalty-scale", "0.95").stdout)
    assert (doc["AP"], doc["AL"], doc["DAL"]) == S.scores(S.stream_stats(source, target, delays, 0.95))
    assert doc["sentences"] == len(source) == 60
    one = json.loads(run(SUBSET, k, "--one-sentence").stdout)
    assert (one["AP"], one["AL"], one["DAL"]) == S.scores(S.stream_stats([sum(source)], [sum(target)], delays))


def test_two_streams_average_over_all_their_sentences():
    both = subprocess.run([script("evalpipe"), "stream", "latency", "--source", str(SUBSET / "source.de"), "-f", "json",
                           *[a for k in ("1", "5") for a in ("--stream", f"{SUBSET / 'REAL' / f'{k}.RW'}="
                                                                         f"{SUBSET / 'REAL' / f'{k}.reseg_h'}")]],
                          capture_output=True, text=True, env=child_env(), timeout=120)
    doc = json.loads(both.stdout)
    one, five = (json.loads(run(SUBSET, k).stdout) for k in ("1", "5"))
    assert doc["sentences"] == 120 and doc["AL"] == pytest.approx((one["AL"] + five["AL"]) / 2, rel=1e-15)


def test_bad_streams_are_named(tmp_path):
    rw = tmp_path / "x.RW"
    rw.write_text("R W X W\n", encoding="utf-8")
    hyp = tmp_path / "x.reseg"
    hyp.write_text("a\n", encoding="utf-8")
    src = tmp_path / "src"
    src.write_text("eins zwei\n", encoding="utf-8")
    completed = subprocess.run([script("evalpipe"), "stream", "latency", "--source", str(src), "--stream", f"{rw}={hyp}"],
                               capture_output=True, text=True, env=child_env(), timeout=120)
    assert completed.returncode == 1 and "action 3: expected 'R' (read) or 'W' (write), got 'X'" in completed.stderr
    rw.write_text("R W W W\n", encoding="utf-8")
    completed = subprocess.run([script("evalpipe"), "stream", "latency", "--source", str(src), "--stream", f"{rw}={hyp}"],
                               capture_output=True, text=True, env=child_env(), timeout=120)
    assert completed.returncode == 1 and "the resegmented output has 1 words, the actions write 3" in completed.stderr
    src.write_text("eins\n\n", encoding="utf-8")
    hyp.write_text("a b\nc\n", encoding="utf-8")
    completed = subprocess.run([script("evalpipe"), "stream", "latency", "--source", str(src), "--stream", f"{rw}={hyp}"],
                               capture_output=True, text=True, env=child_env(), timeout=120)
    assert completed.returncode == 1 and "sentence(s) [2] are empty" in completed.stderr
