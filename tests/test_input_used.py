"""Input given is input used (issue 33): each reproduction of the issue through the console script, compared
with the real anchor where there is one (sacrebleu), and the class tests beside them: systems in the order
typed, optional packages missing, JSON request readers refusing unknown keys.  The option tables have their own
module (tests/test_option_rules.py)."""
from __future__ import annotations

import json
import subprocess
from importlib import resources
from pathlib import Path

import pytest

from conftest import DATA, NEWS, child_env, script

DEMO = Path(str(resources.files("evalpipe").joinpath("demo", "wmt21-ende")))
LONGFORM = Path(str(resources.files("evalpipe").joinpath("demo", "longform")))
REF = DEMO / "ref.de"
SYSTEMS = {name: DEMO / "systems" / f"{name}.de" for name in ("UEdin", "ICL", "Online-W")}


def evalpipe(*args, stdin=None, env=None, timeout=300):
    return subprocess.run([script("evalpipe"), *map(str, args)], input=stdin, capture_output=True, text=True,
                          env=env or child_env(), timeout=timeout)


def one_error(done, *needles, code=None):
    """The run failed with one ``Error:`` line holding every needle, and no internal error."""
    assert done.returncode != 0 and (code is None or done.returncode == code), (done.returncode, done.stderr)
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    for needle in needles:
        assert needle in errors[0], (needle, errors[0])
    return errors[0]


def without(tmp_path, *modules):
    """An environment in which importing each of ``modules`` fails as if it were not installed."""
    folder = tmp_path / "missing"
    folder.mkdir(exist_ok=True)
    for name in modules:
        (folder / f"{name}.py").write_text(f"raise ModuleNotFoundError({'No module named ' + name!r}, name={name!r})\n")
    env = child_env()
    env["PYTHONPATH"] = str(folder)
    return env


# 1. TER scores whatever sacrebleu scores

def test_ter_scores_a_long_line_as_sacrebleu_does(tmp_path):
    import sacrebleu

    hyps = SYSTEMS["UEdin"].read_text(encoding="utf-8").splitlines()[:100]
    refs = REF.read_text(encoding="utf-8").splitlines()[:100]
    hyps[7] = " ".join((" ".join(hyps) + " ").split() * 20)[:200000]  # one line of ~30,000 tokens
    assert len(hyps[7].split()) > 10000
    (tmp_path / "hyp").write_text("\n".join(hyps) + "\n", encoding="utf-8")
    (tmp_path / "ref").write_text("\n".join(refs) + "\n", encoding="utf-8")
    expected = sacrebleu.corpus_ter(hyps, [refs])
    drop_in = evalpipe("sacrebleu", tmp_path / "ref", "-i", tmp_path / "hyp", "-m", "ter", "-b", "-w", "4")
    assert drop_in.returncode == 0, drop_in.stderr
    assert drop_in.stdout.strip() == f"{expected.score:.4f}"
    corpus = evalpipe("score-corpus", "-r", tmp_path / "ref", tmp_path / "hyp", "-m", "ter", "-f", "json")
    assert corpus.returncode == 0, corpus.stderr
    assert json.loads(corpus.stdout)["results"][0]["score"] == pytest.approx(expected.score, abs=1e-9)
    capped = evalpipe("score-corpus", "-r", tmp_path / "ref", tmp_path / "hyp", "-m", "ter", "-o", "max_tokens=1000")
    one_error(capped, "max_tokens=1000")


# 2. systems keep the order typed

@pytest.mark.parametrize("args,order", [
    (["-i", "UEdin", "ICL", "-m", "bleu", "chrf", "Online-W"], ["UEdin", "ICL", "Online-W"]),
    (["Online-W", "-i", "UEdin", "ICL"], ["Online-W", "UEdin", "ICL"]),
    (["--system", "X=ICL", "UEdin", "--input=Online-W"], ["X", "UEdin", "Online-W"]),
])
def test_systems_keep_the_order_typed(args, order):
    words = [str(SYSTEMS[a]) if a in SYSTEMS else (f"X={SYSTEMS['ICL']}" if a == "X=ICL" else
             f"--input={SYSTEMS['Online-W']}" if a == "--input=Online-W" else a) for a in args]
    done = evalpipe("score-corpus", "-r", REF, "--paired-bs", "--paired-n", "20", "-f", "json", *words)
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)["results"]
    systems = list(dict.fromkeys(Path(r["system"]).stem for r in results))
    assert systems == order
    assert all(r["baseline"] == (Path(r["system"]).stem == order[0]) for r in results)


