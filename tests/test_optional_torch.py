"""evalpipe.optional_torch: torch imported once with the garbage collector paused, what it built frozen, and the
collector left as it was found; without torch, one line naming what needs it.  Each case runs in a fresh
interpreter, since this process may have imported torch already."""
import subprocess
import sys

import pytest

from conftest import child_env


def _run(code: str) -> list:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=child_env(), timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_first_import_freezes_what_torch_built_and_turns_the_collector_back_on():
    pytest.importorskip("torch")
    enabled, frozen, same = _run(
        "import gc; from evalpipe.optional_torch import load; t = load('needs torch'); import torch;"
        "print(gc.isenabled(), gc.get_freeze_count() > 10000, t is torch)")
    assert (enabled, frozen, same) == ("True", "True", "True")


def test_a_collector_turned_off_stays_off_and_nothing_is_frozen():
    pytest.importorskip("torch")
    assert _run("import gc; gc.disable(); from evalpipe.optional_torch import installed;"
                "print(installed(), gc.isenabled(), gc.get_freeze_count())") == ["True", "False", "0"]


def test_without_torch_one_line_names_what_needs_it_and_the_collector_runs():
    out = _run("import gc, sys; sys.modules['torch'] = None\n"
               "from evalpipe.errors import MissingDependency\n"
               "from evalpipe.optional_torch import installed, load\n"
               "try:\n    load('COMET models need torch')\nexcept MissingDependency as e:\n    print(repr(str(e)))\n"
               "print(installed(), gc.isenabled(), gc.get_freeze_count())")
    assert out == ["'COMET", "models", "need", "torch'", "False", "True", "0"]


def test_mbrs_draws_without_torch_are_numpys_unless_torch_is_asked_for():
    out = _run("import sys; sys.modules['torch'] = None\n"
               "from evalpipe.errors import MissingDependency\n"
               "from evalpipe.mbr.draws import Draws, kind\n"
               "print(kind(), kind('numpy'))\n"
               "for call in (lambda: kind('torch'), lambda: Draws(1, 'torch')):\n"
               "    try:\n        call()\n    except MissingDependency as e:\n        print(str(e).endswith('pip install torch'))\n")
    assert out == ["numpy", "numpy", "True", "True"]
