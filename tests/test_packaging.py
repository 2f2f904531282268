"""The packages setup.cfg lists match the folders, and a built wheel holds every module."""
from __future__ import annotations

import configparser
import subprocess
import sys
import zipfile

import pytest
from importlib.metadata import entry_points
from pathlib import Path

from conftest import ROOT

KERNELS = ("_ngram_matches", "_tokenize_13a", "_text_units", "_tercom", "_pairwise_ngrams", "_edit_distance")
MAPPED = {"evalpipe.evaluators": "evaluators", "evalpipe.protocol": "protocol",
          "evalpipe.sufficient_stats": "sufficient_stats"}


def _setup_cfg():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    return cfg


def _folder_packages():
    """{package name: its folder} of every folder with an ``__init__.py`` under the mapped roots."""
    found = {}
    roots = {"evalpipe": ROOT / "src" / "evalpipe", **{k: ROOT / v for k, v in MAPPED.items()}}
    for name, folder in roots.items():
        for init in folder.rglob("__init__.py"):
            rel = init.parent.relative_to(folder)
            found[".".join([name, *rel.parts]) if rel.parts else name] = init.parent
    return found


def test_listed_packages_match_folders():
    cfg = _setup_cfg()
    listed = set(cfg["options"]["packages"].split())
    assert listed == set(_folder_packages())
    package_dir = dict(line.split(" = ") for line in cfg["options"]["package_dir"].strip().splitlines())
    assert package_dir == {"evalpipe": "src/evalpipe", **MAPPED, **{f"evalpipe.evaluators.{room}": f"evaluators/{room}"
                                                                   for room in ("kernels", "realign", "formulas")}}
    assert not (ROOT / "evalpipe").exists(), "a package folder at the checkout root would shadow the installed one"


def test_pyproject_holds_only_build_system():
    text = (ROOT / "pyproject.toml").read_text()
    tables = [line for line in text.splitlines() if line.startswith("[")]
    assert tables == ["[build-system]"]


def test_setup_py_declares_only_the_optional_c_extensions(monkeypatch):
    """Everything about the package is in setup.cfg; setup.py adds the C kernels, each optional (an install
    without a compiler goes on, on the Python references), each from its source in the kernel room."""
    import runpy

    import setuptools

    calls = []
    monkeypatch.setattr(setuptools, "setup", lambda **kw: calls.append(kw))
    monkeypatch.chdir(ROOT)
    runpy.run_path(str(ROOT / "setup.py"))
    assert len(calls) == 1 and list(calls[0]) == ["ext_modules"]
    extensions = calls[0]["ext_modules"]
    reader = "evalpipe.simul._log_columns"  # the SimulEval log reader, outside the kernel room (its own)
    assert {e.name for e in extensions} == {f"evalpipe.evaluators.kernels.{k}" for k in KERNELS} | {reader}
    for extension in extensions:
        assert extension.optional is True
        folder = "src/evalpipe/simul" if extension.name == reader else "evaluators/kernels"
        assert extension.sources == [f"{folder}/{extension.name.rsplit('._', 1)[1]}.c"]
        assert (ROOT / extension.sources[0]).is_file()


def test_builtin_metrics_are_entry_points():
    eps = {ep.name: ep.value for ep in entry_points(group="evalpipe.metrics")}
    for name in ("bleu", "chrf", "ter", "token_f1", "accuracy"):
        assert eps[name].startswith("evalpipe.evaluators.")


def check_wheel_contents(names):
    """Every module of every listed package, the demo data, the entry points and (with a compiler) the kernels."""
    expected = set()
    for pkg, base in _folder_packages().items():
        for module in base.glob("*.py"):
            expected.add("/".join(pkg.split(".")) + "/" + module.name)
    assert expected <= names, sorted(expected - names)
    assert "evalpipe/demo/newstest.ref.de" in names
    assert any(n.endswith("entry_points.txt") for n in names)
    from test_native import compiler

    if compiler():  # the C kernels are in the wheel, built for this machine
        for module in KERNELS:
            assert any(n.startswith(f"evalpipe/evaluators/kernels/{module}.") and n.endswith((".so", ".pyd")) for n in names)