def test_stdin_keeps_its_place():
    done = evalpipe("score-corpus", "-r", REF, "-i", SYSTEMS["UEdin"], "-", "-f", "json",
                    stdin=SYSTEMS["ICL"].read_text(encoding="utf-8"))
    assert done.returncode == 0, done.stderr
    assert [r["system"] for r in json.loads(done.stdout)["results"]] == [str(SYSTEMS["UEdin"]), "-"]


# 3. sentence-level with statistical tests (every pair of the table: tests/test_option_rules.py)

def test_sentence_level_refuses_tests_and_writes_no_report(tmp_path):
    done = evalpipe("score-corpus", "--sentence-level", "--confidence", "--paired-bs", "--all-pairs", "--report",
                    tmp_path / "sl.html", "-r", REF, SYSTEMS["UEdin"], SYSTEMS["ICL"])
    one_error(done, "--sentence-level", "statistical tests are unavailable in sentence-level mode", code=2)
    assert not (tmp_path / "sl.html").exists() and done.stdout == ""
    one_error(evalpipe("score-corpus", "--sentence-level", "-f", "table", "-r", REF, SYSTEMS["UEdin"]), "-f table")
    one_error(evalpipe("score-corpus", "--sentence-level", "-w", "3", "-r", REF, SYSTEMS["UEdin"]), "-w", "with -b")
    rounded = evalpipe("score-corpus", "--sentence-level", "-b", "-w", "3", "-r", REF, SYSTEMS["UEdin"])
    assert rounded.returncode == 0 and all(len(x.split(".")[1]) == 3 for x in rounded.stdout.split()), rounded.stderr


# 4. one reader of MBR JSON for the command and the protocol

def test_mbr_json_lines_take_the_protocols_keys(tmp_path):
    cands = [["a b c d", "a b x d", "q r s"], ["one two", "one three", "four"]]
    pseudo = [["a b c d", "q r s"], ["four", "one two"]]
    weights = [[1.0, 3.0], [2.0, 1.0]]
    (tmp_path / "misspelt.jsonl").write_text(json.dumps({"candidates": cands[0], "weight": [1, 2, 3]}) + "\n")
    one_error(evalpipe("mbr", "--samples", tmp_path / "misspelt.jsonl"), "unknown keys ['weight']")
    both = tmp_path / "both.jsonl"
    both.write_text("".join(json.dumps({"candidates": c, "pseudo_references": p, "weights": w}) + "\n"
                            for c, p, w in zip(cands, pseudo, weights)))
    split_c, split_p = tmp_path / "c.jsonl", tmp_path / "p.jsonl"
    split_c.write_text("".join(json.dumps(c) + "\n" for c in cands))
    split_p.write_text("".join(json.dumps({"pseudo_references": p, "weights": w}) + "\n" for p, w in zip(pseudo, weights)))
    one = evalpipe("mbr", "--samples", both, "-f", "json")
    two = evalpipe("mbr", "--samples", split_c, "--pseudo-references", split_p, "-f", "json")
    assert one.returncode == 0 and two.returncode == 0, one.stderr + two.stderr
    served = evalpipe("serve", "chrf", stdin="".join(
        "MBR ||| " + json.dumps({"candidates": c, "pseudo_references": p, "weights": w}) + "\n"
        for c, p, w in zip(cands, pseudo, weights)))
    for segment, reply in zip(json.loads(one.stdout)["segments"], served.stdout.splitlines()):
        index, utilities = reply.split(" ||| ")
        assert segment["choice"] == int(index) and segment["utilities"] == [float(u) for u in utilities.split()]
    assert json.loads(one.stdout)["segments"] == json.loads(two.stdout)["segments"]
    unweighted = evalpipe("mbr", "--samples", split_c, "--pseudo-references", split_c, "-f", "json")
    assert json.loads(unweighted.stdout)["segments"] != json.loads(one.stdout)["segments"]  # the weights acted
    one_error(evalpipe("mbr", "--samples", both, "--pseudo-references", split_p), '"pseudo_references" is given both')
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"candidates": ["x"]}) + "\n")
    one_error(evalpipe("mbr", "--samples", split_c, "--pseudo-references", bad),
              "unknown keys ['candidates']", "pseudo_references")


