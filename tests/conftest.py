"""Shared fixtures: the real WMT21 data in ../shared/data beside the project root."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
NEWS = DATA / "wmt21.news"


def lines(path: Path) -> list:
    with open(path, encoding="utf-8") as handle:
        return [line.rstrip("\n") for line in handle]


@pytest.fixture(scope="session")
def news():
    """WMT21 news en-de: refs A, C, D and a few real systems; zh-en: ref A and systems."""
    if not NEWS.is_dir():
        pytest.skip(f"real data not found at {NEWS} (the shared/ folder beside the project)")
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


def child_env() -> dict:
    """The environment for a subprocess under test: without PYTHONUNBUFFERED, which hides a missing flush."""
    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)
    return env
