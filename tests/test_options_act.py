"""An option acts or is refused, in every command: for every option of every click command (the walk of
tests/test_cli_conventions.py), the command runs on small real inputs without and with a non-default value of
the option; the same output (stdout and the files written) with exit 0 is a failure, unless the option is in
:data:`EXEMPT` with its reason.  A run that is refused (a non-zero exit) must say so in one ``Error:`` line.  A
command added later is walked too: it needs a line in :data:`BASE` (or in :data:`EXEMPT_COMMANDS`, with why).

Where an option acts only beside another (a command's ``RULES``), :data:`NEEDS` gives both runs what it needs.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Dict, List, Tuple

import click
import pytest
from click.testing import CliRunner

from conftest import DATA
from evalpipe.cli import main
from test_cli_conventions import commands

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "src" / "evalpipe" / "demo" / "wmt21-ende"
LONG = ROOT / "src" / "evalpipe" / "demo" / "longform"
ENDE = DATA / "wmt21.news" / "system-outputs" / "en-de"
REF = DATA / "wmt21.news" / "references" / "en-de.refA.txt"
SYS = [str(ENDE / f"{name}.txt") for name in ("Facebook-AI", "HuaweiTSC", "UEdin")]
NEWS = ["--root", "{root}", "--test-set", "wmt21.news", "-l", "en-de"]
SIMUL = DATA / "simul" / "iwslt17-dev2010.de-en"

#: each command's run on small real inputs ({root}: a copy of tests/data; {tmp}: the run's own folder)
BASE: Dict[str, List[str]] = {
    "score-corpus": ["-r", str(REF), *SYS],
    "compare": ["-r", str(REF), *SYS[:2]],
    "mbr": SYS,
    "report": ["{root}/corpus.json", "--output", "{tmp}/report.html"],
    "tune": ["--demo", "--restarts", "1", "--random-directions", "1"],
    "serve": ["bleu"],
    "shim": ["{tmp}/shims", "-m", "bleu"],
    "list": [],
    "env run": ["--demo", "--episodes", "3"],
    "simul score": ["{root}/simul/instances.log"],
    "stream latency": ["--source", str(SIMUL / "source.de"), "--stream",
                       f"{SIMUL / 'REAL' / '1.RW'}={SIMUL / 'REAL' / '1.reseg_h'}"],
    "stream score": ["--log-file", "{root}/stream.jsonl", "-a", str(LONG / "audio.json"), "-r", str(LONG / "reference.de")],
    "meta-eval list": ["--root", "{root}"],
    "meta-eval echo": [*NEWS, "scores", "--name", "BLEU-refA"],
    "meta-eval correlate": [*NEWS, "--scores", "{root}/wmt21.news/metric-scores/en-de/BLEU-refA.sys.score"],
    "meta-eval compare": [*NEWS, "BLEU-refA", "chrF-refA", "-k", "200"],
    "meta-eval matrix": [*NEWS, "-k", "200"],
    "meta-eval tasks": ["--root", "{root}", "--test-set", "wmt21.news", "--recipe", "WMT23", "-l", "en-de"],
    "meta-eval add-metric": [*NEWS, "bleu"],  # (chrf-refA is the fixture's; bleu-refA is new)
    "meta-eval mqm-scores": ["--root", "{root}", "--test-set", "wmt21.tedtalks", "-l", "en-de", "{root}/ratings.tsv",
                             "--name", "mine"],
}

#: commands not walked here, and why
EXEMPT_COMMANDS = {
    "demo": "takes no option",
    "simul serve": "a server that runs until stopped: its options are tested through a real HTTP client "
                   "(tests/test_simul_http_client.py)",
    "simul evaluate": "drives a server at --host/--port: tested with a running server (tests/test_simul_agents.py)",
    "simul run": "starts a server and runs an agent over the demo (seconds a run): its options are tested in "
                 "tests/test_simul_agents.py and tests/test_shortform.py",
    "stream run": "runs an agent over audio: its options are tested in tests/test_stream_run.py",
}

#: the option as typed with a value that differs from its default, where the type does not give one
VALUES: Dict[Tuple[str, str], List[str]] = {
    ("serve", "--max-line-bytes"): ["--max-line-bytes", "10"],
    ("meta-eval tasks", "--primary"): ["--no-primary"],  # the recipe's default is --primary
}

#: a run of the command on other inputs, where the option acts only on those
BASE_FOR: Dict[Tuple[str, str], List[str]] = {
    ("mbr", "--ties"): ["--samples", "{root}/ties.jsonl"],  # candidates of equal expected utility
}

#: words both runs need for the option to be able to act
NEEDS: Dict[Tuple[str, str], List[str]] = {
    ("meta-eval add-metric", "--force"): ["--name", "chrF", "-r", "refA"],  # the official chrF-refA files exist
    ("meta-eval mqm-scores", "--force"): ["--name", "mqm"],  # the test set's MQM files exist
}

#: what stdin holds for an option to be able to act (serve reads requests)
STDIN_FOR: Dict[Tuple[str, str], str] = {
    ("serve", "--on-error"): "EVAL ||| 1 2\nSCORE ||| a ||| a\n",  # a bad request, then a good one
    ("serve", "--strict-stats"): "EVAL ||| 5 4 9 2 1 0 5 4 3 2\n",  # 9 correct unigrams of 5: no segment has that
    ("serve", "--max-line-bytes"): "SCORE ||| das ist ein Test ||| das ist ein kleiner Test\n",
    ("serve", "--talks"): "SCORE ||| das ist ein Test ||| das ist ein kleiner Test\n",
}

#: options whose effect is not in stdout or the files written, or that the walk cannot give a value that acts
EXEMPT: Dict[Tuple[str, str], str] = {
    ("*", "-v"): "debug logs on stderr",
    ("*", "-q"): "hides the progress bar, which is on stderr",
    ("serve", "--talks"): "answers a kind of request (a whole long-form talk) that the walk's plain SCORE lines do not "
                          "send; tests/test_stream_inputs.py sends them",
    ("*", "--workers"): "results are identical on every worker count by design (tests/test_engines.py); it changes "
                        "where the work runs",
    ("*", "--min-systems"): "a bound: it acts when fewer systems are left (tests/test_bad_inputs.py), not on the "
                            "8-system subset",
}


def _inputs(root: Path) -> None:
    shutil.copytree(DATA / "wmt21.news", root / "wmt21.news")
    shutil.copytree(DATA / "wmt21.tedtalks", root / "wmt21.tedtalks")


def _expand(words: List[str], root: Path, tmp: Path) -> List[str]:
    return [w.replace("{root}", str(root)).replace("{tmp}", str(tmp)) for w in words]


def _value(param: click.Option, command: str) -> List[str]:
    """The option as typed with a non-default value."""
    flag = param.opts[0]
    if (command, flag) in VALUES:
        return VALUES[command, flag]
    if param.is_flag:
        return [param.secondary_opts[0] if param.default and param.secondary_opts else flag]
    choices = getattr(param.type, "choices", None)
    if choices:
        other = [c for c in choices if c != param.default]
        return [flag, str(other[-1])]
    if isinstance(param.type, (click.types.IntParamType, click.types.IntRange)):
        return [flag, str((param.default or 1) + 1)]
    if isinstance(param.type, (click.types.FloatParamType, click.types.FloatRange)):
        return [flag, str((param.default or 0.5) / 2)]
    return [flag, "{tmp}/value"]


def _run(words: List[str], cwd: Path, stdin: str = "") -> Tuple[int, str, Dict[str, bytes], str]:
    """(exit code, stdout, the files written under ``cwd``, stdout and stderr)."""
    cwd.mkdir(parents=True, exist_ok=True)
    here = os.getcwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, words, input=stdin)
    finally:
        os.chdir(here)
    files = {str(p.relative_to(cwd)): p.read_bytes() for p in sorted(cwd.rglob("*")) if p.is_file()}
    return result.exit_code, result.stdout, files, result.output


STDIN = {"serve": "SCORE ||| das ist ein Test ||| das ist ein kleiner Test\nEVAL ||| 5 4 4 2 1 0 5 4 3 2\n"}


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    """tests/data's test sets, a score-corpus JSON, a SimulEval log, a long-form log and MQM ratings."""
    folder = tmp_path_factory.mktemp("inputs")
    _inputs(folder)
    (folder / "simul").mkdir()
    shutil.copy(SIMUL / "derived" / "wait3.instances.jsonl", folder / "simul" / "instances.log")
    code, out, _, _ = _run(["score-corpus", "-r", str(REF), *SYS, "-f", "json", "--all-pairs"], folder / "made")
    assert code == 0, out
    (folder / "corpus.json").write_text(out, encoding="utf-8")
    code, out, _, _ = _run(["stream", "run", "--demo", "--output", str(folder / "stream.jsonl")], folder / "made")
    assert code == 0, out
    news = ["--root", str(folder), "--test-set", "wmt21.news", "-l", "en-de", "-r", "refA"]
    for metric in (["chrf"], ["bleu", "--name", "sentBLEU", "-o", "effective_order=true"]):
        code, _, _, both = _run(["meta-eval", "add-metric", *metric, *news], folder / "made")
        assert code == 0, both
    (folder / "wmt21.news" / "meta-info.json").write_text(
        '{"en-de": {"std_ref": "refA", "std_gold": {"sys": "mqm", "seg": "mqm"}, "primary_metrics": ["BLEU", "chrF", "chrf"]}}',
        encoding="utf-8")
    (folder / "ties.jsonl").write_text('["x y z", "q r s", "x y z"]\n["a b", "a b", "c d", "c d"]\n', encoding="utf-8")
    (folder / "ratings.tsv").write_text(
        "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\n"
        "Facebook-AI\ttalk.1\t1\t1\tr1\ts\tt\tAccuracy/Mistranslation\tMinor\n"
        "Facebook-AI\ttalk.1\t2\t2\tr1\ts\tt\tNo-error\tNo-error\n", encoding="utf-8")
    return folder


