"""Meta-evaluation against MT Metrics Eval's own numbers.

Expected values: tests/data/mtme_expected.json, written by tests/data/make_mtme_expected.py with
MTME's code (commit recorded in the file) on the same vectors (tests/meta_cases.py); rerun that
script with --mtme PATH to regenerate them.
"""
from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import sacrebleu
from click.testing import CliRunner

from conftest import NEWS, child_env, data_roots, script
from evalpipe.cli import main
from evalpipe.meta.correlation import average_correlation, chance_accuracy
from evalpipe.meta.evalset import EvalSet, EvalSetError
from evalpipe.meta.significance import permutation_test, significance_matrix

EXPECTED = json.loads((Path(__file__).parent / "data" / "mtme_expected.json").read_text())


@pytest.fixture(scope="module")
def cases(news):
    from meta_cases import build_cases

    return build_cases()


def _ours(case):
    options = {"variant": case["variant"], "epsilon": case["epsilon"]} if case["statistic"] == "kendall" else {}
    return average_correlation(case["gold"], case["metric"], case["num_sys"], case["average_by"], case["statistic"],
                               **options)[0]


def test_correlations_equal_mtme(cases):
    expected = {e["id"]: e["value"] for e in EXPECTED["correlations"]}
    assert len(cases["correlations"]) == len(expected)
    for case in cases["correlations"]:
        want = expected[case["id"]]
        got = _ours(case)
        assert (math.isnan(want) and math.isnan(got)) or got == pytest.approx(want, rel=1e-12, abs=1e-14), case["id"]


def test_tie_calibration_equals_mtme(cases):
    from evalpipe.meta.correlation import kendall_with_ties_opt

    expected = {e["id"]: e for e in EXPECTED["tie_calibration"]}
    for case in cases["tie_calibration"]:
        tau, eps = kendall_with_ties_opt(case["gold"], case["metric"], case["num_sys"], case["average_by"],
                                         case["variant"])
        assert (tau, eps) == (expected[case["id"]]["tau"], expected[case["id"]]["epsilon"]), case["id"]


def test_bootstrap_test_is_consistent(cases):
    from evalpipe.meta.significance import bootstrap_test

    case = cases["permutation"][1]
    result = bootstrap_test(case["gold"], case["metric1"], case["metric2"], case["num_sys"], "item", "pearson",
                            k=300, seed=1)
    assert result["ci"][0] <= result["delta"] + 1e-9 or result["ci"][1] >= result["delta"] - 1e-9
    same = bootstrap_test(case["gold"], case["metric1"], case["metric1"], case["num_sys"], "item", "pearson", k=50)
    assert same["delta"] == 0 and same["p_value"] == 1.0


@pytest.mark.parametrize("index", [0, 1, 2])
def test_permutation_mtme_mode_equals_mtme(cases, index):
    case = cases["permutation"][index]
    want = {e["id"]: e for e in EXPECTED["permutation"]}[case["id"]]
    options = {"variant": case["variant"]} if case["statistic"] == "kendall" else {}
    got = permutation_test(case["gold"], case["metric1"], case["metric2"], case["num_sys"], case["average_by"],
                           case["statistic"], k=case["k"], seed=case["seed"], mode="mtme", **options)
    assert got["p_value"] == want["p_value"] and got["trials"] == want["trials"]
    assert got["delta"] == pytest.approx(want["delta"], rel=1e-12)
    fast = permutation_test(case["gold"], case["metric1"], case["metric2"], case["num_sys"], case["average_by"],
                            case["statistic"], k=case["k"], seed=case["seed"], **options)
    assert abs(fast["p_value"] - want["p_value"]) < 0.08  # another random stream, the same test


