"""Invariants every command keeps, each checked by walking every click command (``commands()`` of
tests/test_cli_conventions.py), so that a command added later inherits them:

* a value given twice is refused: a single-value option given twice (under any of its spellings), the same value
  twice in an option or argument that takes several -- one usage error (exit 2) naming the option, before
  anything is read;
* nothing is overwritten without asking: a command that writes into a data folder under names it chooses (the
  commands with ``--force``) refuses to replace a file there in one line naming it, writes nothing, and replaces
  it with ``--force``;
* exit codes: 2 for usage (an unknown option, a value click refuses), 1 for input or environment (a file that
  does not exist), the same in every command, one ``Error:`` line and no traceback.

``evalpipe sacrebleu`` is left out: its arguments are sacrebleu's own.
"""
from __future__ import annotations

from pathlib import Path
from typing import List

import click
import pytest
from click.testing import CliRunner

from evalpipe.cli import main
from test_cli_conventions import commands, options


def _value(param: click.Parameter) -> str:
    choices = getattr(param.type, "choices", None)
    if choices:
        return str(list(choices)[-1])
    if isinstance(param.type, (click.types.IntParamType, click.types.FloatParamType, click.types.IntRange,
                               click.types.FloatRange)):
        return "3"
    return "value"


def _typed(param: click.Option, value: str) -> List[str]:
    return [param.opts[0]] if param.is_flag or param.count else [param.opts[0], value]


def _single_cases():
    for name, cmd in sorted(commands().items()):
        for param in options(cmd):
            if param.multiple or param.count or param.is_eager:
                continue
            yield pytest.param(name, param, id=f"{name} {param.opts[0]}")


def _several_cases():
    for name, cmd in sorted(commands().items()):
        for param in cmd.params:
            takes_several = getattr(param, "multiple", False) or (isinstance(param, click.Argument) and param.nargs == -1)
            if takes_several and not getattr(param, "is_flag", False) and not getattr(param, "hidden", False):
                yield pytest.param(name, param, id=f"{name} {param.human_readable_name}")


def _refused(args: List[str], needle: str) -> None:
    result = CliRunner().invoke(main, args)
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert result.exit_code == 2 and len(errors) == 1 and needle in errors[0], (args, result.output)


@pytest.mark.parametrize("name,param", list(_single_cases()))
def test_a_single_value_option_given_twice_is_refused(name, param):
    words = _typed(param, _value(param))
    second = [param.secondary_opts[0]] if param.secondary_opts else words
    _refused(name.split() + words + second, "given twice")


@pytest.mark.parametrize("name,param", list(_several_cases()))
def test_the_same_value_twice_in_an_option_that_takes_several_is_refused(name, param):
    value = "x=1" if "-o" in getattr(param, "opts", ()) or "--agent-option" in getattr(param, "opts", ()) else \
        "NAME=FILE" if "--segment-scores" in getattr(param, "opts", ()) or "--system" in getattr(param, "opts", ()) \
        else _value(param)
    words = [value, value] if isinstance(param, click.Argument) else [param.opts[0], value, param.opts[0], value]
    _refused(name.split() + words, "given twice")


@pytest.mark.parametrize("args,needle", [
    (["score-corpus", "-tok", "intl", "-o", "bleu.tokenize=13a", "-r", __file__, __file__], "set the same option"),
    (["score-corpus", "-lc", "-o", "lowercase=true", "-r", __file__, __file__], "set the same option"),
    (["serve", "bleu", "-o", "tokenize=intl", "-o", "bleu.tokenize=13a"], "set the same option"),
    (["meta-eval", "tasks", "--root", ".", "--recipe", "WMT23", "-l", "en-de,en-de"], "'en-de' given twice"),
    (["meta-eval", "matrix", "--root", ".", "--test-set", "x", "-l", "en-de", "-m", "a,b", "-m", "b"],
     "'b' given twice"),
])
def test_a_value_given_twice_through_two_spellings_is_refused(tmp_path, args, needle):
    (tmp_path / "x").mkdir()
    args = [str(tmp_path) if a == "." else a for a in args]
    result = CliRunner().invoke(main, args)
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert result.exit_code == 2 and len(errors) == 1 and needle in errors[0], (args, result.output)


