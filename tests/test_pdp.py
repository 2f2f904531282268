"""Pairwise difference Pearson (issue 34, part 2) against MTME's ``Correlation.Pearson(pdp=True)``: values recorded
by tests/data/make_mtme_pdp_expected.py (MTME's own code, commit in the file) on the real WMT21 en-de cases of
tests/meta_cases.py and on edge cases (ties, None human scores, constant rows, two systems)."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalpipe.errors import UsageError
from evalpipe.meta.correlation import pairwise_difference_pearson

EXPECTED = json.loads((Path(__file__).parent / "data" / "mtme_pdp_expected.json").read_text())
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def cases(news):
    from meta_cases import build_cases

    return {c["id"]: c for c in build_cases()["correlations"] if c["statistic"] == "pearson"}


def test_pdp_equals_mtme_on_real_data(cases):
    real = [e for e in EXPECTED["cases"] if not e["id"].startswith("edge/")]
    assert len(real) == len(cases)
    for expected in real:
        case = cases[expected["id"]]
        got, rows = pairwise_difference_pearson(case["gold"], case["metric"], case["num_sys"], case["average_by"])
        assert got == pytest.approx(expected["value"], rel=1e-12, abs=1e-14) and rows == 1, expected["id"]


@pytest.mark.parametrize("expected", [e for e in EXPECTED["cases"] if e["id"].startswith("edge/")],
                         ids=lambda e: e["id"])
def test_pdp_equals_mtme_on_edge_cases(expected):
    got, rows = pairwise_difference_pearson(expected["gold"], expected["metric"], expected["num_sys"],
                                            expected["average_by"])
    assert got == pytest.approx(expected["value"], rel=1e-12, abs=1e-14)
    assert rows == (0 if expected["value"] == 0 else 1)


def test_one_score_a_row_is_refused():
    with pytest.raises(UsageError, match="at least 2 scores in a row"):
        pairwise_difference_pearson([1.0, 2.0, 3.0], [0.1, 0.2, 0.3], 3, "sys")


def test_correlate_pdp_through_the_command_line():
    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)
    base = [str(Path(sys.executable).parent / "evalpipe"), "meta-eval", "correlate", "--root", str(ROOT / "tests" / "data"),
            "--test-set", "wmt21.news", "-l", "en-de", "--scores",
            str(ROOT / "tests" / "data" / "wmt21.news" / "metric-scores" / "en-de" / "COMET-refA.sys.score")]
    done = subprocess.run(base + ["--pdp", "-f", "json"], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    expected = next(e["value"] for e in EXPECTED["cases"] if e["id"] == "sys/COMET-refA/pearson/b/0.0")
    assert doc["pdp"] is True and doc["correlation"] == pytest.approx(expected, rel=1e-12)
    refused = subprocess.run(base + ["--pdp", "--statistic", "kendall"], capture_output=True, text=True, timeout=120,
                             env=env)
    assert refused.returncode == 2 and "--pdp and --statistic" in refused.stderr
    assert not math.isnan(doc["correlation"])
