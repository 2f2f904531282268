"""Every command against docs/cli.md: a flag means one thing everywhere, the table names exactly the
commands that have each flag, every option has help, seeds are integers with their default shown, ``-w``
has one default, help never shows a literal ``%%``.  ``evalpipe sacrebleu`` is left out: its arguments
are sacrebleu's own (tests/test_sacrebleu_cli.py)."""
from __future__ import annotations

import re
from typing import Dict, List, Set, Tuple

import click
import pytest
from click.testing import CliRunner

from conftest import ROOT

from evalpipe.cli import main
from evalpipe.cli.options import DEFAULT_WIDTH

EXCLUDED = {"sacrebleu"}


def commands() -> Dict[str, click.Command]:
    """``{"meta-eval matrix": command, ...}``: every leaf command."""
    ctx = click.Context(main)
    out: Dict[str, click.Command] = {}

    def walk(cmd: click.Command, path: List[str]) -> None:
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                walk(cmd.get_command(ctx, name), path + [name])
        elif path[0] not in EXCLUDED:
            out[" ".join(path)] = cmd

    walk(main, [])
    return out


def options(cmd: click.Command) -> List[click.Option]:
    return [p for p in cmd.params if isinstance(p, click.Option) and not p.hidden]


def table() -> List[Tuple[Set[str], Set[str]]]:
    """docs/cli.md's convention rows: (flags, commands)."""
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    body = text.split("| flag | meaning | commands |")[1].split("\n\n")[0]
    rows = []
    for line in body.strip().splitlines()[1:]:
        flags_cell, _, commands_cell = [c.strip() for c in line.strip("|").split(" | ")]
        flags = set(re.findall(r"`(-[-\w]+)`", flags_cell))
        names = set(commands()) if commands_cell == "every command" else {c.strip() for c in commands_cell.split(",")}
        rows.append((flags, names))
    return rows


def test_the_table_names_real_commands():
    known = set(commands())
    for flags, names in table():
        assert names <= known, (flags, names - known)


@pytest.mark.parametrize("flags,names", [pytest.param(f, n, id="/".join(sorted(f))) for f, n in table()])
def test_each_row_is_exactly_the_commands_that_have_the_flag(flags, names):
    having = {name for name, cmd in commands().items()
              if any(set(o.opts + o.secondary_opts) & flags for o in options(cmd))
              or (flags & {"-h", "--help"})}
    assert having == names, f"{sorted(flags)}: docs/cli.md says {sorted(names)}, the commands are {sorted(having)}"


def test_a_flag_has_the_same_names_everywhere():
    seen: Dict[str, Tuple[str, Tuple[str, ...]]] = {}
    for name, cmd in commands().items():
        for o in options(cmd):
            names = tuple(sorted(o.opts + o.secondary_opts))
            for flag in names:
                if flag in seen and flag not in ("--metrics", "--metric") and seen[flag][1] != names:
                    pytest.fail(f"{flag} is {seen[flag][1]} in {seen[flag][0]} but {names} in {name}")
                seen.setdefault(flag, (name, names))


def test_every_short_flag_is_in_the_table():
    documented = set().union(*(flags for flags, _ in table()))
    for name, cmd in commands().items():
        for o in options(cmd):
            for flag in o.opts + o.secondary_opts:
                if re.fullmatch(r"-\w", flag):
                    assert flag in documented, f"{name}: {flag} is not in docs/cli.md"


def test_every_option_has_help_and_sane_defaults():
    for name, cmd in commands().items():
        for o in options(cmd):
            assert o.help and o.help.strip(), f"{name} {o.opts}: no help text"
            assert "%%" not in o.help, f"{name} {o.opts}: a literal %% in the help"
            if "--seed" in o.opts:
                assert isinstance(o.type, click.types.IntParamType) and o.show_default and o.default is not None, name
            if "-w" in o.opts:
                assert o.default == DEFAULT_WIDTH, f"{name}: -w defaults to {o.default}"
            if "--demo" in o.opts:
                assert o.is_flag, name


@pytest.mark.parametrize("name", sorted(commands()))
def test_help_renders_without_a_literal_percent_pair(name):
    out = CliRunner().invoke(main, name.split() + ["--help"])
    assert out.exit_code == 0, out.output
    assert "%%" not in out.output
    assert "[required]" not in out.output or "--root" not in out.output.split("[required]")[0].splitlines()[-1]
