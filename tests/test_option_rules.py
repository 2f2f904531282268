"""Every entry of every command's table of options that cannot act (``RULES``, evalpipe.cli.base.Rules): each
conflicting pair given together, and each dependent option given alone, is a usage error (exit 2) naming the
options, before anything is read or written; the same options given where they act are accepted."""
from __future__ import annotations

from typing import List

import click
import pytest
from click.testing import CliRunner

from evalpipe.cli import main
from evalpipe.cli.base import Flag, engine_rules
from evalpipe.cli.score_corpus import RULES as SCORE_CORPUS
from evalpipe.cli.meta_eval import RULES as META_EVAL
from evalpipe.cli.stream import SCORE_RULES as STREAM_SCORE
from evalpipe.cli.compare import RULES as COMPARE
from evalpipe.cli.mbr_options import RULES as MBR

from conftest import DATA

TABLES = {"score-corpus": SCORE_CORPUS, "stream score": STREAM_SCORE, "mbr": MBR, "compare": COMPARE,
          **{f"meta-eval {name}": rules for name, rules in META_EVAL.items()}}
#: what a command needs besides the options under test (required options; the rules act before any reading)
NEWS = ["--root", str(DATA), "--test-set", "wmt21.news", "-l", "en-de"]
BASE = {"score-corpus": [], "stream score": ["--log-file", "log.jsonl", "-r", __file__],
        "meta-eval correlate": NEWS, "meta-eval compare": NEWS + ["BLEU-refA", "chrF-refA"],
        "meta-eval matrix": NEWS, "mbr": [__file__, str(DATA.parent / "conftest.py")],
        "compare": ["-r", __file__, str(DATA.parent / "conftest.py"), str(DATA.parent / "test_mbr.py")]}


def words(command: str, flag: Flag, tmp: str) -> List[str]:
    """The flag as typed, with a value where it takes one."""
    cmd = main
    for part in command.split():
        cmd = cmd.get_command(click.Context(cmd), part)
    param = next(p for p in cmd.params if flag.flag in getattr(p, "opts", []) + getattr(p, "secondary_opts", []))
    if param.is_flag:
        return [flag.flag]
    choices = getattr(param.type, "choices", None)
    if isinstance(param.type, click.Path) and param.type.exists:
        return [flag.flag, __file__]  # a file that is there
    typed = {"--report": f"{tmp}/r.html", "--plot": f"{tmp}/p.svg", "--spark-master": "local[1]", "--lang": "en",
             "--eval-config": f"{tmp}/c.yaml", "--sample-rate": "0.5", "--paired-ratio": "0.5"}
    value = flag.values[0] if flag.values else list(choices)[-1] if choices else typed.get(flag.flag, "3")
    return [flag.flag, value]


def _has_engine_options(command: str) -> bool:
    cmd = main
    for part in command.split():
        cmd = cmd.get_command(click.Context(cmd), part)
    return {"engine", "workers", "spark_master"} <= {p.name for p in cmd.params}


def cases():
    for command, rules in TABLES.items():
        conflicts, requires = list(rules.conflicts), list(rules.requires)
        if _has_engine_options(command):  # kept by the command class for every command that has them
            conflicts += engine_rules()[0]
            requires += engine_rules()[1]
        for a, b, _ in conflicts:
            yield pytest.param(command, [a, b], [str(a), str(b)], id=f"{command}: {a} + {b}")
        for a, needs, _ in requires:
            yield pytest.param(command, [a], [str(a), "acts only with"], id=f"{command}: {a} alone")


@pytest.mark.parametrize("command,flags,needles", list(cases()))
def test_every_entry_of_the_table_is_refused(tmp_path, command, flags, needles):
    args = command.split() + BASE[command] + [w for f in flags for w in words(command, f, str(tmp_path))]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, (args, result.output)
    error = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(error) == 1 and all(n in error[0] for n in needles), (needles, result.output)
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_the_tables_name_real_options():
    for command, rules in TABLES.items():
        for a, b, _ in rules.conflicts:
            for f in (a, b):
                words(command, f, "/tmp")
        for a, needs, _ in rules.requires:
            for f in (a, *needs):
                words(command, f, "/tmp")