@pytest.mark.parametrize("name", sorted(commands()))
def test_an_unknown_option_is_a_usage_error(name):
    _refused(name.split() + ["--no-such-option"], "No such option")


#: for each command that writes into a test set under names it chooses: a test set of tests/data (copied) and
#: arguments that write there
WRITERS = {
    "meta-eval add-metric": ("wmt21.news", ["chrf", "--name", "chrF"]),  # the official chrF files
    "meta-eval mqm-scores": ("wmt21.tedtalks", ["RATINGS"]),  # its default --name mqm: the gold MQM files
}


def test_every_command_with_force_is_walked():
    having = {name for name, cmd in commands().items() if any("--force" in o.opts for o in options(cmd))}
    assert having == set(WRITERS)


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_nothing_is_overwritten_without_force(tmp_path, name):
    import shutil

    from conftest import DATA

    test_set, words = WRITERS[name]
    shutil.copytree(DATA / test_set, tmp_path / test_set)
    ratings = tmp_path / "ratings.tsv"
    ratings.write_text("system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\n"
                       "Facebook-AI\ttalk.1\t1\t1\tr1\ts\tt\tNo-error\tNo-error\n", encoding="utf-8")
    args = name.split() + [str(ratings) if a == "RATINGS" else a for a in words] + [
        "--root", str(tmp_path), "--test-set", test_set, "-l", "en-de"]
    before = {p: p.read_bytes() for p in (tmp_path / test_set).rglob("*") if p.is_file()}
    first = CliRunner().invoke(main, args)
    if first.exit_code == 0:  # it wrote new files: a second run finds them
        before = {p: p.read_bytes() for p in (tmp_path / test_set).rglob("*") if p.is_file()}
        first = CliRunner().invoke(main, args)
    errors = [line for line in first.output.splitlines() if line.startswith("Error:")]
    assert first.exit_code == 1 and len(errors) == 1 and "--force" in errors[0], first.output
    assert str(tmp_path / test_set) in errors[0]
    assert {p: p.read_bytes() for p in (tmp_path / test_set).rglob("*") if p.is_file()} == before
    forced = CliRunner().invoke(main, args + ["--force"])
    assert forced.exit_code in (0, 1) and "--force" not in forced.output, forced.output


def test_a_metric_name_cannot_write_outside_the_metric_scores_folder(tmp_path):
    import shutil

    from conftest import NEWS

    shutil.copytree(NEWS, tmp_path / "wmt21.news")
    result = CliRunner().invoke(main, ["meta-eval", "add-metric", "chrf", "--name", "a/b", "--root", str(tmp_path),
                                       "--test-set", "wmt21.news", "-l", "en-de"])
    assert result.exit_code == 2 and "--name" in result.output and "(no /)" in result.output


# A metric's direction travels with its scores

def _lower_is_better_text_metrics():
    from evalpipe.registry import list_metrics, load_class

    out = []
    for name in list_metrics():
        cls = load_class(name)
        if not cls.higher_is_better and cls.hypothesis_kind == "text" and getattr(cls, "min_references", 1) >= 1 \
                and not getattr(cls, "reads_source", False):  # (MetricX, a model: tests/test_metricx.py checks the same)
            out.append(name)
    return out


def test_the_walk_finds_the_lower_is_better_metrics():
    assert {"ter", "wer"} <= set(_lower_is_better_text_metrics())


def _evalpipe_json(args):
    import json
    import subprocess

    from conftest import child_env, script

    done = subprocess.run([script("evalpipe"), *map(str, args)], capture_output=True, text=True, env=child_env(),
                          timeout=300)
    assert done.returncode == 0, (args, done.stderr)
    return done


def _ranking(doc, metric):
    pair = doc["pairwise"][metric]
    return pair["systems"], pair["clusters"]