@pytest.mark.parametrize("index", [0, 1, 2, 3])
def test_pairwise_permutation_mtme_mode_equals_mtme(cases, index):
    """MTME's PairwisePermutationSigDiff (tie-calibrated epsilons, or given ones) reproduced exactly in mtme
    mode; the fast mode runs the same test on another random stream."""
    from evalpipe.meta.pairwise_permutation import pairwise_permutation_test

    case = cases["pairwise"][index]
    want = {e["id"]: e for e in EXPECTED["pairwise"]}[case["id"]]
    args = (case["gold"], case["metric1"], case["metric2"], case["num_sys"], case["average_by"], case["variant"])
    eps = {"epsilon1": case.get("epsilon1"), "epsilon2": case.get("epsilon2")}
    got = pairwise_permutation_test(*args, k=case["k"], seed=case["seed"], mode="mtme", **eps)
    assert (got["p_value"], got["trials"]) == (want["p_value"], want["trials"])
    assert got["delta"] == want["delta"]
    fast = pairwise_permutation_test(*args, k=2000, seed=case["seed"], **eps)
    assert fast["delta"] == got["delta"] and abs(fast["p_value"] - want["p_value"]) < 0.06
    for metric, which in ((case["metric1"], "1"), (case["metric2"], "2")):  # each metric's own correlation
        assert got["correlation" + which] == average_correlation(
            case["gold"], metric, case["num_sys"], case["average_by"], "kendall", variant=case["variant"],
            epsilon=got["epsilon" + which])[0]


class Enumerator:
    """A stand-in generator whose ``binomial(n, 0.5, size)`` returns every head-count vector for the group
    sizes ``n``, each repeated C(n, heads) times: as many rows as there are coin assignments, so a p-value
    over its rows is the exact one."""

    def binomial(self, n, p, size):
        rows = [()]
        for count in np.asarray(n).tolist():
            rows = [r + (h,) for r in rows for h in range(count + 1) for _ in range(math.comb(count, h))]
        assert p == 0.5 and size == (len(rows), len(np.asarray(n)))
        return np.array(rows, dtype=np.int64).reshape(size)


@pytest.mark.parametrize("variant", ["acc23", "23", "b"])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_pairwise_fast_head_counts_equal_every_coin_assignment(variant, seed):
    """The fast mode draws head counts per group of pairs instead of coins per pair.  Over every possible
    head-count vector (each weighted by its number of coin assignments) its p-value equals the p-value over
    every coin assignment of the differing pairs, hybrids built directly from their outcomes -- in exact
    fractions for the linear variants, with the same float formulas for tau-b."""
    from fractions import Fraction

    from evalpipe.meta import pairwise_permutation as pp

    rng = np.random.default_rng(seed)
    num_sys, items = 3, 4
    gold = [None if rng.random() < 0.1 else float(rng.integers(0, 3)) for _ in range(num_sys * items)]
    metric1, metric2 = (rng.integers(0, 4, num_sys * items).astype(float).tolist() for _ in range(2))
    rows = pp.groups(gold, metric1, num_sys, "item")
    lens = [len(g) for g, _ in rows]
    y = np.concatenate([g for g, _ in rows])
    out1, row = pp.pair_outcomes(y, np.concatenate([m for _, m in rows]), lens, 0.0)
    out2, _ = pp.pair_outcomes(y, np.concatenate([m for _, m in pp.groups(gold, metric2, num_sys, "item")]), lens, 0.0)
    base1, base2 = pp.row_counts(row, out1, len(lens)), pp.row_counts(row, out2, len(lens))
    differ = np.flatnonzero(out1 != out2)
    assert 0 < len(differ) <= 14

    def mean_tau(outcomes):
        counts = pp.row_counts(row, outcomes, len(lens))
        if variant == "b":
            return pp.average_rows(pp.taus_from_counts(counts, "b"), False)
        w = pp.LINEAR[variant]
        return sum(Fraction(int(np.dot(w, c)), int(c.sum())) for c in counts) / len(lens)

    delta = mean_tau(out2) - mean_tau(out1)
    hits = 0
    for bits in range(2 ** len(differ)):
        coin = np.zeros(len(out1), dtype=bool)
        coin[differ] = [(bits >> b) & 1 for b in range(len(differ))]
        hits += mean_tau(np.where(coin, out2, out1)) - mean_tau(np.where(coin, out1, out2)) >= delta
    exact = Fraction(hits, 2 ** len(differ))
    kinds = pp._kinds(row, out1, out2)
    coins = sum(pp._linear_classes(base1, base2, *kinds, pp.LINEAR[variant])[0].values()) \
        if variant in pp.LINEAR else len(differ)  # the linear path leaves out pairs that cannot change a tau
    k = 2 ** coins
    p, trials = pp._fast_trials(Enumerator(), row, out1, out2, base1, base2, variant, float(delta), k, k + 1,
                                0.02, 0.5, False)
    assert trials == k and Fraction(p).limit_denominator(k) == exact


