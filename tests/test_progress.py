"""Long runs show progress on stderr when it is a terminal, and nothing where stderr is a file or a pipe.

Every leaf command (sacrebleu's drop-in included) is one of evalpipe's command classes, whose ``invoke`` opens
:func:`evalpipe.progress.shown`: a command added later inherits it.  The meta-evaluation commands that draw (matrix,
tasks, compare, SPA) say where they are; here under a pseudo-terminal (``pty``) with ``EVALPIPE_PROGRESS_AFTER=0``
(the line shows from the start instead of after 5 s), and through a pipe, where stderr stays empty.
"""
from __future__ import annotations

import io
import os
import select
import subprocess
import sys
from pathlib import Path

import click
import pytest

from conftest import ROOT, child_env

from evalpipe import progress
from evalpipe.cli import main
from evalpipe.cli.base import Command

EVALPIPE = str(Path(sys.executable).parent / "evalpipe")
RUNS = {
    "matrix": ["meta-eval", "matrix", "{meta}", "-k", "300"],
    "matrix --spa": ["meta-eval", "matrix", "{meta}", "--spa", "-m", "chrf-refA,bleu-refA", "-k", "300"],
    "compare --mode mtme": ["meta-eval", "compare", "{meta}", "BLEU-refA", "chrF-refA", "-k", "300", "--test",
                            "permutation", "--mode", "mtme", "--k-block", "100"],
    "tasks": ["meta-eval", "tasks", "{root}", "--test-set", "wmt21.news",
              "--human", "mqm", "--task", "lang=en-de level=sys refs={'refA'} human=False k=100",
              "--task", "lang=en-de level=seg refs={'refA'} human=False k=100 corr_fcn=pearson"],
}
#: commands that are not evalpipe's command class, and why
OTHER_CLASSES = {"sacrebleu": "sacrebleu's drop-in: its arguments and output are sacrebleu's own, byte for byte"}


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """A copy of the wmt21.news test set with segment-level chrF and BLEU (for SPA and a segment-level task)."""
    import shutil

    folder = tmp_path_factory.mktemp("progress")
    shutil.copytree(ROOT / "tests" / "data" / "wmt21.news", folder / "wmt21.news")
    for metric in ("chrf", "bleu"):
        done = subprocess.run([EVALPIPE, "meta-eval", "add-metric", metric, "--root", str(folder), "--test-set",
                               "wmt21.news", "-l", "en-de", "-r", "refA"], capture_output=True, text=True,
                              env=child_env(), timeout=300)
        assert done.returncode == 0, done.stderr
    return folder


def _args(name, root):
    meta = ["--root", str(root), "--test-set", "wmt21.news", "-l", "en-de"]
    out = []
    for word in RUNS[name]:
        out += meta if word == "{meta}" else ["--root", str(root)] if word == "{root}" else [word]
    return out


def leaf_commands():
    ctx = click.Context(main)
    found = {}

    def walk(cmd, path):
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                walk(cmd.get_command(ctx, name), path + [name])
        else:
            found[" ".join(path)] = cmd

    walk(main, [])
    return found


def test_every_command_opens_the_progress_line():
    commands = leaf_commands()
    assert len(commands) > 20
    others = [name for name, cmd in commands.items() if not isinstance(cmd, Command) and name not in OTHER_CLASSES]
    assert not others, f"commands outside evalpipe's command class (no progress, no one-line errors): {others}"


def _under_a_terminal(args):
    import pty

    master, slave = pty.openpty()
    env = dict(child_env(), EVALPIPE_PROGRESS_AFTER="0")
    run = subprocess.Popen([EVALPIPE, *args], stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    err = b""
    while True:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            err += chunk
        elif run.poll() is not None:
            break
    os.close(master)
    out = run.stdout.read()
    return run.wait(timeout=60), out.decode(), err.decode()


@pytest.mark.parametrize("name", list(RUNS))
def test_progress_on_a_terminal_and_nothing_through_a_pipe(name, root):
    args = _args(name, root)
    piped = subprocess.run([EVALPIPE, *args], capture_output=True, text=True, timeout=300,
                           env=dict(child_env(), EVALPIPE_PROGRESS_AFTER="0"))
    assert piped.returncode == 0, piped.stderr
    code, out, err = _under_a_terminal(args)
    assert code == 0, err
    assert out == piped.stdout, "the progress line changed stdout"
    line = f"evalpipe {' '.join(args[:2])}: "
    assert line in err and ("draws" in err or "pair" in err or "task" in err), err[-500:]
    assert err.rstrip("\r\n").endswith(("\x1b[K",)) or err.endswith("\n"), "the progress line is ended"
    assert line not in piped.stderr, piped.stderr


def test_the_line_waits_for_the_delay_and_clears_levels_below():
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    stream = Terminal()
    os.environ["EVALPIPE_PROGRESS_AFTER"] = "3600"
    try:
        with progress.shown("evalpipe x", stream):
            progress.step("pair", 1, 3)
        assert stream.getvalue() == "", "shown before the delay"
    finally:
        del os.environ["EVALPIPE_PROGRESS_AFTER"]
    stream = Terminal()
    with progress.shown("evalpipe x", stream) as shown:
        shown.after = 0
        progress.step("task", 1, 2)
        progress.step("draws", 10, 100)
        shown.written = -1.0
        progress.step("task", 2, 2)
    text = stream.getvalue()
    assert text.startswith("\revalpipe x: task 1/2 (0 s)") and "task 2/2 (0 s)" in text and text.endswith("\n")
    assert "draws" not in text.split("\r")[-1], "a new task clears its draws"