@pytest.mark.parametrize("metric", _lower_is_better_text_metrics())
def test_a_lower_is_better_metric_ranks_and_chooses_as_its_negation(tmp_path, metric):
    """Its ranking (score-corpus's clusters over segment scores declared lower) equals the ranking of the negated
    scores declared higher; MBR with it as the utility chooses what the negated expected utility chooses; its
    MTME files hold the negated scores (higher is better, as MTME ranks them)."""
    import json
    import shutil

    from conftest import DATA, lines
    from evalpipe import load_metric

    news = DATA / "wmt21.news"
    ref = news / "references" / "en-de.refA.txt"
    systems = sorted((news / "system-outputs" / "en-de").glob("*.txt"))[:4]
    scorer = load_metric(metric)
    refs = lines(ref)
    scores = {s.stem: [scorer.score(scorer.stats(h, [r])) for h, r in zip(lines(s), refs)] for s in systems}
    plain, negated = [], []
    for name, values in scores.items():
        (tmp_path / f"{name}.lower").write_text("".join(f"{v!r}\n" for v in values))
        (tmp_path / f"{name}.higher").write_text("".join(f"{-v!r}\n" for v in values))
        plain.append(str(tmp_path / f"{name}.lower"))
        negated.append(str(tmp_path / f"{name}.higher"))
    common = ["score-corpus", *map(str, systems), "--all-pairs", "--paired-bs", "-f", "json"]
    low = json.loads(_evalpipe_json(common + ["--segment-scores", "M=" + ",".join(plain), "-o", "M.direction=lower"]
                                    ).stdout)
    high = json.loads(_evalpipe_json(common + ["--segment-scores", "N=" + ",".join(negated), "-o",
                                               "N.direction=higher"]).stdout)
    assert _ranking(low, "M") == _ranking(high, "N")
    best = _ranking(low, "M")[0][0]
    assert Path(best).stem == min(scores, key=lambda s: sum(scores[s]))  # the lowest mean ranks first
    corpus = json.loads(_evalpipe_json(["score-corpus", "-r", ref, *map(str, systems), "-m", metric, "--all-pairs",
                                        "--paired-bs", "-f", "json"]).stdout)
    ranked = corpus["pairwise"][metric]["systems"]
    by_score = {r["system"]: r["score"] for r in corpus["results"]}
    assert [by_score[s] for s in ranked] == sorted(by_score.values())  # best first: lowest first

    # MBR: each segment's choice minimises the expected utility (maximises the negated one)
    cands = [[lines(s)[i] for s in systems] for i in range(8)]
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps(c) + "\n" for c in cands))
    chosen = _evalpipe_json(["mbr", "--samples", samples, "-m", metric]).stdout.splitlines()
    for c, pick in zip(cands, chosen):
        negated_eu = [-sum(scorer.score(scorer.stats(h, [r])) for r in c) / len(c) for h in c]
        assert pick == c[negated_eu.index(max(negated_eu))]

    # MTME's files: negated, said on stderr
    shutil.copytree(news, tmp_path / "wmt21.news")
    added = _evalpipe_json(["meta-eval", "add-metric", metric, "--root", tmp_path, "--test-set", "wmt21.news", "-l",
                            "en-de", "-r", "refA"])
    assert "negated" in added.stderr
    seg = tmp_path / "wmt21.news" / "metric-scores" / "en-de" / f"{metric}-refA.seg.score"
    stored = {}
    for line in seg.read_text().splitlines():
        system, value = line.split("\t")
        stored.setdefault(system, []).append(float(value))
    for name, values in scores.items():
        assert stored[name] == [0.0 - v for v in values]


# Undefined is printed as undefined; resources grow with the work done, not the number asked for