def test_pairwise_fast_beyond_int64_is_the_same_test(cases, monkeypatch):
    """Rows of many sizes make lcm(T_r) overflow int64: the linear variants then sum Python integers, with the
    same verdicts (forced here on a real case)."""
    from evalpipe.meta import pairwise_permutation as pp

    case = cases["pairwise"][0]
    args = (case["gold"], case["metric1"], case["metric2"], case["num_sys"], "sys", "acc23")
    want = pp.pairwise_permutation_test(*args, k=300, seed=5, epsilon1=0.5, epsilon2=1.5)
    monkeypatch.setattr(pp, "INT64_SAFE", 0)
    assert pp.pairwise_permutation_test(*args, k=300, seed=5, epsilon1=0.5, epsilon2=1.5) == want


def test_significance_matrix_equals_mtme(cases):
    m = cases["matrix"]
    got = significance_matrix(m["gold"], m["metrics"], m["num_sys"], "none", "pearson", k=m["k"], seed=m["seed"],
                              mode="mtme")
    want = EXPECTED["matrix"]
    assert got["metrics"] == want["order"]
    assert got["matrix"] == want["matrix"]
    assert got["ranks"] == want["ranks"]


def test_fast_pearson_batch_agrees_with_trial_by_trial():
    rng = np.random.default_rng(0)
    gold = list(rng.normal(size=60))
    gold[3] = None
    m1 = [(g or 0) + rng.normal() for g in gold]
    m2 = [(g or 0) + rng.normal(scale=0.5) for g in gold]
    a = permutation_test(gold, m1, m2, 6, "sys", "pearson", k=400, seed=1, block_size=400)
    # the same draws, correlations computed one trial at a time through the generic path
    b = permutation_test(gold, m1, m2, 6, "sys", "spearman", k=2, seed=1)
    assert 0 <= a["p_value"] <= 1 and a["trials"] == 400 and b["trials"] == 2


def test_chance_level_of_accuracy():
    assert chance_accuracy([1, 2, 3, 4]) == 0.5
    assert chance_accuracy([1, 1, 2, 2]) == pytest.approx(0.5 * 4 / 6)


@pytest.mark.parametrize("root", data_roots())
def test_evalset_reads_real_data(root):
    evs = EvalSet(str(root), NEWS.name, "en-de")
    assert len(evs.src) == (1002 if root != NEWS.parent else 150) and set(evs.refs) == {"refA", "refC", "refD"}
    assert len(evs.sys_outputs) >= 12
    assert evs.Scores("sys", "mqm") and evs.Scores("seg", "mqm")
    assert evs.Scores("seg", "BLEU-refA") is None


def _copy_set(tmp_path):
    root = tmp_path / "root"
    shutil.copytree(NEWS, root / NEWS.name)
    for path in root.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return root


def test_validation_names_file_and_line(news, tmp_path):
    root = _copy_set(tmp_path)
    bad = root / NEWS.name / "human-scores" / "en-de.mqm.sys.score"
    lines = bad.read_text().splitlines()
    lines[2] = "SystemX not-a-number"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(EvalSetError, match=r"en-de\.mqm\.sys\.score, line 3: expected a number or None"):
        EvalSet(str(root), NEWS.name, "en-de")
    with pytest.raises(EvalSetError, match="no language pair 'xx-yy'"):
        EvalSet(str(root), NEWS.name, "xx-yy")