def _cases():
    for name, cmd in sorted(commands().items()):
        if name in EXEMPT_COMMANDS:
            continue
        for param in cmd.params:
            if isinstance(param, click.Option) and not param.hidden and not param.is_eager:
                yield pytest.param(name, param, id=f"{name} {param.opts[0]}")


def test_every_command_is_walked_or_exempt():
    assert set(commands()) == set(BASE) | set(EXEMPT_COMMANDS)


_baselines: Dict[tuple, Tuple[int, str, Dict[str, bytes], str]] = {}


def _exempt(command: str, flag: str) -> bool:
    return (command, flag) in EXEMPT or ("*", flag) in EXEMPT


#: commands that write into the test set under names they choose: each run gets its own copy of the inputs, in
#: the folder whose files are compared, and its paths in the output are written {data}
FRESH_ROOT = {"meta-eval add-metric", "meta-eval mqm-scores"}


def _fresh(root: Path, run: Path) -> Path:
    data = run / "data"
    shutil.copytree(root, data, ignore=shutil.ignore_patterns("made"))
    return data


def _without_paths(result: Tuple[int, str, Dict[str, bytes], str], data: Path):
    code, out, files, both = result
    return code, out.replace(str(data), "{data}"), files, both


def _walk(root: Path, tmp_path: Path, command: str, param: click.Option, words: List[str]) -> None:
    flag = param.opts[0]
    stdin = STDIN_FOR.get((command, flag), STDIN.get(command, ""))
    if command in FRESH_ROOT:
        data = _fresh(root, tmp_path / "a")
        without = _without_paths(_run(command.split() + _expand(words, data, tmp_path / "a"), tmp_path / "a", stdin),
                                 data)
        data = _fresh(root, tmp_path / "b")
        given = command.split() + _expand(words + _value(param, command), data, tmp_path / "b")
        code, out, files, both = _without_paths(_run(given, tmp_path / "b", stdin), data)
        return _judge(command, flag, given, without, (code, out, files, both))
    base = command.split() + _expand(words, root, tmp_path / "a")
    key = (command, tuple(words), STDIN_FOR.get((command, flag)))
    if key not in _baselines:
        _baselines[key] = _run(base, tmp_path / "a", stdin)
    without = _baselines[key]
    given = command.split() + _expand(words + _value(param, command), root, tmp_path / "b")
    _judge(command, flag, given, without, _run(given, tmp_path / "b", stdin))


