"""Every shell example in README.md and docs/*.md runs as written, from a copy of the clone's root.

Each ```bash block (and each ```python block that is not a file) is run by ``bash -e -o pipefail`` in a fresh folder that holds links to the clone's
``src`` and ``tests`` (the shipped data the examples name) and every ```python block of the same page
that starts with ``# NAME.py`` (written there as NAME.py), with this environment's scripts first on
``PATH``, as a reader who activated the virtual environment runs them.  A block may not run only when
its first line says why: ``# not run: REASON`` (a program of another project, such as cdec or Moses).
The README's first block, the two install commands, is run by tests/test_readme_commands.py.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, child_env

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"```(bash|python)\n(.*?)```", re.S)


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


@pytest.mark.parametrize("page,body", list(blocks()))
def test_example_runs_as_written(page, body, tmp_path):
    first = body.splitlines()[0]
    if first.startswith("# not run:"):
        assert len(first) > len("# not run: ") + 10, f"{page.name}: say why the block does not run"
        pytest.skip(first[2:])
    for name in ("src", "tests"):
        (tmp_path / name).symlink_to(ROOT / name)
    for name, text in python_files(page).items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    env = child_env()
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.pop("EVALPIPE_MTME_ROOT", None)
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", body], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600, env=env)
    assert done.returncode == 0, f"{page.name}:\n{body}\n--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-3000:]}"
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