def _constant_set(tmp_path):
    import shutil

    from conftest import NEWS

    shutil.copytree(NEWS, tmp_path / "wmt21.news")
    folder = tmp_path / "wmt21.news" / "metric-scores" / "en-de"
    rows = (folder / "BLEU-refA.sys.score").read_text().splitlines()
    (folder / "CONST-refA.sys.score").write_text("".join(f"{r.split()[0]}\t1.0\n" for r in rows))
    return ["--root", str(tmp_path), "--test-set", "wmt21.news", "-l", "en-de"]


@pytest.mark.parametrize("statistic", ["pearson", "spearman", "kendall"])
def test_a_correlation_of_constant_scores_is_undefined(tmp_path, statistic):
    import json

    base = _constant_set(tmp_path)
    scores = str(tmp_path / "wmt21.news" / "metric-scores" / "en-de" / "CONST-refA.sys.score")
    text = CliRunner().invoke(main, ["meta-eval", "correlate", *base, "--scores", scores, "--statistic", statistic])
    assert text.exit_code == 0 and "= undefined (constant metric scores)" in text.output and "0.0000" not in text.output
    doc = json.loads(CliRunner().invoke(main, ["meta-eval", "correlate", *base, "--scores", scores, "--statistic",
                                               statistic, "-f", "json"]).output)
    assert doc["correlation"] is None and doc["undefined"] == "constant metric scores"
    compared = CliRunner().invoke(main, ["meta-eval", "compare", *base, "BLEU-refA", "CONST-refA", "--statistic",
                                         statistic])
    assert compared.exit_code == 1 and "undefined (constant metric scores)" in compared.output


@pytest.mark.parametrize("test,needle", [("permutation", "trials)"), ("bootstrap", "at most")])
def test_a_huge_k_stops_early_or_is_one_line(tmp_path, test, needle):
    base = _constant_set(tmp_path)
    done = CliRunner().invoke(main, ["meta-eval", "compare", *base, "BLEU-refA", "chrF-refA", "--test", test,
                                     "-k", "99999999999999999999"])
    assert needle in done.output and "internal error" not in done.output, done.output
    assert done.exit_code == (0 if test == "permutation" else 2)


def test_early_stopping_in_batches_is_early_stopping_at_once():
    """The trials counted batch by batch stop where they would stop counted at once (MTME's rule)."""
    import numpy as np

    from evalpipe.meta.significance import EarlyStopping

    rng = np.random.default_rng(3)
    for p in (0.01, 0.3, 0.6):
        hits = rng.random(5000) < p
        whole = EarlyStopping(len(hits), 100, 0.02, 0.5)
        whole.add(hits)
        for batch in (1, 37, 100, 1000):
            parts = EarlyStopping(len(hits), 100, 0.02, 0.5)
            for size in parts.batches(batch):
                parts.add(hits[parts.trials:parts.trials + size])
            assert parts.result(0.0) == whole.result(0.0)


@pytest.mark.parametrize("value", ["2", "-1", "0"])
def test_a_threshold_outside_0_1_is_refused(value):
    result = CliRunner().invoke(main, ["meta-eval", "matrix", "--root", ".", "--test-set", "x", "-l", "en-de",
                                       "--threshold", value])
    assert result.exit_code == 2 and "--threshold" in result.output


@pytest.mark.parametrize("key,names,needle", [
    ("outlier_systems", ["NoSuchSystem"], "outlier_systems names NoSuchSystem, none of which is a system"),
    ("primary_metrics", ["NoSuchMetric"], "primary_metrics names NoSuchMetric, none of which is a metric"),
])
def test_meta_info_naming_nothing_the_set_has_is_refused(tmp_path, key, names, needle):
    import json
    import shutil

    from conftest import NEWS

    shutil.copytree(NEWS, tmp_path / "wmt21.news")
    info = {"en-de": {"std_ref": "refA", "std_gold": {"sys": "mqm", "seg": "mqm"}, key: names}}
    (tmp_path / "wmt21.news" / "meta-info.json").write_text(json.dumps(info))
    result = CliRunner().invoke(main, ["meta-eval", "tasks", "--root", str(tmp_path), "--test-set", "wmt21.news",
                                       "--task", "lang=en-de level=sys corr_fcn=pearson"])
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert result.exit_code == 1 and len(errors) == 1 and needle in errors[0], result.output


