"""Every shell example in README.md and docs/*.md runs as written, from a copy of the clone's root.

Each ```bash block (and each ```python block that is not a file) is run by ``bash -e -o pipefail`` in a fresh folder
that holds links to the clone's ``src`` and ``tests`` (the shipped data the examples name) and every ```python
block of the same page that starts with ``# NAME.py`` (written there as NAME.py), with the environment's scripts
first on ``PATH``, as a reader who activated the virtual environment runs them.

Two environments, as two readers have them:

* the **core install** (``pip install .``: evalpipe, sacrebleu, numpy, click and nothing else; a cached virtual
  environment with this environment's versions of those three, evalpipe linked in): every block runs there, and
  a block fails there exactly when its first line says what it needs, ``# needs: ARG[, ARG]`` with ARG what
  ``pip install`` takes (``'evalpipe[spark]'``, ``scipy``; words after an ARG are for the reader).  It must fail as the invariant says: one ``Error:``
  line naming the install, no traceback;
* this environment (the test extras): every block marked ``# needs:`` runs.

A block may not run only when its first line says why: ``# not run: REASON`` (a program of another project,
such as cdec or Moses).  The README's first block, the two install commands, is run by
tests/test_readme_commands.py.
"""
from __future__ import annotations

import importlib.metadata
import os
import re
import site
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, cached_anchor, child_env

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"```(bash|python)\n(.*?)```", re.S)
NEEDS = "# needs: "
CORE = ("sacrebleu", "numpy", "click")


def blocks():
    for page in PAGES:
        found = BLOCK.findall(page.read_text(encoding="utf-8"))
        shell = [body for kind, body in found if kind == "bash"]
        if page.name == "README.md":
            shell = shell[1:]  # the install commands
        for number, body in enumerate(shell, 1):
            yield pytest.param(page, body, id=f"{page.name}-{number}")
        snippets = [body for kind, body in found if kind == "python" and not _is_file(body)]
        for number, body in enumerate(snippets, 1):  # a python example that is no file: run as a script
            yield pytest.param(page, f"python3 - <<'PYTHON'\n{body}PYTHON\n", id=f"{page.name}-python-{number}")


def _is_file(body: str) -> bool:
    return bool(re.fullmatch(r"# [\w.]+\.py", body.splitlines()[0] if body.strip() else ""))


def python_files(page: Path) -> dict:
    files = {}
    for kind, body in BLOCK.findall(page.read_text(encoding="utf-8")):
        if kind == "python" and _is_file(body):
            files[body.splitlines()[0][2:]] = body
    return files


def needs(body: str) -> list:
    """The pip arguments a block's first line says it needs (``# needs: ARG[, ARG]``), or []."""
    lines = [line for line in body.splitlines() if not line.startswith("python3 - <<")]
    first = lines[0] if lines else ""
    return [arg.split()[0] for arg in first[len(NEEDS):].split(",")] if first.startswith(NEEDS) else []


def _skip_not_run(page: Path, body: str) -> None:
    first = body.splitlines()[0]
    if first.startswith("# not run:"):
        assert len(first) > len("# not run: ") + 10, f"{page.name}: say why the block does not run"
        pytest.skip(first[2:])


def _run(page: Path, body: str, folder: Path, env: dict) -> subprocess.CompletedProcess:
    for name in ("src", "tests"):
        (folder / name).symlink_to(ROOT / name)
    for name, text in python_files(page).items():
        (folder / name).write_text(text, encoding="utf-8")
    env.pop("EVALPIPE_MTME_ROOT", None)
    return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", body], cwd=folder, capture_output=True, text=True,
                          timeout=600, env=env)


def _report(page: Path, body: str, done: subprocess.CompletedProcess) -> str:
    return f"{page.name}:\n{body}\n--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"


@pytest.fixture(scope="session")
def core_install(tmp_path_factory):
    """(PATH, PYTHONPATH) of the core install: a cached virtual environment holding only evalpipe's three core
    dependencies at this environment's versions, and a folder that links this environment's evalpipe package and
    its metadata (the entry points the metrics register in), with its console scripts on this venv's Python."""
    versions = [f"{name}=={importlib.metadata.version(name)}" for name in CORE]
    venv = cached_anchor("core-" + "-".join(v.replace("==", "") for v in versions), [
        [sys.executable, "-m", "venv", "{dir}"], ["{dir}/bin/python", "-m", "pip", "install", "-q", *versions]])
    python = venv / "bin" / "python"
    import evalpipe

    linked = tmp_path_factory.mktemp("core-site")
    (linked / "evalpipe").symlink_to(Path(evalpipe.__file__).parent)
    infos = [p for folder in site.getsitepackages() for p in Path(folder).glob("evalpipe-*.dist-info")]
    assert len(infos) == 1, f"expected one evalpipe-*.dist-info in {site.getsitepackages()}, got {infos}"
    (linked / infos[0].name).symlink_to(infos[0])
    scripts = linked / "bin"
    scripts.mkdir()
    (scripts / "evalpipe").write_text(f"#!{python}\nimport sys\nfrom evalpipe.cli import main\nsys.exit(main())\n")
    (scripts / "score-corpus").write_text(f"#!{python}\n" + (ROOT / "bin" / "score-corpus").read_text().split("\n", 1)[1])
    for script in scripts.iterdir():
        script.chmod(0o755)
    return os.pathsep.join([str(scripts), str(venv / "bin")]), str(linked)


@pytest.mark.parametrize("page,body", list(blocks()))
def test_example_runs_with_the_core_install_unless_it_says_what_it_needs(page, body, tmp_path, core_install):
    _skip_not_run(page, body)
    path, linked = core_install
    env = child_env()
    env["PATH"] = os.pathsep.join([path, env.get("PATH", "")])
    env["PYTHONPATH"] = linked
    env.pop("VIRTUAL_ENV", None)
    done = _run(page, body, tmp_path, env)
    assert "Traceback" not in done.stderr, _report(page, body, done)
    wanted = needs(body)
    if not wanted:
        assert done.returncode == 0, "fails with the core install; mark what it needs (# needs: ARG)\n" + _report(
            page, body, done)
        return
    assert done.returncode != 0, f"runs with the core install, but is marked # needs: {wanted}\n" + _report(
        page, body, done)
    last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
    assert last.startswith("Error:") and any(f"pip install {arg}" in last for arg in wanted), (
        f"expected one Error: line naming pip install {' or '.join(wanted)}, got {last!r}\n" + _report(page, body, done))


@pytest.mark.parametrize("page,body", [p for p in blocks() if needs(p.values[1])])
def test_example_that_needs_an_extra_runs_with_it(page, body, tmp_path):
    _skip_not_run(page, body)
    env = child_env()
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    done = _run(page, body, tmp_path, env)
    assert done.returncode == 0, _report(page, body, done)
    assert "Traceback" not in done.stderr, done.stderr[-3000:]


def test_the_core_install_has_none_of_the_extras(core_install):
    """The core environment lacks what the marked blocks need (else the first test would prove nothing)."""
    path, linked = core_install
    python = Path(path.split(os.pathsep)[1]) / "python"
    probe = "import importlib.util as u; print([m for m in ('scipy', 'pyspark', 'torch', 'matplotlib', 'yaml', " \
            "'mweralign', 'sentencepiece', 'soundfile') if u.find_spec(m)])"
    done = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, timeout=60,
                          env=dict(child_env(), PYTHONPATH=linked))
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