@pytest.mark.parametrize("request_line,needle", [
    ('MBR ||| {"candidates": ["a"], "weight": [1]}', "unknown keys ['weight']"),
    ('MBR ||| {"candidates": ["a", "b"], "weights": [1, "x"]}', "weights"),
    ('MBR ||| {"candidates": ["a", "b"], "weights": [1.0]}', "1 weights for 2 pseudo-references"),
    ('SCORE ||| talk ||| {"references": [], "steps": [], "detokeniser": "char"}', "unknown keys ['detokeniser']"),
])
def test_every_json_request_reader_refuses_unknown_keys_and_keeps_serving(request_line, needle):
    metric = "long_al" if "talk" in request_line else "chrf"
    extra = ["--talks"] if "talk" in request_line else []
    done = evalpipe("serve", metric, *extra, stdin=request_line + "\nMBR ||| a ||| b\n" * (metric == "chrf"))
    replies = done.stdout.splitlines()
    assert replies[0].startswith("ERROR |||") and needle in replies[0], replies
    assert "np.float64" not in replies[0]
    if metric == "chrf":
        assert replies[1].startswith("0 ||| ")


# 5-6. one Moses n-best reader for tune and mbr

def test_tune_refuses_an_nbest_list_that_does_not_cover_the_references(tmp_path):
    (tmp_path / "nb").write_text("0 ||| a b ||| f= 1 ||| 1\n1 ||| c d ||| f= 2 ||| 1\n")
    one_error(evalpipe("tune", tmp_path / "nb", "-r", REF, "--restarts", "0"), "segments 0-1 (2)", "300 lines")


def test_one_nbest_reader_for_tune_and_mbr(tmp_path):
    refs = tmp_path / "refs"
    refs.write_text("a b c\nx y\n")
    spaced = tmp_path / "spaced"
    spaced.write_text("0|||a b c|||f= 1|||1\n0 ||| ||| f= 2 ||| 1\n1 ||| x y ||| f= 1 ||| 0\n1|||z|||f= 3|||0\n")
    chosen = evalpipe("mbr", "--nbest", spaced, "-f", "json")
    assert chosen.returncode == 0, chosen.stderr
    doc = json.loads(chosen.stdout)
    assert all("|||" not in s["text"] for s in doc["segments"])
    assert len(doc["segments"][0]["utilities"]) == 2  # "a b c" and the empty hypothesis
    tuned = evalpipe("tune", spaced, "-r", refs, "--restarts", "0")
    assert tuned.returncode == 0, tuned.stderr
    from_one = tmp_path / "from1"
    from_one.write_text("1 ||| a ||| f= 1 ||| 1\n2 ||| b ||| f= 1 ||| 1\n")
    for command in (["mbr", "--nbest", from_one], ["tune", from_one, "-r", refs]):
        one_error(evalpipe(*command), "segment id 0 has no lines", "0-based", "starts at 1")


# 7. meta-eval correlate: the language pair's systems, at least three of them

def test_correlate_refuses_another_language_pairs_scores_and_too_few_systems(tmp_path):
    root = tmp_path / "mtme"
    import shutil

    shutil.copytree(DATA / "wmt21.news", root / "wmt21.news")
    ende = NEWS / "metric-scores" / "en-de" / "chrF-refA.sys.score"
    base = ["meta-eval", "correlate", "--root", root, "--test-set", "wmt21.news"]
    one_error(evalpipe(*base, "-l", "zh-en", "--scores", ende), "zh-en does not have", "UEdin")
    one_error(evalpipe(*base, "-l", "en-de", "--scores", "/dev/null"), "/dev/null", "holds no")
    lines = ende.read_text().splitlines()
    few = tmp_path / "few.score"
    few.write_text("\n".join(line for line in lines if line.split()[0] in ("VolcTrans-AT", "eTranslation")) + "\n")
    one_error(evalpipe(*base, "-l", "en-de", "--scores", few), "2 system(s)", "at least 3", "--min-systems 2")
    allowed = evalpipe(*base, "-l", "en-de", "--scores", few, "--min-systems", "2")
    assert allowed.returncode == 0 and "over 2 systems" in allowed.stdout, allowed.stderr


# 8. stream: no bootstrap over a handful of talks

def test_stream_score_refuses_resampling_two_talks(tmp_path):
    log = tmp_path / "demo.jsonl"
    assert evalpipe("stream", "run", "--demo", "--output", log).returncode == 0
    common = ["stream", "score", "-a", LONGFORM / "audio.json", "-r", LONGFORM / "reference.de", "--log-file", log]
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(log.read_bytes())
    one_error(evalpipe(*common, "--log-file", copy, "--paired-bs"), "--paired-bs resamples talks", "hold 2",
              "at least 10")
    one_error(evalpipe(*common, "--confidence"), "--confidence resamples talks")