@pytest.mark.parametrize("flag", ["--primary", "--no-primary"])
def test_primary_on_a_set_without_primaries_is_refused_and_acts_on_one_with_them(tmp_path, flag):
    """MTME keeps every metric when a set lists no primary_metrics, whatever primary says: the flag cannot act."""
    import json
    import shutil

    from conftest import NEWS

    task = ["--task", "lang=en-de level=sys refs={'refA'} human=False k=0", "--human", "mqm", "-f", "json"]
    result = CliRunner().invoke(main, ["meta-eval", "tasks", "--root", str(NEWS.parent), "--test-set", "wmt21.news",
                                       *task, flag])
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert result.exit_code == 2 and len(errors) == 1 and f"{flag} keeps or drops" in errors[0], result.output
    shutil.copytree(NEWS, tmp_path / "wmt21.news")
    info = {"en-de": {"std_ref": "refA", "std_gold": {"sys": "mqm", "seg": "mqm"}, "primary_metrics": ["BLEU"]}}
    (tmp_path / "wmt21.news" / "meta-info.json").write_text(json.dumps(info))
    runs = {f: CliRunner().invoke(main, ["meta-eval", "tasks", "--root", str(tmp_path), "--test-set", "wmt21.news",
                                         *task, f]) for f in ("--primary", "--no-primary")}
    assert all(r.exit_code == 0 for r in runs.values()), [r.output for r in runs.values()]
    metrics = {f: set(json.loads(r.stdout)["tasks"][0]["metrics"]) for f, r in runs.items()}
    assert metrics["--primary"] < metrics["--no-primary"], metrics


# Environment problems are one line, exit 1

def test_tiny_comet_without_torch_is_one_line(tmp_path):
    import subprocess
    import sys

    from conftest import child_env

    (tmp_path / "missing").mkdir()
    (tmp_path / "missing" / "torch.py").write_text("raise ModuleNotFoundError('No module named torch', name='torch')\n")
    env = child_env()
    env["PYTHONPATH"] = str(tmp_path / "missing")
    done = subprocess.run([sys.executable, "-m", "evalpipe.tiny_comet", str(tmp_path / "m")], capture_output=True,
                          text=True, env=env, timeout=120)
    assert done.returncode == 1 and done.stderr.count("Error:") == 1 and "pip install 'evalpipe[comet]'" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("device,code,needle", [("cuda:x", 2, "cuda:N"), ("cuda:7", 1, "device=cpu")])
def test_a_device_that_is_not_there_is_one_line(tmp_path, device, code, needle):
    pytest.importorskip("torch")
    import torch

    from evalpipe import tiny_comet

    if torch.cuda.device_count() > 7:
        pytest.skip("this machine has a GPU cuda:7")
    model = tiny_comet.build(tmp_path / "m", "regression")
    demo = Path(__file__).resolve().parents[1] / "src" / "evalpipe" / "demo"
    result = CliRunner().invoke(main, ["score-corpus", "-m", "comet", "-o", f"model={model}", "-o", f"device={device}",
                                       "--source", str(demo / "newstest.src.en"), "-r", str(demo / "newstest.ref.de"),
                                       str(demo / "newstest.hyp.de")])
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert result.exit_code == code and len(errors) == 1 and needle in errors[0], result.output