def test_metric_score_files_are_read_when_used(news, tmp_path):
    """A metric's score file is read on first use: a malformed one stops the command that uses it (one line
    naming the file and line, exit 1) and no other."""
    root = _copy_set(tmp_path)
    bad = root / NEWS.name / "metric-scores" / "en-de" / "chrF-refC.sys.score"
    bad.write_text(bad.read_text().replace("\n", "\nSystemX not-a-number\n", 1))
    base = [script("evalpipe"), "meta-eval", "compare", "--root", str(root), "--test-set", NEWS.name, "-l", "en-de",
            "-k", "50", "-f", "json"]
    good = subprocess.run([*base, "BLEU-refA", "COMET-refA"], capture_output=True, text=True, env=child_env(),
                          timeout=120)
    assert good.returncode == 0 and json.loads(good.stdout)["trials"] >= 1, good.stderr
    broken = subprocess.run([*base, "BLEU-refA", "chrF-refC"], capture_output=True, text=True, env=child_env(),
                            timeout=120)
    assert broken.returncode == 1 and broken.stdout == "", broken.stderr
    assert broken.stderr.strip().splitlines()[-1].endswith(
        "chrF-refC.sys.score, line 2: expected a number or None, got 'not-a-number'"), broken.stderr


def test_add_metric_then_correlate_and_compare(news, tmp_path):
    root = _copy_set(tmp_path)
    runner = CliRunner()
    base = ["--root", str(root), "--test-set", NEWS.name, "-l", "en-de"]
    result = runner.invoke(main, ["meta-eval", "add-metric", *base, "bleu", "--ref", "refA"])
    assert result.exit_code == 0, result.output
    sys_file = root / NEWS.name / "metric-scores" / "en-de" / "bleu-refA.sys.score"
    seg_file = root / NEWS.name / "metric-scores" / "en-de" / "bleu-refA.seg.score"
    # system BLEU written by add-metric equals sacrebleu's corpus BLEU of the same files
    evs = EvalSet(str(root), NEWS.name, "en-de")
    ours = dict(line.split() for line in sys_file.read_text().splitlines())
    assert set(ours) == set(evs.sys_outputs) - {"refA"}
    for system, value in ours.items():
        assert float(value) == sacrebleu.corpus_bleu(evs.sys_outputs[system], [evs.refs["refA"]]).score
    result = runner.invoke(main, ["meta-eval", "correlate", *base, "-f", "json"], input=sys_file.read_text())
    doc = json.loads(result.stdout)
    assert doc["level"] == "sys" and -1 <= doc["correlation"] <= 1
    result = runner.invoke(main, ["meta-eval", "correlate", *base, "--statistic", "kendall", "--variant", "acc23",
                                  "--average", "item", "--scores", str(seg_file), "-f", "json"])
    doc = json.loads(result.stdout)
    assert doc["level"] == "seg" and "chance" in doc
    result = runner.invoke(main, ["meta-eval", "compare", *base, "BLEU-refA", "COMET-refA", "-k", "200", "--seed", "1",
                                  "-f", "json"])
    assert result.exit_code == 0, result.output
    assert 0 <= json.loads(result.stdout)["p_value"] <= 1
    result = runner.invoke(main, ["meta-eval", "matrix", *base, "-m", "BLEU-refA,COMET-refA,bleu-refA",
                                  "-k", "100", "-f", "json"])
    assert json.loads(result.stdout)["ranks"][0] == 1
    assert runner.invoke(main, ["meta-eval", "list", "--root", str(root)]).output.startswith(NEWS.name)


TASKS = json.loads((Path(__file__).parent / "data" / "mtme_tasks.json").read_text())


@pytest.mark.parametrize("task", TASKS["tasks"], ids=lambda t: t["statistic"])
def test_mtme_default_task_matrices_with_its_block_of_100(task):
    """MTME's tasks.Task (k 1000, early stopping in blocks of 100; tests/data/make_mtme_tasks.py ran it on
    wmt21.news en-de): with --mode mtme and block_size 100 the significance matrix, the metric order (names
    break ties of correlation, as MTME's) and the ranks are MTME's."""
    args = (task["gold"], task["metrics"], task["num_sys"], "none", task["statistic"])
    got = significance_matrix(*args, k=task["k"], seed=TASKS["seed"], mode="mtme", block_size=task["block_size"])
    assert got["metrics"] == task["order"] and got["ranks"] == task["ranks"]
    assert got["matrix"] == task["matrix"]
    # (Pearson's sums run in another order than scipy's: the last bit may differ)
    assert got["correlations"] == pytest.approx(task["correlations"], rel=1e-15, abs=1e-15)