def _judge(command: str, flag: str, given: List[str], without, run) -> None:
    """A run with the option refused in one line, or different from the run without it (which must be done)."""
    assert without[0] == 0 or flag == "--force", f"the base run is refused, so the walk proves nothing: {without[3]}"
    code, out, files, both = run
    if code != 0:
        errors = [line for line in both.splitlines() if line.startswith("Error:")]
        assert len(errors) == 1 and "internal error" not in both, (given, both)
        return
    if without[0] != 0:  # refused without it, done with it (--force): it acted
        return
    assert (out, files) != without[1:3], f"{' '.join(given[len(command.split()):])}: the same output as without {flag}"


@pytest.mark.parametrize("command,param", list(_cases()))
def test_an_option_acts_or_is_refused(root, tmp_path, command, param):
    flag = param.opts[0]
    if _exempt(command, flag):
        pytest.skip(EXEMPT.get((command, flag)) or EXEMPT[("*", flag)])
    _walk(root, tmp_path, command, param, BASE_FOR.get((command, flag), BASE[command]) + NEEDS.get((command, flag), []))


#: each command that has --demo, run on its demo (--demo must not swallow the options given beside it)
DEMO_BASE: Dict[str, List[str]] = {
    "score-corpus": ["--demo"],
    "compare": ["--demo"],
    "mbr": ["--demo"],
    "tune": ["--demo", "--restarts", "1", "--random-directions", "1"],
    "env run": ["--demo", "--episodes", "3"],
    "report": ["--demo", "--output", "{tmp}/report.html"],
}


