"""Shared fixtures: real WMT21 data.

Tests run on the small real subset shipped in tests/data (see tests/data/README.md), so a fresh clone
runs them all.  Tests marked ``fullcorpus`` also run on the full data in ../shared/data beside the
project root when it is there, and skip when it is not.
"""
from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import List, Sequence

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
NEWS = DATA / "wmt21.news"
SHARED = ROOT.parent / "shared" / "data"


def data_roots():
    """pytest params: the shipped subset, and the full shared data (marked ``fullcorpus``)."""
    return [pytest.param(DATA, id="subset"),
            pytest.param(SHARED, id="full", marks=[pytest.mark.fullcorpus,
                                                   pytest.mark.skipif(not SHARED.is_dir(),
                                                                      reason=f"full data not found at {SHARED}")])]


def lines(path: Path) -> list:
    with open(path, encoding="utf-8") as handle:
        return [line.rstrip("\n") for line in handle]


@pytest.fixture(scope="session")
def news():
    """WMT21 news en-de: refs A, C, D and a few real systems; zh-en: ref A and systems (the subset)."""
    ende = NEWS / "system-outputs" / "en-de"
    zhen = NEWS / "system-outputs" / "zh-en"
    return {
        "en-de.refs": [lines(NEWS / "references" / f"en-de.ref{r}.txt") for r in "ACD"],
        "en-de.systems": {p.stem: lines(p) for p in sorted(ende.glob("*.txt"))[:4]},
        "zh-en.refs": [lines(NEWS / "references" / "zh-en.refA.txt")],
        "zh-en.systems": {p.stem: lines(p) for p in sorted(zhen.glob("*.txt"))[:3]},
        "paths": {"ende_ref": str(NEWS / "references" / "en-de.refA.txt"),
                  "ende_ref2": str(NEWS / "references" / "en-de.refC.txt"),
                  "ende_sys": [str(p) for p in sorted(ende.glob("*.txt"))[:3]]},
    }


def script(name: str) -> str:
    """A console script of the environment under test: beside ``sys.executable``, never found on ``PATH``
    by luck."""
    path = Path(sys.executable).parent / name
    if not path.exists():
        raise AssertionError(f"{name} is not installed beside {sys.executable}")
    return str(path)


#: where the anchors the tests install at test time (unbabel-comet's own environment, mbrs, simulstream) are kept
#: between runs and clones: a second run on the same machine reuses them (EVALPIPE_ANCHOR_CACHE to move it)
ANCHOR_CACHE = Path(os.environ.get("EVALPIPE_ANCHOR_CACHE")
                    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "evalpipe-test-anchors")


def cached_anchor(name: str, steps: Sequence[Sequence[str]], timeout: int = 1800) -> Path:
    """``ANCHOR_CACHE/name``, built by ``steps`` (commands in which ``{dir}`` is that folder) the first time, under a
    lock that xdist workers and concurrent runs share; ``pytest.skip`` naming the step that failed.  A folder whose
    build did not finish is built again."""
    folder = ANCHOR_CACHE / f"{name}-py{sys.version_info[0]}.{sys.version_info[1]}"  # built by this Python
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f"{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = folder / ".complete"
        if not done.exists():
            import shutil

            shutil.rmtree(folder, ignore_errors=True)
            for step in steps:
                words: List[str] = [w.replace("{dir}", str(folder)) for w in step]
                run = subprocess.run(words, capture_output=True, text=True, timeout=timeout)
                if run.returncode:
                    pytest.skip(f"cannot build the anchor {name}: {' '.join(words[:6])}: {run.stderr[-400:]}")
            done.write_text("ok\n")
    return folder


@pytest.fixture(scope="session")
def mbrs_path() -> str:
    """mbrs 0.1.8 from PyPI, ``--no-deps`` (its light modules run with torch, sacrebleu, fastchrf: test extras)."""
    pytest.importorskip("torch", reason="mbrs needs torch (test extra torch==2.13.0)")
    return str(cached_anchor("mbrs-0.1.8", [[sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target",
                                              "{dir}", "mbrs==0.1.8"]], timeout=300))


def child_env() -> dict:
    """The environment for a subprocess under test: without PYTHONUNBUFFERED, which hides a missing flush."""
    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)
    return env


@pytest.fixture(scope="session")
def comet_python() -> Path:
    """unbabel-comet 2.2.7 in its own virtual environment (it pins numpy<2), with mbrs 0.1.8 ``--no-deps`` in
    ``mbrs/`` beside it: built once a machine (cached_anchor).  torch 2.13.0, setuptools<81 and sentencepiece 0.2.0:
    ../shared/notes/comet-offline.md says why each pin; its transformers (4.57) is also what mbrs 0.1.8's MetricX
    class imports from."""
    folder = cached_anchor("unbabel-comet-2.2.7", [
        [sys.executable, "-m", "venv", "--clear", "{dir}"],
        ["{dir}/bin/python", "-m", "pip", "install", "-q", "torch==2.13.0", "unbabel-comet==2.2.7", "numpy<2",
         "setuptools<81", "sentencepiece==0.2.0"],
        ["{dir}/bin/python", "-m", "pip", "install", "-q", "--no-deps", "--target", "{dir}/mbrs", "mbrs==0.1.8"]])
    return folder / "bin" / "python"


def comet_anchor(python: Path, *args: str, mbrs: bool = False, **env_vars: str) -> object:
    """Run an anchor script (tests/anchors/...) with the comet environment's ``python``, offline, one thread, mbrs on
    its path when asked, ``env_vars`` added; the JSON of its last stdout line."""
    env = child_env()
    env.update(HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false", **env_vars)
    env.pop("PYTHONPATH", None)
    if mbrs:
        env["PYTHONPATH"] = str(Path(python).parents[1] / "mbrs")  # beside the environment's bin/
    done = subprocess.run([str(python), *args], capture_output=True, text=True, env=env, timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _hypothesis_profiles() -> None:
    """Hypothesis profiles of every property and differential test: ``ci`` (the default: few examples, fast)
    and ``long`` (``HYPOTHESIS_PROFILE=long``: thousands, run on demand; figures in the closing notes)."""
    try:
        from hypothesis import HealthCheck, settings
    except ImportError:  # the suite without test extras skips those tests itself
        return
    quiet = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
    settings.register_profile("ci", max_examples=25, deadline=None, suppress_health_check=quiet, derandomize=True)
    settings.register_profile("long", max_examples=3000, deadline=None, suppress_health_check=quiet)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


_hypothesis_profiles()


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: one worker more than half again the cores (3 on 2 cores).  Many tests wait on a subprocess,
    a server or a pipe, so a core would otherwise sit idle while its one worker waits."""
    return max(2, (os.cpu_count() or 1) * 3 // 2)


#: tests of half a minute or more on the 2-core machine (``--durations``): started first, so that no worker
#: begins one of them when the others are nearly done
SLOW_FIRST = ("test_readme_commands.py::test_both_commands", "test_packaging.py::test_sdist_and_wheel",
              "test_packaging.py::test_an_install_without", "test_doc_examples.py::test_example_runs_as_written[engines",
              "test_doc_examples.py::test_example_runs_as_written[reports", "test_ter_kernel.py::test_candidate_cap",
              "test_doc_examples.py::test_example_runs_as_written[simultaneous", "test_faults.py::test_a_spark_task",
              "test_sacrebleu_cli.py::test_full_wmt21_systems", "test_ter_kernel.py::test_random_sequences")


def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: not any(slow in item.nodeid for slow in SLOW_FIRST))