def test_the_block_is_what_makes_mtme_task_matrices():
    """With MTME's other default block, 1000, some task's matrix is not MTME's task matrix."""
    differ = []
    for task in TASKS["tasks"]:
        args = (task["gold"], task["metrics"], task["num_sys"], "none", task["statistic"])
        differ.append(significance_matrix(*args, k=task["k"], seed=TASKS["seed"], mode="mtme",
                                          block_size=1000)["matrix"] != task["matrix"])
    assert any(differ)


def test_k_block_reaches_the_tests_through_the_console_script(tmp_path):
    """--k-block on matrix and compare (default MTME's 1000) is the block the tests stop in; bootstrap refuses it."""
    base = [script("evalpipe"), "meta-eval"]
    where = ["--root", str(NEWS.parent), "--test-set", NEWS.name, "-l", "en-de", "--level", "sys", "-f", "json"]
    metrics = ["BLEU-refA", "COMET-refA", "chrF-refA"]

    def run(*args):
        done = subprocess.run([*base, *args], capture_output=True, text=True, env=child_env(), timeout=120)
        return done.returncode, done.stdout, done.stderr

    found = {}
    for block in (None, "100", "1000"):
        code, out, err = run("matrix", *where, "-m", *metrics, "--mode", "mtme", "--seed", "3",
                             *(["--k-block", block] if block else []))
        assert code == 0, err
        found[block] = json.loads(out)
    assert found[None]["k_block"] == 1000 and found[None]["matrix"] == found["1000"]["matrix"]
    doc = found["100"]
    gold_systems = doc["systems"]
    want = significance_matrix(doc["human_scores"], doc["metric_scores"], len(gold_systems), "none", "pearson",
                               k=1000, seed=3, mode="mtme", block_size=100)
    assert doc["k_block"] == 100 and doc["matrix"] == want["matrix"]
    code, out, err = run("compare", *where, "BLEU-refA", "COMET-refA", "--k-block", "100", "--seed", "3")
    assert code == 0 and json.loads(out)["k_block"] == 100, err
    code, out, err = run("compare", *where, "BLEU-refA", "COMET-refA", "--test", "bootstrap", "--k-block", "100")
    assert code == 2 and "Error: --k-block" in err and "Traceback" not in err


def test_ted_set_with_documents():
    evs = EvalSet(str(NEWS.parent), "wmt21.tedtalks", "en-de")
    assert len(evs.docs) > 1 and len(evs.doc_per_seg) == len(evs.src)
    assert evs.level_size("doc") == len(evs.docs)
    gold = evs.Scores("seg", "mqm")
    assert gold and all(len(v) == len(evs.src) for v in gold.values())
    with pytest.raises(EvalSetError, match="doc"):
        evs._checked({"x": [1.0]}, "doc", "test")


def random_rows(seed, lens, trials):
    """Gold and two metrics with ties (one decimal), rows of the given lengths, and coin draws."""
    rng = np.random.default_rng(seed)
    y = np.round(rng.normal(size=sum(lens)), 1)
    s1, s2 = np.round(rng.normal(size=sum(lens)), 1), np.round(rng.normal(size=sum(lens)), 1)
    starts = np.r_[0, np.cumsum(lens)][:-1]
    bounds = [(int(b), int(b + n)) for b, n in zip(starts, lens)]
    return y, s1, s2, bounds, rng.integers(0, 2, size=(trials, sum(lens))).astype(np.float64)


@pytest.mark.parametrize("variant", ["b", "23", "acc23"])
def test_batched_kendall_equals_direct_computation(variant):
    from evalpipe.meta import significance as S
    from evalpipe.meta.correlation import kendall

    y, s1, s2, bounds, W = random_rows(5, [5, 7, 3], 20)
    lens = [e - b for b, e in bounds]
    tables = S._kendall_tables(y, s1, s2, bounds, 0.0)
    r1, r2 = S._kendall_batch(W, tables, len(lens), variant)
    for t, w in enumerate(W):
        m1, m2 = s2 + w * (s1 - s2), s1 - w * (s1 - s2)
        for g, (b, e) in enumerate(bounds):
            for got, m in ((r1[t, g], m1), (r2[t, g], m2)):
                want = kendall(y[b:e], m[b:e], variant)
                assert (np.isnan(want) and np.isnan(got)) or got == pytest.approx(want, abs=1e-12)


