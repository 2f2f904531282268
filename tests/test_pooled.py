"""Accuracy pooled over language pairs (issue 34 part 3): MTME's ``CompareMetricsWithGlobalAccuracy``.

Expected values were computed by MTME's own code at commit 68a481ae, on ../shared/data's wmt21.news en-de and zh-en
(official BLEU, chrF and COMET system scores against reference A, MQM system scores): ``tests/data/
make_mtme_pooled_expected.py`` (its docstring has the command) wrote ``tests/data/mtme_pooled_expected.json`` with
each language pair's systems in the order MTME used (a Python set's: ``PYTHONHASHSEED``), MTME's agreement counts,
and its accuracies, significance matrices and ranks for k = 1000 and 200 after ``numpy.random.seed(11)``.
"""
from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

from conftest import DATA, child_env, script
from evalpipe.meta.pooled import Part, permutation_test, pooled_accuracy, significance_matrix

EXPECTED = json.loads((DATA / "mtme_pooled_expected.json").read_text())


def _parts_and_vectors():
    parts = [Part(p["lp"], p["gold"]) for p in EXPECTED["parts"]]
    names = list(EXPECTED["parts"][0]["metrics"])
    vectors = {m: [v for p in EXPECTED["parts"] for v in p["metrics"][m]] for m in names}
    return parts, vectors


def test_agreement_counts_are_mtmes():
    for p in EXPECTED["parts"]:
        part = Part(p["lp"], p["gold"])
        for metric, (agree, pairs) in p["agreement"].items():
            assert (part.agree(np.asarray(p["metrics"][metric])), part.pairs) == (agree, pairs)


@pytest.mark.parametrize("run", EXPECTED["runs"], ids=lambda r: f"k{r['k']}")
def test_mtme_mode_gives_mtmes_accuracies_matrix_and_ranks(run):
    parts, vectors = _parts_and_vectors()
    got = significance_matrix(parts, vectors, k=run["k"], seed=EXPECTED["seed"], mode="mtme",
                              block_size=run["block_size"])
    assert got["metrics"] == run["order"]
    assert got["correlations"] == run["accuracies"]
    assert got["matrix"] == run["matrix"]
    assert got["ranks"] == run["ranks"]


def test_fast_mode_agrees_in_distribution():
    """The fast mode draws other coins: with 20,000 trials its p-values are within 0.06 of MTME's at k = 1000 (the
    standard error of a p-value near 0.45 over 1,000 trials is 0.016: 0.06 is about four of them)."""
    parts, vectors = _parts_and_vectors()
    mtme = EXPECTED["runs"][0]
    got = significance_matrix(parts, vectors, k=20000, seed=3, mode="fast", block_size=20000)
    assert got["metrics"] == mtme["order"] and got["ranks"] == mtme["ranks"]
    assert np.abs(np.array(got["matrix"]) - np.array(mtme["matrix"])).max() < 0.06


def test_fast_and_mtme_modes_count_the_same_trials_exactly():
    """Both modes compute a trial's accuracies from integer agreement counts: the fast mode's table of a pair's four
    coin cases gives what recomputing the mixed vectors gives, trial by trial."""
    parts, vectors = _parts_and_vectors()
    names = list(vectors)
    s1, s2 = np.asarray(vectors[names[0]]), np.asarray(vectors[names[1]])
    z1, z2 = (s1 - s1.mean()) / s1.std(), (s2 - s2.mean()) / s2.std()
    result = permutation_test(parts, vectors[names[0]], vectors[names[1]], k=300, seed=9, mode="fast", block_size=300)
    # the same draws, recomputed directly
    w = np.random.default_rng(9).integers(0, 2, size=(300, len(s1)), dtype=np.int8)
    total = sum(p.pairs for p in parts)
    bounds = np.cumsum([0] + [len(p.gold) for p in parts])

    def acc(m):
        return sum(p.agree(m[b:e]) for p, b, e in zip(parts, bounds, bounds[1:])) / total

    diffs = [acc(wi * z2 + (1 - wi) * z1) - acc(wi * z1 + (1 - wi) * z2) for wi in w]
    delta = acc(z2) - acc(z1)
    assert result["p_value"] == np.mean(np.array(diffs) >= delta)


def test_the_command_pools_language_pairs():
    base = [script("evalpipe"), "meta-eval", "matrix", "--root", str(DATA), "--test-set", "wmt21.news",
            "-l", "en-de,zh-en", "--statistic", "accuracy", "-m", "BLEU-refA", "chrF-refA", "COMET-refA", "-k", "200",
            "--k-block", "100", "-f", "json"]
    done = subprocess.run(base, capture_output=True, text=True, env=child_env(), timeout=300)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    run = EXPECTED["runs"][0]
    shown = {"BLEU-refA": "BLEU", "chrF-refA": "chrF", "COMET-refA": "*COMET"}
    assert [shown[m] for m in doc["metrics"]] == run["order"] and doc["correlations"] == run["accuracies"]
    assert doc["pooled"] and doc["language_pairs"] == ["en-de", "zh-en"] and doc["pairs"] == 56
    head = base[:base.index("--statistic")]
    for args, needle in ((["--statistic", "pearson"], "--statistic accuracy"),
                         (["--statistic", "accuracy", "--average", "sys"], "--average"),
                         (["--statistic", "accuracy", "-m", "nosuch"], "'nosuch' has no system scores in en-de")):
        bad = subprocess.run(head + args, capture_output=True, text=True, env=child_env(), timeout=300)
        assert bad.returncode == 2 and needle in bad.stderr and "Traceback" not in bad.stderr, (args, bad.stderr)