def _clean_copy(tmp_path: Path) -> Path:
    """The files git tracks, copied as they are in the work tree (no build folder, no virtual environment)."""
    import shutil

    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    copy = tmp_path / "evalpipe"
    for name in filter(None, listed.decode().split("\0")):
        if (ROOT / name).is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, copy / name)
    return copy


def _venv(where: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True, timeout=300)
    return where / "bin" / "python"


DEMO_SCORES = ["-m", "evalpipe", "score-corpus", "--demo", "-m", "bleu", "chrf", "ter", "-o", "chrf.word_order=2",
               "-f", "json", "-q"]


def _demo_scores(python) -> list:
    import json

    done = subprocess.run([str(python), *DEMO_SCORES], capture_output=True, text=True, timeout=300, check=True)
    return [(r["system"].rsplit("/", 1)[-1], r["metric"], r["score"], r["signature"])
            for r in json.loads(done.stdout)["results"]]


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="not a git checkout")
def test_sdist_and_wheel_build_from_a_clean_copy_and_install_with_their_kernels(tmp_path):
    """``python -m build``: the sdist carries the C sources and builds in a fresh environment (kernels
    there); the wheel holds the compiled kernels and, installed in another fresh environment, imports them."""
    from test_native import compiler

    copy = _clean_copy(tmp_path)
    subprocess.run([sys.executable, "-m", "build", "--outdir", str(tmp_path / "dist"), str(copy)], check=True,
                   timeout=600, capture_output=True)
    sdist = next((tmp_path / "dist").glob("evalpipe-*.tar.gz"))
    wheel = next((tmp_path / "dist").glob("evalpipe-*.whl"))
    import tarfile

    with tarfile.open(sdist) as archive:
        inside = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {"setup.py", "setup.cfg", "pyproject.toml", "README.md"} <= inside
    assert {f"evaluators/kernels/{k[1:]}.c" for k in KERNELS} <= inside
    names = zipfile.ZipFile(wheel).namelist()
    check_wheel_contents(set(names))
    imports = "; ".join(f"import evalpipe.evaluators.kernels.{k}" for k in KERNELS)
    for name, artefact in (("from-wheel", wheel), ("from-sdist", sdist)):
        python = _venv(tmp_path / name)
        subprocess.run([str(python), "-m", "pip", "install", "-q", str(artefact)], check=True, timeout=600,
                       capture_output=True)
        if compiler():
            assert all(any(n.startswith(f"evalpipe/evaluators/kernels/{k}.") for n in names) for k in KERNELS)
            done = subprocess.run([str(python), "-c", imports + "; import evalpipe, sys; print(evalpipe.__file__)"],
                                  capture_output=True, text=True, cwd=tmp_path, timeout=120)
            assert done.returncode == 0, done.stderr
            assert str(tmp_path / name) in done.stdout  # the installed package, not the checkout


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="not a git checkout")
def test_an_install_without_a_compiler_gives_the_same_numbers(tmp_path):
    """``CC=/bin/false pip install .``: the install goes on without the C kernels, and the Python paths give
    the scores of this environment's (compiled) install, to the last bit."""
    copy = _clean_copy(tmp_path)
    python = _venv(tmp_path / "plain")
    env = {k: v for k, v in __import__("os").environ.items() if k != "PYTHONUNBUFFERED"}
    env["CC"] = "/bin/false"
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(copy)], check=True, timeout=600, env=env,
                   capture_output=True)
    missing = subprocess.run([str(python), "-c", "; ".join(f"import evalpipe.evaluators.kernels.{k}" for k in KERNELS)],
                             capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert missing.returncode != 0  # no kernel was built
    assert _demo_scores(python) == _demo_scores(sys.executable)