# 9. a missing optional package is one line naming what to install

@pytest.mark.parametrize("modules,args,needle", [
    (("MeCab",), ["score-corpus", "-r", REF, "-tok", "ja-mecab", SYSTEMS["UEdin"]], "'sacrebleu[ja]'"),
    (("MeCab",), ["score-corpus", "-r", REF, "-l", "en-ja", SYSTEMS["UEdin"]], "'sacrebleu[ja]'"),
    (("mecab_ko",), ["score-corpus", "-r", REF, "-tok", "ko-mecab", SYSTEMS["UEdin"]], "'sacrebleu[ko]'"),
    (("MeCab",), ["serve", "bleu", "-o", "tokenize=ja-mecab"], "'sacrebleu[ja]'"),
    (("sentencepiece",), ["serve", "bleu", "-o", "tokenize=flores200"], "pip install sentencepiece"),
    (("matplotlib",), ["score-corpus", "-r", REF, "--plot", "x.svg", SYSTEMS["UEdin"]], "'evalpipe[report]'"),
    (("yaml",), ["stream", "score", "-a", NEWS / "sources" / "en-de.txt", "-r", REF, "--log-file", REF], "'evalpipe[stream]'"),
    (("pyspark",), ["score-corpus", "-r", REF, "--engine", "spark", SYSTEMS["UEdin"]], "'evalpipe[spark]'"),
    (("torch",), ["mbr", "--ties", "mbrs", SYSTEMS["UEdin"], SYSTEMS["ICL"]], "torch"),
    (("scipy",), ["score-corpus", "--segment-scores", f"mqm={NEWS / 'human-scores' / 'en-de.mqm.seg.score'}",
                  "--paired-ttest"], "pip install scipy"),
    (("sentencepiece",), ["score-corpus", "--instances", DATA / "simul" / "iwslt17-dev2010.de-en" / "derived" /
                          "wait3.instances.jsonl", "-m", "al", "-o", "target_unit=spm", "-o", f"spm_model={REF}"],
     "pip install sentencepiece"),
    (("sentencepiece",), ["simul", "score", DATA / "simul" / "iwslt17-dev2010.de-en" / "derived" /
                          "wait3.instances.jsonl", "-o", "target_unit=spm", "-o", f"spm_model={REF}"],
     "pip install sentencepiece"),
    (("mweralign",), ["stream", "score", "--log-file", "LOG", "-a", LONGFORM / "audio.json", "-r",
                      LONGFORM / "reference.de", "--resegmenter", "mweralign"], "'evalpipe[mweralign]'"),
    (("mosestokenizer",), ["stream", "score", "--log-file", "LOG", "-a", LONGFORM / "audio.json", "-r",
                           LONGFORM / "reference.de", "--lang", "de"], "'evalpipe[stream]'"),
])
def test_a_missing_optional_package_is_one_line(tmp_path, modules, args, needle):
    if "LOG" in args:
        log = tmp_path / "demo.jsonl"
        assert evalpipe("stream", "run", "--demo", "--output", log).returncode == 0
        args = [log if a == "LOG" else a for a in args]
    done = evalpipe(*args, env=without(tmp_path, *modules), stdin="SCORE ||| a ||| b\n")
    one_error(done, needle, code=1)  # an environment problem: exit 1 in every command


def test_a_report_without_matplotlib_has_its_tables(tmp_path):
    env = without(tmp_path, "matplotlib")
    done = evalpipe("score-corpus", "-r", REF, SYSTEMS["UEdin"], SYSTEMS["ICL"], "--report", tmp_path / "r.html",
                    env=env)
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "Figure left out" in page and "pip install 'evalpipe[report]'" in page and "UEdin" in page
    assert "<svg" not in page and "'evalpipe[report]'" in done.stderr
    demo = evalpipe("report", "--demo", "--output", tmp_path / "demo.html", env=env)
    assert demo.returncode == 0 and "Figure left out" in (tmp_path / "demo.html").read_text(encoding="utf-8")


# 10-11. agents' settings, messages

def test_agent_settings_are_checked_against_the_agent():
    run = ["stream", "run", "--source", LONGFORM / "source.en", "-a", LONGFORM / "audio.json"]
    one_error(evalpipe(*run), "needs --agent-option hypothesis=")
    one_error(evalpipe("simul", "run", "--demo", "--agent-option", "foo=1"), "unknown setting 'foo'", "takes k")
    one_error(evalpipe("simul", "run", "--demo", "--agent-option", "k=abc"), "k expects an integer, got 'abc'")


