"""The README's two commands, verbatim, from the root of a fresh clone (``git clone`` of this work tree).

The first installs evalpipe and runs the demo; the second installs the test extras, checks the
declared architecture and runs the suite.  Inside this test the second command's pytest run is cut
to the contract tests with ``PYTEST_ADDOPTS`` (the command itself is unchanged), and the inner run
skips this test, so the suite does not run itself recursively.  The clone has no ``../shared``
beside it: it is what a newcomer gets.  Only committed work is cloned.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

INNER = "EVALPIPE_README_INNER_RUN"


def readme_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)```", text, re.S).group(1)
    commands = [line for line in block.splitlines() if line.strip()]
    assert len(commands) == 2, commands
    return commands


def test_ci_runs_the_second_command_word_for_word():
    assert readme_commands()[1] in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()


@pytest.mark.skipif(os.environ.get(INNER) == "1", reason="inside the README command's own test run")
@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="not a git checkout")
def test_both_commands_pass_verbatim_in_a_fresh_clone(tmp_path):
    clone = tmp_path / "evalpipe"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=120)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONUNBUFFERED", "VIRTUAL_ENV", "PYTHONPATH", "PYTEST_ADDOPTS")}
    # a PATH without this interpreter's environment: nothing may be found there by luck
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if Path(p).resolve() != Path(sys.executable).parent.resolve())
    install_and_demo, install_and_test = readme_commands()
    demo = subprocess.run(["bash", "-c", install_and_demo], cwd=clone, env=env, capture_output=True, text=True,
                          timeout=900)
    assert demo.returncode == 0, demo.stdout[-2000:] + demo.stderr[-4000:]
    assert re.search(r"^identical\s+yes$", demo.stdout, re.M), demo.stdout
    inner = dict(env, **{INNER: "1", "PYTEST_ADDOPTS": "-q -p no:cacheprovider tests/test_contract.py"})
    suite = subprocess.run(["bash", "-c", install_and_test], cwd=clone, env=inner, capture_output=True, text=True,
                           timeout=1200)
    assert suite.returncode == 0, suite.stdout[-4000:] + suite.stderr[-4000:]
    assert re.search(r"Contracts: [1-9]\d* kept, 0 broken\.", suite.stdout), suite.stdout[-3000:]
    assert re.search(r"\d+ passed", suite.stdout) and "failed" not in suite.stdout
