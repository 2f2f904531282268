"""score-corpus against sacrebleu's own CLI and API run here on the same files."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import sacrebleu
from click.testing import CliRunner
from sacrebleu.significance import PairedTest

from conftest import script, child_env, lines
from evalpipe.cli.score_corpus import score_corpus


def sacrebleu_cli(args):
    out = subprocess.run([sys.executable, "-m", "sacrebleu", *args, "-w", "16"], capture_output=True, text=True,
                         check=True, timeout=600)
    doc = json.loads(out.stdout)
    return doc if isinstance(doc, list) else [doc]


def ours(args, input=None):
    result = CliRunner().invoke(score_corpus, args, input=input)
    return result


def ours_json(args, input=None):
    result = ours([*args, "--format", "json", "--quiet"], input=input)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize("metrics, extra, sacre_extra", [
    (["bleu", "chrf", "ter"], [], []),
    (["bleu", "chrf"], ["-o", "bleu.tokenize=intl", "-o", "chrf.word_order=2"], ["-tok", "intl", "-cw", "2"]),
    (["bleu", "chrf"], ["-o", "bleu.lowercase=true", "-o", "chrf.lowercase=yes"], ["-lc", "--chrf-lowercase"]),
])
def test_numbers_and_signatures_equal_sacrebleu_cli(news, metrics, extra, sacre_extra):
    p = news["paths"]
    refs = [p["ende_ref"], p["ende_ref2"]]
    system = p["ende_sys"][0]
    mine = ours_json(["-r", refs[0], "-r", refs[1], *[a for m in metrics for a in ("-m", m)], *extra, system])
    theirs = sacrebleu_cli([*refs, "-i", system, "-m", *metrics, *sacre_extra])
    assert [r["metric"] for r in mine["results"]] == metrics
    for r, t in zip(mine["results"], theirs):
        assert round(r["score"], 16) == t["score"]
        assert r["signature"] == t["signature"]


def test_minimal_form_and_stdin(news):
    p = news["paths"]
    system = p["ende_sys"][0]
    exe = script("score-corpus")
    out = subprocess.run([exe, "-r", p["ende_ref"], system, "-f", "tsv"], capture_output=True, text=True,
                         env=child_env(), timeout=120, check=True).stdout
    score = float(out.splitlines()[1].split("\t")[2])
    expected = sacrebleu.BLEU().corpus_score(lines(system), [lines(p["ende_ref"])]).score
    assert score == expected
    with open(system, "rb") as handle:
        piped = subprocess.run([exe, "-r", p["ende_ref"], "-f", "json"], stdin=handle, capture_output=True,
                               text=True, env=child_env(), timeout=120, check=True).stdout
    assert json.loads(piped)["results"][0]["score"] == expected
    assert json.loads(piped)["results"][0]["system"] == "stdin"


def test_table_is_the_default(news):
    p = news["paths"]
    result = ours(["-r", p["ende_ref"], "-q", *p["ende_sys"][:2]])
    assert result.exit_code == 0
    assert result.output.splitlines()[0].split() == ["system", "BLEU"]  # sacrebleu's name
    assert "nrefs:1|case:mixed" in result.output


def test_confidence_interval_matches_sacrebleu(news):
    p = news["paths"]
    system = p["ende_sys"][0]
    mine = ours_json(["-r", p["ende_ref"], "--confidence", system])["results"][0]
    theirs = sacrebleu_cli([p["ende_ref"], "-i", system, "-m", "bleu", "--confidence"])[0]
    assert mine["signature"] == theirs["signature"]
    assert mine["mean"] == pytest.approx(theirs["confidence_mean"], abs=1e-3)
    assert (mine["ci"][1] - mine["ci"][0]) / 2 == pytest.approx(theirs["confidence_var"], abs=1e-3)


@pytest.mark.parametrize("test, flag", [("bs", "--paired-bs"), ("ar", "--paired-ar")])
def test_paired_tests_match_sacrebleu(news, test, flag):
    p = news["paths"]
    systems = p["ende_sys"][:3]
    args = ["-r", p["ende_ref"], "-m", "bleu", "-m", "chrf", flag, *systems]
    if test == "ar":
        args += ["--paired-n", "2000"]
    mine = ours_json(args)
    refs = [lines(p["ende_ref"])]
    named = [(s, lines(s)) for s in systems]
    sigs, scores = PairedTest(named, {"BLEU": sacrebleu.BLEU(), "chrF2": sacrebleu.CHRF()}, refs, test_type=test,
                              n_samples=2000 if test == "ar" else 0)()
    assert mine["test"]["type"] == test
    for metric, key in (("bleu", "BLEU"), ("chrf", "chrF2")):
        rows = [r for r in mine["results"] if r["metric"] == metric]
        assert rows[0]["baseline"] and rows[0]["p_value"] is None
        for row, res in zip(rows, scores[key]):
            assert row["score"] == res.score
            if res.p_value is not None:
                assert row["p_value"] == pytest.approx(res.p_value, abs=0.002)
        assert rows[0]["signature"] == sigs[key].format()


def test_sentence_level(news):
    p = news["paths"]
    system = p["ende_sys"][0]
    result = ours(["-r", p["ende_ref"], "-m", "chrf", "--sentence-level", "-f", "json", system])
    records = [json.loads(x) for x in result.output.splitlines()]
    hyps, refs = lines(system), lines(p["ende_ref"])
    assert len(records) == len(hyps)
    chrf = sacrebleu.CHRF()
    for rec, h, r in list(zip(records, hyps, refs))[:100]:
        assert rec["score"] == chrf.sentence_score(h, [r]).score


def test_several_optimizer_runs(news):
    p = news["paths"]
    s = p["ende_sys"]
    doc = ours_json(["-r", p["ende_ref"], "--system", f"base={s[0]},{s[1]}", "--system", f"new={s[2]},{s[1]}",
                     "--paired-ar", "--paired-n", "500"])
    base, new = doc["results"]
    assert doc["test"]["type"] == "stratified-ar"
    assert base["runs"] == new["runs"] == 2
    refs = [lines(p["ende_ref"])]
    run_scores = [sacrebleu.BLEU().corpus_score(lines(f), refs).score for f in (s[2], s[1])]
    assert new["run_scores"] == run_scores
    assert new["score"] == pytest.approx(np.mean(run_scores), abs=1e-12)
    assert new["sd_runs"] == pytest.approx(np.std(run_scores, ddof=1))
    assert new["sd_bootstrap"] > 0 and 0 < new["p_value"] <= 1


def test_workers_give_identical_results(news):
    p = news["paths"]
    args = ["-r", p["ende_ref"], "-m", "bleu", "-m", "chrf", *p["ende_sys"][:2]]
    assert ours_json(args + ["--workers", "2"])["results"] == ours_json(args)["results"]


def test_line_count_mismatch_names_both_files(tmp_path, news):
    short = tmp_path / "short.txt"
    short.write_text("a\nb\n")
    result = ours(["-r", news["paths"]["ende_ref"], str(short)])
    assert result.exit_code == 1
    assert "short.txt has 2 lines" in result.output and "has 150 lines" in result.output


def test_undecodable_bytes_name_file_and_line(tmp_path):
    ref = tmp_path / "ref.txt"
    ref.write_text("a\nb\n")
    hyp = tmp_path / "hyp.txt"
    hyp.write_bytes(b"a\nb\xff\n")
    result = ours(["-r", str(ref), str(hyp)])
    assert result.exit_code == 1 and "hyp.txt, line 2" in result.output


def test_empty_file(tmp_path):
    ref = tmp_path / "ref.txt"
    ref.write_text("")
    result = ours(["-r", str(ref), str(ref)])
    assert result.exit_code == 1 and "is empty" in result.output


def test_unknown_metric_and_option_are_usage_errors(tmp_path):
    ref = tmp_path / "ref.txt"
    ref.write_text("a\n")
    result = ours(["-r", str(ref), "-m", "blue", str(ref)])
    assert result.exit_code == 2 and "installed: accuracy, al" in result.output and "bleu" in result.output
    result = ours(["-r", str(ref), "-o", "bleu.tokenise=intl", str(ref)])
    assert result.exit_code == 2 and "valid options" in result.output
    result = ours(["-r", str(ref), "--paired-bs", "--paired-ar", str(ref), str(ref)])
    assert result.exit_code == 2


def test_streamed_files_score_exactly_as_files_read_whole(tmp_path):
    """With nothing resampled the local engine streams the files in blocks (evalpipe.inputs.STREAM_BLOCK);
    the JSON results equal those of the pool engine, which reads the files whole, on CRLF files across
    several blocks; errors still name the file and line."""
    import evalpipe.inputs as inputs

    hyps = [f"the cat {i} sat on the mat" if i % 3 else f"a dog {i}\r" for i in range(1234)]
    refs = [f"the cat {i} sat on a mat" for i in range(1234)]
    (tmp_path / "h.txt").write_bytes(("\r\n".join(hyps) + "\r\n").encode())
    (tmp_path / "r.txt").write_text("\n".join(refs) + "\n")
    args = ["-r", str(tmp_path / "r.txt"), "-m", "bleu", "-m", "chrf", "-m", "ter", "-f", "json", "-q",
            str(tmp_path / "h.txt")]
    block = inputs.STREAM_BLOCK
    inputs.STREAM_BLOCK = 100
    try:
        streamed = json.loads(CliRunner().invoke(score_corpus, args).output)
        (tmp_path / "bad.txt").write_bytes(b"ok\n" * 150 + b"bad \xff\n" + b"ok\n" * 1083)
        bad = CliRunner().invoke(score_corpus, args[:-1] + [str(tmp_path / "bad.txt")])
        (tmp_path / "short.txt").write_text("x\n" * 1000)
        short = CliRunner().invoke(score_corpus, args[:-1] + [str(tmp_path / "short.txt")])
    finally:
        inputs.STREAM_BLOCK = block
    whole = json.loads(CliRunner().invoke(score_corpus, args + ["--engine", "pool", "--workers", "2"]).output)
    assert streamed["results"] == whole["results"] and streamed["segments"] == 1234
    assert bad.exit_code == 1 and "bad.txt, line 151: expected UTF-8 text" in bad.output
    assert short.exit_code == 1 and "short.txt has 1000 lines" in short.output and "r.txt has 1234 lines" in short.output
