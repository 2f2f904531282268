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

KERNELS = ("_ngram_native", "_tokenize_13a", "_text_units", "_ter_native")
MAPPED = {"evalpipe.evaluators": "evaluators", "evalpipe.protocol": "protocol",
          "evalpipe.sufficient_stats": "sufficient_stats"}


def _setup_cfg():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    return cfg


def _folder_packages():
    found = set()
    roots = {"evalpipe": ROOT / "src" / "evalpipe", **{k: ROOT / v for k, v in MAPPED.items()}}
    for name, folder in roots.items():
        for init in folder.rglob("__init__.py"):
            rel = init.parent.relative_to(folder)
            found.add(".".join([name, *rel.parts]) if rel.parts else name)
    return found


def test_listed_packages_match_folders():
    cfg = _setup_cfg()
    listed = set(cfg["options"]["packages"].split())
    assert listed == _folder_packages()
    package_dir = dict(line.split(" = ") for line in cfg["options"]["package_dir"].strip().splitlines())
    assert package_dir == {"evalpipe": "src/evalpipe", **MAPPED}
    assert not (ROOT / "evalpipe").exists(), "a package folder at the checkout root would shadow the installed one"


def test_pyproject_holds_only_build_system():
    text = (ROOT / "pyproject.toml").read_text()
    tables = [line for line in text.splitlines() if line.startswith("[")]
    assert tables == ["[build-system]"]


def test_setup_py_declares_only_the_optional_c_extensions():
    """Everything about the package is in setup.cfg; setup.py adds the C kernels, each optional (an install
    without a compiler goes on, on the Python paths)."""
    import ast

    tree = ast.parse((ROOT / "setup.py").read_text())
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "setup"]
    assert len(calls) == 1 and [k.arg for k in calls[0].keywords] == ["ext_modules"]
    extensions = [n for n in ast.walk(calls[0]) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "Extension"]
    assert {e.args[0].value for e in extensions} == {"evalpipe.evaluators._ngram_native",
                                                     "evalpipe.evaluators._tokenize_13a",
                                                     "evalpipe.evaluators._text_units",
                                                     "evalpipe.evaluators._ter_native"}
    for extension in extensions:
        assert {(k.arg, getattr(k.value, "value", None)) for k in extension.keywords} == {("optional", True)}
        assert all((ROOT / source.value).is_file() for source in extension.args[1].elts)


def test_builtin_metrics_are_entry_points():
    eps = {ep.name: ep.value for ep in entry_points(group="evalpipe.metrics")}
    for name in ("bleu", "chrf", "ter", "token_f1", "accuracy"):
        assert eps[name].startswith("evalpipe.evaluators.")


def test_wheel_contains_every_module(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
                    "-w", str(tmp_path), str(ROOT)], check=True, timeout=300)
    wheel = next(tmp_path.glob("evalpipe-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = set()
    for pkg in _folder_packages():
        base = ROOT / MAPPED[pkg] if pkg in MAPPED else ROOT / "src" / Path(*pkg.split("."))
        for module in base.glob("*.py"):
            expected.add("/".join(pkg.split(".")) + "/" + module.name)
    assert expected <= names, sorted(expected - names)
    assert "evalpipe/demo/newstest.ref.de" in names
    assert any(n.endswith("entry_points.txt") for n in names)
    from test_native import compiler

    if compiler():  # the C kernels are in the wheel, built for this machine
        for module in KERNELS:
            assert any(n.startswith(f"evalpipe/evaluators/{module}.") and n.endswith((".so", ".pyd")) for n in names)


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
    return [(r["system"].rsplit("/", 1)[1], r["metric"], r["score"], r["signature"])
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
    assert {f"evaluators/{c}" for c in ("ngram_native.c", "tokenize_13a.c", "text_units.c", "ter_native.c")} <= inside
    names = zipfile.ZipFile(wheel).namelist()
    imports = "; ".join(f"import evalpipe.evaluators.{k}" for k in KERNELS)
    for name, artefact in (("from-wheel", wheel), ("from-sdist", sdist)):
        python = _venv(tmp_path / name)
        subprocess.run([str(python), "-m", "pip", "install", "-q", str(artefact)], check=True, timeout=600,
                       capture_output=True)
        if compiler():
            assert all(any(n.startswith(f"evalpipe/evaluators/{k}.") for n in names) for k in KERNELS)
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
    missing = subprocess.run([str(python), "-c", "; ".join(f"import evalpipe.evaluators.{k}" for k in KERNELS)],
                             capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert missing.returncode != 0  # no kernel was built
    assert _demo_scores(python) == _demo_scores(sys.executable)
