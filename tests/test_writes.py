"""Nothing is overwritten without asking, and a write that fails is an error: two walks over every command.

* Every command walked by tests/test_options_act.py runs its base case on a fresh copy of the test sets; the files
  under that copy must be the same bytes afterwards, except for the commands of :data:`DATA_WRITERS`, which write
  into a data folder under names they choose.  Those must refuse to run a second time (one ``Error:`` line naming
  ``--force``) and replace the files with ``--force``.
* Every option that names a file to write (``--output``, ``--report``, ``--plot``) given ``/dev/full`` (a device
  where every write fails) ends with a non-zero exit and one ``Error:`` line naming it, and ``/dev/full`` stays the
  device it was (a file the user names is written in place when it is no regular file).
"""
from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path
from typing import Dict

import click
import pytest

from test_cli_conventions import commands
from test_options_act import BASE, EXEMPT_COMMANDS, STDIN, _expand, _run, root  # noqa: F401 (the fixture)

#: commands that write into a test set under names they choose, and what
DATA_WRITERS = {
    "meta-eval add-metric": "a metric's score files (metric-scores/LP/NAME-REF.LEVEL.score)",
    "meta-eval mqm-scores": "MQM scores from ratings (human-scores/LP.NAME.LEVEL.score)",
}
WRITE_OPTIONS = ("--output", "--report", "--plot", "--save-utilities")


def _tree(folder: Path) -> Dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _walked():
    return sorted(name for name in commands() if name not in EXEMPT_COMMANDS)


def test_the_writers_are_commands():
    assert set(DATA_WRITERS) <= set(commands())


@pytest.mark.parametrize("command", _walked())
def test_no_command_writes_into_a_data_folder_unless_it_asks_before_replacing(root, tmp_path, command):  # noqa: F811
    data = tmp_path / "data"
    shutil.copytree(root, data)
    before = _tree(data)
    words = command.split() + _expand(BASE[command], data, tmp_path / "run")
    code, _, _, both = _run(words, tmp_path / "run", STDIN.get(command, ""))
    assert code == 0, both
    after = _tree(data)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    if command not in DATA_WRITERS:
        assert not changed, f"{command} wrote into the data folder: {changed[:5]}"
        return
    assert changed and all(k in after for k in changed), changed
    code, _, _, both = _run(words, tmp_path / "again", STDIN.get(command, ""))
    errors = [line for line in both.splitlines() if line.startswith("Error:")]
    assert code != 0 and len(errors) == 1 and "--force" in errors[0], both
    assert _tree(data) == after, "a refused run changed the data folder"
    code, _, _, both = _run(words + ["--force"], tmp_path / "forced", STDIN.get(command, ""))
    assert code == 0, both


def _write_cases():
    for name in _walked():
        for param in commands()[name].params:
            if isinstance(param, click.Option) and param.opts[0] in WRITE_OPTIONS:
                yield pytest.param(name, param.opts[0], id=f"{name} {param.opts[0]}")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
@pytest.mark.parametrize("command,flag", list(_write_cases()))
def test_a_write_that_fails_is_an_error(root, tmp_path, command, flag):  # noqa: F811
    words = [w for w in BASE[command]]
    if flag in words:  # the base case's own file (report --output FILE): replaced by /dev/full
        at = words.index(flag)
        words = words[:at] + words[at + 2:]
    code, _, _, both = _run(command.split() + _expand(words, root, tmp_path) + [flag, "/dev/full"], tmp_path,
                            STDIN.get(command, ""))
    errors = [line for line in both.splitlines() if line.startswith("Error:")]
    assert code != 0 and len(errors) == 1 and "/dev/full" in errors[0], both
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode), "/dev/full was replaced"
