"""The packages setup.cfg lists match the folders, and a built wheel holds every module."""
from __future__ import annotations

import configparser
import subprocess
import sys
import zipfile
from importlib.metadata import entry_points
from pathlib import Path

from conftest import ROOT

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
        for module in ("_ngram_native", "_tokenize_13a", "_text_units"):
            assert any(n.startswith(f"evalpipe/evaluators/{module}.") and n.endswith((".so", ".pyd")) for n in names)