#: options beside --demo that cannot show on the demo's data, and why
EXEMPT_DEMO = {("mbr", "--ties"): "acts only among equal expected utilities, which the demo does not have (walked "
                                  "above on candidates that do)"}


def _demo_cases():
    for name, cmd in sorted(commands().items()):
        if name in EXEMPT_COMMANDS or not any("--demo" in getattr(p, "opts", ()) for p in cmd.params):
            continue
        for param in cmd.params:
            if isinstance(param, click.Option) and not param.hidden and not param.is_eager and param.opts[0] != "--demo":
                yield pytest.param(name, param, id=f"{name} --demo {param.opts[0]}")


def test_every_command_with_a_demo_is_walked_on_it():
    having = {name for name, cmd in commands().items() if name not in EXEMPT_COMMANDS
              and any("--demo" in getattr(p, "opts", ()) for p in cmd.params)}
    assert having == set(DEMO_BASE)


@pytest.mark.parametrize("command,param", list(_demo_cases()))
def test_an_option_beside_demo_acts_or_is_refused(root, tmp_path, command, param):
    flag = param.opts[0]
    if _exempt(command, flag) or (command, flag) in EXEMPT_DEMO:
        pytest.skip(EXEMPT_DEMO.get((command, flag)) or EXEMPT.get((command, flag)) or EXEMPT[("*", flag)])
    _walk(root, tmp_path, command, param, DEMO_BASE[command])


# Every metric option `evalpipe list` shows acts or is refused

#: metrics whose options this walk does not run, and why
EXEMPT_METRICS = {
    "comet": "needs a model checkpoint: its options are tested on tiny models (tests/test_comet.py)",
    "cometkiwi": "needs a model checkpoint: its options are tested on tiny models (tests/test_comet.py)",
    "metricx": "needs a model checkpoint: its options are tested on tiny models (tests/test_metricx.py)",
    "segment_scores": "its options come from --segment-scores NAME=FILE -o NAME.direction (tests/test_invariants.py "
                      "walks the direction); label and origin name the scores",
}

#: metric options that cannot change a score by design, and why
EXEMPT_METRIC_OPTIONS = {
    "cache_size": "a memory bound of a cache: the scores are the same by design",
    "kernel": "the C or the Python reference implementation: the same scores by design (tests/test_ter_kernel.py)",
    "threads": "where the work runs",
}

#: (hypothesis, reference) lines on which a text metric's option can act, where the real subset cannot show it
TEXT_FOR = {
    ("bleu", "smooth_method"): ("a b c d", "a b x d"),  # no 3- or 4-gram matches: smoothing decides
    ("bleu", "smooth_value"): ("a b c d", "a b x d"),
    ("bleu", "effective_order"): ("a b", "a b"),  # no 3- or 4-grams at all
    ("ter", "asian_support"): ("我喜欢猫", "我喜欢狗"),  # refused: it acts only with normalized or no_punct
    ("accuracy", "attachment"): ("NN VB DT", "NN VB NN"),
    ("accuracy", "lowercase"): ("nn VB DT", "NN VB DT"),
}