def test_a_system_identical_to_the_baseline_has_p_1_where_sacrebleus_drop_in_keeps_its_own(tmp_path):
    """score-corpus: identical outputs cannot be told apart (p = 1); evalpipe sacrebleu stays sacrebleu's, byte for
    byte, run here beside sacrebleu's own command line."""
    import json
    import shutil
    import subprocess

    from conftest import child_env, script

    demo = Path(__file__).resolve().parents[1] / "src" / "evalpipe" / "demo" / "wmt21-ende"
    ref, icl, uedin = demo / "ref.de", demo / "systems" / "ICL.de", demo / "systems" / "UEdin.de"
    copy = tmp_path / "ICL-copy.de"
    shutil.copy(icl, copy)
    doc = json.loads(CliRunner().invoke(main, ["score-corpus", "-r", str(ref), str(icl), str(copy), str(uedin),
                                               "--paired-bs", "-f", "json"]).stdout)
    assert [r["p_value"] for r in doc["results"]][1] == 1.0
    assert doc["results"][2]["p_value"] < 0.05
    args = [str(ref), "-i", str(icl), str(copy), "--paired-bs"]
    theirs = subprocess.run([script("sacrebleu"), *args], capture_output=True, text=True, env=child_env(), timeout=300)
    ours = subprocess.run([script("evalpipe"), "sacrebleu", *args], capture_output=True, text=True, env=child_env(),
                          timeout=300)
    assert theirs.returncode == 0 and ours.stdout == theirs.stdout
    twice = CliRunner().invoke(main, ["score-corpus", "-r", str(ref), str(icl), str(icl), str(uedin), "--paired-bs"])
    assert twice.exit_code == 2 and "given twice" in twice.output


def test_the_docs_speak_to_users_without_issue_numbers():
    import re

    root = Path(__file__).resolve().parents[1]
    for page in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            assert not re.search(r"\b[Ii]ssues? \d+", line), f"{page.name}:{number}: {line}"


def test_evalpipe_list_describes_each_metric_in_one_whole_sentence():
    result = CliRunner().invoke(main, ["list"])
    assert result.exit_code == 0
    for line in result.stdout.splitlines():
        if not line.startswith(" "):
            name, _, text = line.partition("  ")
            assert text.endswith((".", ")")) and "docstring" not in text and "``" not in text and ":func:" not in text, \
                line


def test_output_formats_come_from_one_vocabulary():
    """-f takes words of one vocabulary (docs/cli.md says what each means); json is everywhere."""
    from test_cli_conventions import options

    vocabulary = {"table", "text", "json", "tsv", "latex"}
    for name, cmd in commands().items():
        for o in options(cmd):
            if "-f" in o.opts:
                choices = set(o.type.choices)
                assert choices <= vocabulary and "json" in choices, (name, choices)
                assert o.default in ("table", "text"), (name, o.default)


def test_evalpipe_report_renders_a_task_set_json_as_the_task_set_report(tmp_path):
    """docs/reports.md: any saved JSON gives a page -- meta-eval tasks -f json too, the same page as its --report."""
    import json
    import shutil

    from conftest import NEWS

    shutil.copytree(NEWS, tmp_path / "wmt21.news")
    info = {"en-de": {"std_ref": "refA", "std_gold": {"sys": "mqm", "seg": "mqm"}}}
    (tmp_path / "wmt21.news" / "meta-info.json").write_text(json.dumps(info))
    base = ["meta-eval", "tasks", "--root", str(tmp_path), "--test-set", "wmt21.news"]
    for statistic in ("pearson", "accuracy"):
        base += ["--task", f"lang=en-de level=sys corr_fcn={statistic} human=False"]
    doc = CliRunner().invoke(main, base + ["-f", "json", "--report", str(tmp_path / "direct.html")])
    assert doc.exit_code == 0, doc.output
    (tmp_path / "tasks.json").write_text(doc.stdout)
    done = CliRunner().invoke(main, ["report", str(tmp_path / "tasks.json"), "--output", str(tmp_path / "r.html")])
    assert done.exit_code == 0, done.output
    assert (tmp_path / "r.html").read_bytes() == (tmp_path / "direct.html").read_bytes()