def reference_ties_opt(gold, metric, num_sys, average_by, variant, sample_rate, rng):
    """The pair-by-pair form of tie calibration (evalpipe's earlier code, MTME's loop written out): the
    reference the vectorized kendall_with_ties_opt is checked against."""
    from evalpipe.meta.correlation import Pair, kendall_from_counts, reshape

    random_state = rng
    rng = random_state
    rows_g, rows_m = reshape(gold, num_sys, average_by), reshape(metric, num_sys, average_by)
    pairs = []  # (diff, row, its Pair outcome, its outcome once the metric ties it)
    for r, (g, m) in enumerate(zip(rows_g, rows_m)):
        kept = [(a, b) for a, b in zip(g, m) if a is not None and b is not None]
        for i in range(len(kept)):
            for j in range(i + 1, len(kept)):
                if sample_rate < 1.0 and not rng.random_sample() <= sample_rate:
                    continue
                (h1, m1), (h2, m2) = kept[i], kept[j]
                if h1 == h2:
                    outcome = Pair.BOTH_TIED if m1 == m2 else Pair.HUMAN_TIE
                elif m1 == m2:
                    outcome = Pair.METRIC_TIE
                else:
                    outcome = Pair.CONCORDANT if (h1 > h2) == (m1 > m2) else Pair.DISCORDANT
                pairs.append((abs(m1 - m2), r, outcome, Pair.BOTH_TIED if h1 == h2 else Pair.METRIC_TIE))
    if not pairs:
        return 0.0, 0.0
    counts: Dict[int, List[int]] = {}
    for _, r, outcome, _ in pairs:
        counts.setdefault(r, [0, 0, 0, 0, 0])[outcome] += 1

    def tau(c: List[int]) -> float:
        return kendall_from_counts(*c, variant=variant)

    # MTME's running sum, in its order, so the arg-max (and ties between thresholds) is the same
    total_tau = sum(tau(c) for c in counts.values())
    thresholds, taus = [0.0], [total_tau / len(counts)]
    for d, r, outcome, tie_outcome in sorted(pairs, key=lambda p: p[0]):
        c = counts[r]
        total_tau -= tau(c)
        c[outcome] -= 1
        c[tie_outcome] += 1
        total_tau += tau(c)
        if thresholds[-1] == d:
            taus[-1] = total_tau / len(counts)
        else:
            thresholds.append(d)
            taus.append(total_tau / len(counts))
    best = int(np.nanargmax(taus))
    return float(taus[best]), float(thresholds[best])


@pytest.mark.parametrize("sample_rate", [1.0, 0.6])
def test_tie_calibration_equals_the_pair_by_pair_loop(sample_rate):
    from evalpipe.meta.correlation import kendall_with_ties_opt

    rng = np.random.default_rng(8)
    for trial in range(40):
        num_sys, items = int(rng.integers(2, 6)), int(rng.integers(1, 12))
        gold = [None if rng.random() < 0.15 else float(rng.integers(0, 4)) for _ in range(num_sys * items)]
        metric = [float(v) for v in np.round(rng.normal(size=num_sys * items), int(rng.integers(0, 2)))]
        for average_by in ("none", "sys", "item"):
            for variant in ("acc23", "23"):
                args = (gold, metric, num_sys, average_by, variant, sample_rate)
                want = reference_ties_opt(*args, np.random.RandomState(trial))
                assert kendall_with_ties_opt(*args, np.random.RandomState(trial)) == want, (trial, average_by, variant)


@pytest.mark.parametrize("variant", ["b", "23", "acc23"])
def test_short_row_kendall_form_equals_the_table_lookups(variant, monkeypatch):
    """The multilinear form for short rows gives the per-trial values of the table-lookup path, bit for bit."""
    from evalpipe.meta import significance as S

    y, s1, s2, bounds, W = random_rows(12, [5, 9, 2, 13, 4], 40)
    lens = [e - b for b, e in bounds]
    tables = S._kendall_tables(y, s1, s2, bounds, 0.05)
    short = S._kendall_batch(W, tables, len(lens), variant)
    monkeypatch.setattr(S, "SMALL_GROUP", 0)
    lookups = S._kendall_batch(W, tables, len(lens), variant)
    for a, b in zip(short, lookups):
        np.testing.assert_array_equal(a, b)