#: SimulEval logs on which a latency option can act: references with runs of spaces (word counts differ)
#: and a text-input log as SimulEval writes it (its source a string), where unit=speech is refused
LOG_FOR = {"reference_length": [{"index": 0, "prediction": "a b c d", "delays": [1, 2, 3, 4], "source_length": 4,
                                 "reference": "a  b c d e"}],
           "unit": [{"index": i, "prediction": "a b c d", "delays": [1, 2, 3, 4 + i], "source_length": 4 + i,
                     "source": " ".join(["w"] * (4 + i)), "reference": "a b x d", "elapsed": [0, 0, 0, 0]}
                    for i in range(3)]}


def _metric_values(option) -> List[str]:
    """Every non-default value of a metric option worth trying."""
    if option.choices:
        return [str(c) for c in option.choices if c != option.default]
    if option.kind is bool:
        return [str(not option.default).lower()]
    if option.kind is int:
        return [str((option.default or 0) + 1)]
    if option.kind is float:
        return [str((option.default or 0.5) * 2) if option.default else "0.5"]
    return ["{tmp}/value"]


def _metric_cases():
    from evalpipe.registry import list_metrics, load_class

    for name in list_metrics():
        cls = load_class(name)
        if name in EXEMPT_METRICS or cls.hypothesis_kind not in ("text", "simul"):
            continue
        for key, option in getattr(cls, "OPTIONS", {}).items():
            if key in EXEMPT_METRIC_OPTIONS:
                continue
            for value in _metric_values(option):
                yield pytest.param(name, key, value, id=f"{name} {key}={value}")


def test_every_metric_is_walked_or_exempt():
    from evalpipe.registry import list_metrics, load_class

    walked = {name for name in list_metrics() if load_class(name).hypothesis_kind in ("text", "simul")}
    stream = {name for name in list_metrics() if load_class(name).hypothesis_kind in ("stream", "talk")}
    assert set(list_metrics()) == walked | stream | set(EXEMPT_METRICS) | {"segment_scores"}


def _metric_run(name: str, key: str, words: List[str], cwd: Path) -> Tuple[int, str]:
    import json

    from evalpipe.registry import load_class

    cwd.mkdir(parents=True, exist_ok=True)
    if load_class(name).hypothesis_kind == "text":
        ref, hyp = str(REF), SYS[0]
        if (name, key) in TEXT_FOR:
            (cwd / "hyp").write_text(TEXT_FOR[name, key][0] + "\n", encoding="utf-8")
            (cwd / "ref").write_text(TEXT_FOR[name, key][1] + "\n", encoding="utf-8")
            ref, hyp = str(cwd / "ref"), str(cwd / "hyp")
        base = ["score-corpus", "-r", ref, hyp, "-m", name, "-f", "json"]
    else:
        log = str(SIMUL / "derived" / "wait3.instances.jsonl")
        if key in LOG_FOR:
            (cwd / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in LOG_FOR[key]), encoding="utf-8")
            log = str(cwd / "log.jsonl")
        base = ["score-corpus", "--instances", log, "-m", name, "-f", "json"]
    code, out, _, both = _run(base + words, cwd)
    if code:
        return code, both
    return code, json.dumps([r["score"] for r in json.loads(out)["results"]])


@pytest.mark.parametrize("name,key,value", list(_metric_cases()))
def test_a_metric_option_acts_or_is_refused(tmp_path, name, key, value):
    code, without = _metric_run(name, key, [], tmp_path / "a")
    assert code == 0, without
    code, given = _metric_run(name, key, ["-o", f"{name}.{key}={value.replace('{tmp}', str(tmp_path))}"],
                              tmp_path / "b")
    if code:
        errors = [line for line in given.splitlines() if line.startswith("Error:")]
        assert len(errors) == 1 and "internal error" not in given, given
        return
    assert given != without, f"-o {name}.{key}={value}: the same scores as without it"