def test_stream_messages_name_what_they_read(tmp_path):
    short = tmp_path / "src50"
    short.write_text("\n".join(f"sentence {i}" for i in range(50)) + "\n")
    hyp = f"hypothesis={LONGFORM / 'online-w.de'}"
    one_error(evalpipe("stream", "run", "--source", short, "-a", LONGFORM / "audio.json", "--agent-option", hyp),
              "one source line per audio-definition entry")
    one_error(evalpipe("stream", "run", "--source", LONGFORM / "source.en", "-a", LONGFORM / "source.en",
                       "--agent-option", hyp), "source.en", "expected YAML or JSON")
    demo = evalpipe("stream", "run", "--demo")
    assert demo.returncode == 0 and demo.stdout.splitlines()[0].split()[1:] == ["demo", "(Online-W", "replayed)"]


# 13. docs

def test_any_commands_json_makes_a_report(tmp_path):
    mbr = evalpipe("mbr", *SYSTEMS.values(), "-f", "json", "--output", tmp_path / "mbr.json")
    assert mbr.returncode == 0, mbr.stderr
    done = evalpipe("report", tmp_path / "mbr.json", "--output", tmp_path / "mbr.html")
    assert done.returncode == 0, done.stderr
    assert "minimum Bayes risk" in (tmp_path / "mbr.html").read_text(encoding="utf-8")
    one_error(evalpipe("report", tmp_path / "mbr.json", "--output", tmp_path / "x.html", "--sentence", "2"),
              "--sentence")


def test_report_images_resolve_from_the_page_that_links_them():
    from conftest import ROOT
    import re

    page = ROOT / "docs" / "reports.md"
    links = re.findall(r"!\[[^]]*\]\(([^)]+)\)", page.read_text(encoding="utf-8"))
    assert links and all((page.parent / link).exists() for link in links), links


# every core without a flag

def test_the_default_engine_uses_every_core_above_the_threshold_only(monkeypatch):
    from evalpipe import engines
    from evalpipe.engines import AUTO_MIN_WORK, Job, make_engine
    from evalpipe.inputs import TextPairs
    from evalpipe.registry import metric_specs

    monkeypatch.setattr(engines, "available_cores", lambda: 2)
    (spec,) = metric_specs(["bleu"])
    hyps = SYSTEMS["UEdin"].read_text(encoding="utf-8").splitlines()
    refs = REF.read_text(encoding="utf-8").splitlines()
    small = Job(spec, TextPairs(hyps, [refs]))
    copies = -(-AUTO_MIN_WORK // len(hyps))
    large = Job(spec, TextPairs(hyps * copies, [refs * copies]))
    with make_engine() as engine:
        assert engine.name == "pool" and engine.workers == 2
        assert engine.total(small) == spec.build().corpus_partial(hyps, [refs]).finish()
        assert engine._pool is None  # below the threshold: this process, no worker started
        total = engine.total(large)
        assert engine._pool is not None and total == [c * copies for c in engine.total(small)]
    with make_engine(workers=1) as engine:
        assert engine.name == "local"


def test_the_sacrebleu_drop_in_above_the_threshold_with_its_own_paired_jobs(tmp_path):
    """Above the threshold the drop-in computes its rows on every core; inside sacrebleu's -j worker processes
    (daemons, which may not start processes) it stays in one: the output is sacrebleu's, byte for byte."""
    hyps = SYSTEMS["UEdin"].read_text(encoding="utf-8") * 14  # 4,200 lines
    (tmp_path / "a").write_text(hyps, encoding="utf-8")
    (tmp_path / "b").write_text(SYSTEMS["ICL"].read_text(encoding="utf-8") * 14, encoding="utf-8")
    (tmp_path / "ref").write_text(REF.read_text(encoding="utf-8") * 14, encoding="utf-8")
    args = [str(tmp_path / "ref"), "-i", str(tmp_path / "a"), str(tmp_path / "b"), "--paired-bs", "-j", "2",
            "--paired-bs-n", "50", "-m", "bleu", "chrf", "-f", "text"]
    ours = evalpipe("sacrebleu", *args)
    theirs = subprocess.run([script("sacrebleu"), *args], capture_output=True, text=True, env=child_env(), timeout=300)
    assert ours.returncode == 0 and theirs.returncode == 0, ours.stderr[-500:]
    assert ours.stdout == theirs.stdout
