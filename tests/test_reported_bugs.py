"""The bugs and gaps reported against the old seams, each reproduced through the real CLI or a real pipe.

* ``score-corpus -m bleu-ter -o tokenize=intl`` was rejected while ``serve`` accepted it (two
  metric-loading paths);
* ``score-corpus --instances LOG -m al --engine spark`` failed (engines guessed the input kind);
* a plugin raising inside ``stats`` looked like bad input (traceback at DEBUG);
* ``Client`` had no timeout and hung on a silent server.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import sacrebleu

from conftest import DATA, NEWS, child_env, lines, script
from evalpipe.errors import ProtocolError, ProtocolTimeout
from evalpipe.protocol import Client

REF = NEWS / "references" / "en-de.refA.txt"
SYSTEM = NEWS / "system-outputs" / "en-de" / "Facebook-AI.txt"
LOG = DATA / "simul" / "iwslt17-dev2010.de-en" / "derived" / "wait3.instances.jsonl"


def run(*args, stdin=None, timeout=120):
    return subprocess.run([script("evalpipe"), *map(str, args)], input=stdin, capture_output=True, text=True,
                          env=child_env(), timeout=timeout)


def test_combination_options_reach_members_in_score_corpus_as_in_serve():
    result = run("score-corpus", "-r", REF, "-m", "bleu-ter", "-o", "tokenize=intl", "-f", "json", SYSTEM)
    assert result.returncode == 0, result.stderr
    (row,) = json.loads(result.stdout)["results"]
    hyps, refs = lines(SYSTEM), [lines(REF)]
    bleu = sacrebleu.BLEU(tokenize="intl").corpus_score(hyps, refs).score
    ter = sacrebleu.TER().corpus_score(hyps, refs).score
    assert row["score"] == pytest.approx((bleu - ter) / 2, rel=1e-13)
    assert "tok:intl" in row["signature"] and "nrefs:1" in row["signature"]
    requests = "".join(f"SCORE ||| {r} ||| {h}\n" for h, r in zip(hyps[:20], refs[0][:20]))
    served = run("serve", "bleu-ter", "-o", "tokenize=intl", stdin=requests)
    direct = run("serve", "bleu-ter", "-o", "bleu.tokenize=intl", stdin=requests)
    assert served.returncode == 0 and served.stdout == direct.stdout and "ERROR" not in served.stdout
    unknown = run("score-corpus", "-r", REF, "-m", "bleu-ter", "-o", "word_order=2", SYSTEM)
    assert unknown.returncode == 2 and "matches no metric of bleu-ter" in unknown.stderr


@pytest.mark.spark
def test_instances_log_scores_the_same_on_every_engine():
    pytest.importorskip("pyspark")
    base = ["score-corpus", "--instances", LOG, "-m", "al", "-m", "laal", "-m", "bleu", "-f", "json", "-q"]
    outputs = {}
    for engine in (["--engine", "local"], ["--workers", "2"], ["--engine", "spark", "--spark-master", "local[2]"]):
        result = run(*base, *engine, timeout=300)
        assert result.returncode == 0, result.stderr
        outputs[engine[-1]] = json.loads(result.stdout)["results"]
    assert outputs["local"] == outputs["2"] == outputs["local[2]"]


def _serve_plugin(requests: str):
    plugin_dir = Path(__file__).parent / "plugins"
    env = dict(child_env(), PYTHONPATH=str(plugin_dir))
    return subprocess.run([script("evalpipe"), "serve", "broken_plugin:Broken"], input=requests,
                          capture_output=True, text=True, env=env, timeout=60)


def test_plugin_bug_is_an_internal_error_logged_with_traceback_and_serving_goes_on():
    result = _serve_plugin("SCORE ||| a ||| boom\nSCORE ||| a b ||| a b\nEVAL ||| 1 2\n")
    assert result.returncode == 0
    replies = result.stdout.splitlines()
    assert len(replies) == 3
    assert replies[0] == "ERROR ||| internal error: ZeroDivisionError: the plugin divided by zero"
    assert replies[1:] == ["2 2", "0.5"]
    assert "ERROR evalpipe.protocol.dispatch: internal error while serving" in result.stderr
    assert "Traceback (most recent call last)" in result.stderr and "ZeroDivisionError" in result.stderr


def test_bad_input_is_not_an_internal_error():
    result = _serve_plugin("SCORE ||| only-one-field\n")
    assert result.stdout.startswith("ERROR ||| SCORE expects at least one reference")
    assert "internal error" not in result.stdout and "Traceback" not in result.stderr


def test_client_times_out_naming_the_request():
    silent = [sys.executable, "-c", "import sys, time; sys.stdin.readline(); time.sleep(60)"]
    client = Client("bleu", command=silent, timeout=0.5)
    with pytest.raises(ProtocolTimeout, match=r"no reply within 0.5 s to 'SCORE \|\|\| ref \|\|\| hyp'") as info:
        client.score("hyp", ["ref"])
    assert isinstance(info.value, TimeoutError)
    with pytest.raises(ProtocolError, match="cannot be used any more"):
        client.info()
    client.close()
    assert client.process.returncode is not None


def test_client_says_when_the_server_died():
    dying = [sys.executable, "-c", "import sys; sys.stdin.readline(); sys.exit(3)"]
    with Client("bleu", command=dying, timeout=30) as client:
        with pytest.raises(ProtocolError, match=r"exited with code 3 before answering 'INFO'"):
            client.info()


def test_client_round_trip_with_timeout():
    with Client("bleu", timeout=60) as client:
        stats = client.score("the cat sat", ["the cat sat down"])
        assert client.evaluate(stats) == sacrebleu.corpus_bleu(["the cat sat"], [["the cat sat down"]]).score


# -- found by the differential tests (tests/test_differential.py), issue 26 ----------------------------------

def test_chrf_orders_and_beta_sacrebleu_accepts_score_as_sacrebleu(tmp_path):
    """``-o char_order=0`` (word n-grams only) crashed the C block kernel; ``beta=0`` was refused."""
    hyps, refs = lines(SYSTEM)[:200], [lines(REF)[:200]]
    (tmp_path / "hyp.txt").write_text("".join(h + "\n" for h in hyps), encoding="utf-8")
    (tmp_path / "ref.txt").write_text("".join(r + "\n" for r in refs[0]), encoding="utf-8")
    for options, kwargs in ((["-o", "char_order=0", "-o", "word_order=2"], {"char_order": 0, "word_order": 2}),
                            (["-o", "beta=0"], {"beta": 0})):
        result = run("score-corpus", "-r", tmp_path / "ref.txt", "-m", "chrf", *options, "-f", "json",
                     tmp_path / "hyp.txt")
        assert result.returncode == 0, result.stderr
        (row,) = json.loads(result.stdout)["results"]
        assert row["score"] == sacrebleu.CHRF(**kwargs).corpus_score(hyps, refs).score
    result = run("score-corpus", "-r", tmp_path / "ref.txt", "-m", "chrf", "-o", "char_order=0", tmp_path / "hyp.txt")
    assert result.returncode != 0 and "char_order and word_order are both 0" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_correlate_with_a_nan_score_drops_the_row_as_scipy():
    """A NaN metric score made Kendall count its pairs as discordant and Pearson clip NaN to 1.0; scipy
    (MTME's rows) gives NaN, and the row leaves the average."""
    scores = [line.split() for line in (NEWS / "metric-scores" / "en-de" / "BLEU-refA.sys.score").read_text().splitlines()]
    scores = [[system, "nan" if system == "Facebook-AI" else value] for system, value in scores]
    base = ["meta-eval", "correlate", "--root", NEWS.parent, "--test-set", NEWS.name, "-l", "en-de", "--level", "sys",
            "-f", "json"]
    stdin = "".join(f"{s} {v}\n" for s, v in scores)
    for statistic in ("pearson", "spearman", "kendall"):
        result = run(*base, "--statistic", statistic, stdin=stdin)
        assert result.returncode == 0, result.stderr
        doc = json.loads(result.stdout)
        # MTME averages no row as 0; evalpipe prints what it is: undefined, with the reason
        assert (doc["rows_averaged"], doc["correlation"], doc["undefined"]) == (0, None, "NaN scores"), doc


def test_significance_tests_name_a_nan_score():
    scores = [line.split() for line in (NEWS / "metric-scores" / "en-de" / "BLEU-refA.sys.score").read_text().splitlines()]
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / NEWS.name
        shutil.copytree(NEWS, root)
        target = root / "metric-scores" / "en-de" / "BLEU-refA.sys.score"
        target.write_text("".join(f"{s} {'nan' if s == 'Facebook-AI' else v}\n" for s, v in scores))
        for test in ("permutation", "bootstrap", "pairwise"):
            result = run("meta-eval", "compare", "--root", tmp, "--test-set", NEWS.name, "-l", "en-de", "--level", "sys",
                         "--test", test, "-k", "20", *(["--statistic", "accuracy"] if test == "pairwise" else []),
                         "BLEU-refA", "COMET-refA")
            assert result.returncode == 1 and "needs numbers: row 1 holds a NaN metric score" in result.stderr, \
                result.stderr
            assert "Traceback" not in result.stderr


def test_stream_score_reports_an_undefined_latency_beside_the_others(tmp_path):
    """Every word emitted after its recording ended: OmniSTEval's YAAL is NaN and its AL a number; evalpipe
    stopped the whole run with one error.  Now YAAL is null with a note (a warning on stderr), the rest as
    usual, exit 0; a run where nothing at all is defined still exits 1 with one line."""
    from streamlogs import write_case

    case = write_case(tmp_path, [("talk0", ["s", "s", "s"], ["Die", "Die", "Die"], ["", "", "Die"],
                                  ["Die", "Die", "Die"])], "word", 0, chunk=0.3, retract=0.0, lag=1)
    base = ["stream", "score", "--log-file", case["log"], "-a", case["audio"], "-r", case["ref"], "--eval-config",
            case["config"]]
    result = run(*base, "-f", "json")
    assert result.returncode == 0, result.stderr
    scores = {r["metric"]: r for r in json.loads(result.stdout)["results"]}
    assert scores["long_yaal"]["score"] is None and "no sentence could be scored" in scores["long_yaal"]["note"]
    assert scores["long_al"]["score"] > 0 and "undefined long_yaal" in result.stderr
    text = run(*base)
    assert text.returncode == 0 and "n/a" in text.stdout
    only = run(*base, "-m", "long_yaal")
    assert only.returncode == 1 and only.stderr.strip().endswith("emission times in the input)"), only.stderr