def test_sentence_level_latency_scores_every_sentence_and_prints_an_empty_one_as_undefined(tmp_path):
    import json

    from conftest import DATA

    log = DATA / "simul" / "iwslt17-dev2010.de-en" / "derived" / "wait3.instances.jsonl"
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    records[1]["prediction"], records[1]["delays"] = "", []
    changed = tmp_path / "log.jsonl"
    changed.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    rows = {}
    for name, path in (("real", log), ("changed", changed)):
        done = CliRunner().invoke(main, ["score-corpus", "--instances", str(path), "-m", "al", "--sentence-level",
                                         "-f", "json"])
        assert done.exit_code == 0, done.output
        rows[name] = [json.loads(line) for line in done.stdout.splitlines()]
    assert rows["changed"][1]["score"] is None and "undefined" in rows["changed"][1]
    assert [r["score"] for k, r in enumerate(rows["changed"]) if k != 1] == \
        [r["score"] for k, r in enumerate(rows["real"]) if k != 1]
    text = CliRunner().invoke(main, ["score-corpus", "--instances", str(changed), "-m", "al", "--sentence-level"])
    assert text.stdout.splitlines()[2].split("\t")[4] == "undefined"


@pytest.mark.parametrize("flag,level", [("--spa", "seg"), ("--pdp", "sys"), ("--pdp", "seg")])
def test_meta_eval_compare_takes_spa_and_pdp_as_correlate_and_matrix_do(tmp_path, flag, level):
    import json
    import shutil

    from conftest import NEWS

    shutil.copytree(NEWS, tmp_path / "wmt21.news")
    base = ["--root", str(tmp_path), "--test-set", "wmt21.news", "-l", "en-de"]
    for metric in ("chrf", "bleu"):
        assert CliRunner().invoke(main, ["meta-eval", "add-metric", metric, *base, "-r", "refA"]).exit_code == 0
    folder = tmp_path / "wmt21.news" / "metric-scores" / "en-de"
    done = CliRunner().invoke(main, ["meta-eval", "compare", *base, "chrf-refA", "bleu-refA", flag, "--level", level,
                                     "-k", "100", "-f", "json"])
    assert done.exit_code == 0, done.output
    doc = json.loads(done.stdout)
    for key, name in (("correlation1", "chrf-refA"), ("correlation2", "bleu-refA")):
        alone = CliRunner().invoke(main, ["meta-eval", "correlate", *base, flag, "--scores",
                                          str(folder / f"{name}.{level}.score"), "-f", "json"])
        assert doc[key] == json.loads(alone.stdout)["correlation"]
    assert doc["statistic"] == flag[2:] and 0 <= doc["p_value"] <= 1 and doc["trials"] >= 100


def test_a_speech_input_log_is_told_from_its_sources(tmp_path):
    """SimulEval writes a speech input's source as the sound file's properties (``samplerate: ...`` among them) and
    its delays in ms: scored without ``-o unit=speech`` it is refused, with it scored; a text log likewise."""
    import json

    from conftest import script, child_env
    import subprocess

    speech = [{"index": i, "prediction": "a b c", "delays": [640.0, 1280.0, 2000.0 + i], "elapsed": [700.0, 1400.0,
               2100.0 + i], "source_length": 2400.0 + i, "reference": "a b d",
               "source": [f"/data/{i}.wav", "samplerate: 16000 Hz", "channels: 1", "duration: 00:00:02.400",
                          "format: WAV (Microsoft) [WAV]", "subtype: Signed 16 bit PCM [PCM_16]"]} for i in range(3)]
    log = tmp_path / "speech.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in speech), encoding="utf-8")
    base = [script("evalpipe"), "score-corpus", "--instances", str(log), "-m", "al", "start_offset", "-f", "json"]
    refused = subprocess.run(base, capture_output=True, text=True, env=child_env(), timeout=120)
    errors = [line for line in refused.stderr.splitlines() if line.startswith("Error:")]
    assert refused.returncode == 2 and len(errors) == 1 and "speech-input log" in errors[0] \
        and "-o unit=speech" in errors[0] and str(log) in errors[0], refused.stderr
    done = subprocess.run(base + ["-o", "unit=speech"], capture_output=True, text=True, env=child_env(), timeout=120)
    assert done.returncode == 0, done.stderr
    assert all("unit:speech" in r["signature"] for r in json.loads(done.stdout)["results"])
