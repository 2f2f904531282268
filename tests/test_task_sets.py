"""Task sets (issue 34, part 4) and their tables (part 5): ``evalpipe meta-eval tasks`` equal to MTME's recipes.

Expected values were computed by MTME's own code at commit 68a481ae: ``tests/data/make_mtme_task_sets.py`` (its
docstring has the command and says how the recipes were pointed at wmt21.news) ran ``tasks.WMT23``,
``WMT24OnWMT23``, ``WMT24`` and ``WMT25`` on en-de + zh-en with k = 0, primary and not, on the data
``tests/task_set_data.build`` writes (the shipped subset, and the full ../shared/data set), and recorded every task's
correlations and ranks, the weights, average ranks and correlations and the tables in TSV, text and LaTeX.  The same
builder writes the same data here; evalpipe reads MTME's meta-information from the ``meta-info.json`` the script
recorded.
"""
from __future__ import annotations

import json
import re
import subprocess

import pytest
from click.testing import CliRunner

from conftest import DATA, SHARED, child_env, script
from evalpipe.cli import main
from evalpipe.meta.tasks import assign_weights, make_task, parse_task_attrs, recipe
from task_set_data import LPS, build

EXPECTED = json.loads((DATA / "mtme_task_sets.json").read_text())
LABELS = [pytest.param("subset", id="subset"),
          pytest.param("full", id="full", marks=[pytest.mark.fullcorpus, pytest.mark.skipif(
              not SHARED.is_dir() or "full" not in EXPECTED["data"], reason=f"full data not found at {SHARED}")])]


@pytest.fixture(scope="module")
def roots(tmp_path_factory):
    made = {}

    def get(label):
        if label not in made:
            root = tmp_path_factory.mktemp(f"tasks-{label}")
            news = build(DATA if label == "subset" else SHARED, root)
            (news / "meta-info.json").write_text(json.dumps(EXPECTED["meta_info"]))
            made[label] = root
        return made[label]
    return get


def _run(root, *args, test_set="wmt21.news"):
    where = ["--test-set", test_set] if test_set else []
    result = CliRunner().invoke(main, ["meta-eval", "tasks", "--root", str(root), *where, *args])
    assert result.exit_code == 0, result.output
    return result.stdout


#: SPA (corr_fcn=pce) as MTME records it is decided on a float32 matrix product whose rounding depends on the
#: recording CPU; evalpipe decides the same trials exactly (tests/test_spa.py bounds the difference trial by trial).
#: On these data the trials float32 rounding decides move SPA, and what is averaged from it, by at most this much.
SPA_ROUNDING = 2e-3


def _close(mine, theirs, name):
    return pytest.approx(theirs, abs=SPA_ROUNDING if "corr_fcn=pce" in name else 1e-12)


def _same_table(got: str, want: str, tolerance: float) -> None:
    """The same table but for numbers, which are within ``tolerance`` (byte for byte when it is 0)."""
    number = r"-?\d+\.\d+"
    if not tolerance:
        assert got == want
        return
    assert re.sub(number, "#", got) == re.sub(number, "#", want)
    pairs = zip(map(float, re.findall(number, got)), map(float, re.findall(number, want)))
    assert all(abs(a - b) <= tolerance for a, b in pairs), (got, want)


@pytest.mark.parametrize("label", LABELS)
def test_recipes_equal_mtmes_tasks_averages_and_tables(roots, label):
    root = roots(label)
    for run in EXPECTED["data"][label]:
        args = ["--recipe", run["recipe"], "-l", ",".join(LPS), *([] if run["primary"] else ["--no-primary"])]
        got = json.loads(_run(root, *args, "-f", "json"))
        what = f"{run['recipe']} primary={run['primary']}"
        assert got["weights"] == pytest.approx(run["weights"], abs=1e-15), what
        assert len(got["tasks"]) == len(run["tasks"]), what
        for mine, theirs in zip(got["tasks"], run["tasks"]):
            # MTME's recipes name their own test sets (wmt23, wmt24, wmt25): the rest of the name is the same
            assert mine["task"].split(" ", 1)[1] == theirs["name"].split(" ", 1)[1], what
            if "corr_fcn=pce" in theirs["name"]:  # metrics within SPA_ROUNDING of each other may swap places
                assert dict(zip(mine["metrics"], mine["correlations"])) == pytest.approx(
                    dict(zip(theirs["metrics"], theirs["correlations"])), abs=SPA_ROUNDING), (what, theirs["name"])
                swapped = [(a, b) for a, b in zip(mine["metrics"], theirs["metrics"]) if a != b]
                assert all(abs(dict(zip(mine["metrics"], mine["correlations"]))[a]
                               - dict(zip(mine["metrics"], mine["correlations"]))[b]) <= SPA_ROUNDING
                           for a, b in swapped), (what, theirs["name"])
                continue
            assert mine["metrics"] == theirs["metrics"], (what, theirs["name"])
            assert mine["ranks"] == theirs["ranks"], (what, theirs["name"])
            assert mine["correlations"] == _close(mine, theirs["correlations"], theirs["name"]), (what, theirs["name"])
        spa = SPA_ROUNDING if any("corr_fcn=pce" in t["name"] for t in run["tasks"]) else 0
        reordered = any(m["metrics"] != t["metrics"] for m, t in zip(got["tasks"], run["tasks"]))
        if not reordered:
            assert list(got["average_ranks"]) == list(run["average_ranks"]), what
            assert list(got["average_ranks"].values()) == pytest.approx(list(run["average_ranks"].values()), abs=1e-12)
        assert sorted(got["average_correlations"]) == sorted(run["average_correlations"]), what
        assert got["average_correlations"] == pytest.approx(run["average_correlations"], abs=spa or 1e-12)
        for fmt in ("tsv", "text", "latex"):
            out = _run(root, *args, "-f", fmt)
            table = out.split("\n\ntask1: ")[0] + "\n" if fmt == "text" else out
            if reordered:  # rows and ranks moved where SPA values within SPA_ROUNDING swapped two metrics
                table, want = "\n".join(sorted(table.splitlines())), "\n".join(sorted(run["tables"][fmt].splitlines()))
                def shape(text):  # the table without its numbers and the bold marking rank 1
                    return re.sub(r"[\d.\s-]+", " ", re.sub(r"\\textbf\{([^}]*)\}", r"\1", text))

                assert shape(table) == shape(want), (what, fmt)
            else:
                _same_table(table, run["tables"][fmt], spa)


def test_console_script_runs_a_recipe_and_prints_the_task_legend(roots):
    root = roots("subset")
    done = subprocess.run([script("evalpipe"), "meta-eval", "tasks", "--root", str(root), "--test-set", "wmt21.news",
                           "--recipe", "WMT24", "-l", "en-de,zh-en"], capture_output=True, text=True,
                          env=child_env(), timeout=120)
    assert done.returncode == 0, done.stderr
    assert "task4: test_set=wmt21.news lang=zh-en domain=None level=seg" in done.stdout
    assert done.stdout.startswith("lang:")


def test_task_lines_equal_the_recipe_tasks(roots, tmp_path):
    """A task set written by hand -- MTME's task names in a file, one JSON object on the command line -- gives the
    recipe's numbers for those tasks."""
    root = roots("subset")
    tasks, _ = recipe("WMT24", "wmt21.news", list(LPS))
    lines = tmp_path / "tasks.txt"
    lines.write_text("# WMT24's en-de tasks\n" + "\n".join(t.name for t in tasks[:2]) + "\n")
    zh = {"lang": "zh-en", "level": "seg", "corr_fcn": "KendallWithTiesOpt", "avg_by": "item", "perm_test": "pairs",
          "corr_fcn_args": {"sample_rate": 1.0}, "human": False, "k": 0}
    got = json.loads(_run(root, "--tasks", str(lines), "--task", json.dumps(zh), "-f", "json"))
    full = json.loads(_run(root, "--recipe", "WMT24", "-l", ",".join(LPS), "-f", "json"))
    for mine, theirs in zip(got["tasks"], [full["tasks"][i] for i in (0, 1, 3)]):
        assert (mine["metrics"], mine["ranks"], mine["correlations"]) == \
            (theirs["metrics"], theirs["ranks"], theirs["correlations"])
    assert got["weights"] == pytest.approx([1 / 3] * 3)


def test_assign_weights_is_mtmes_recursive_split():
    tasks = [make_task(parse_task_attrs(f"lang={lp} level={lv}", "t")) for lp, lv in
             [("en-de", "sys"), ("en-de", "seg"), ("en-de", "seg"), ("zh-en", "sys")]]
    assert assign_weights(tasks, ["lang"]) == [1 / 6, 1 / 6, 1 / 6, 1 / 2]
    assert assign_weights(tasks, ["lang", "level"]) == [1 / 4, 1 / 8, 1 / 8, 1 / 2]
    assert assign_weights(tasks, []) == [1 / 4] * 4


def test_significance_with_k_ranks_into_clusters(roots):
    """With k > 0 every task gets its permutation test and clusters: ranks are clusters, not positions."""
    root = roots("subset")
    got = json.loads(_run(root, "--recipe", "WMT24", "-l", ",".join(LPS), "-k", "200", "--no-primary", "-f", "json"))
    for task in got["tasks"]:
        n = len(task["metrics"])
        assert task["ranks"][0] == 1 and task["ranks"] == sorted(task["ranks"]) and max(task["ranks"]) <= n
        assert any(p > 0 for row in task["matrix"] for p in row)


def test_data_controls_equal_mtmes(tmp_path):
    """Part 6 through tasks: a domain (system level from domain-level files, segment level masked), close references,
    a gold score per task, outliers out and in (meta-info.json), KendallVariants, pooled accuracy with one gold and
    reference set per language pair, a reference outside the standard one -- MTME's task names, read back as
    written, give MTME's values, ranks and table."""
    controls = EXPECTED["controls"]
    build(DATA, tmp_path, domains=True)
    info = tmp_path / "info.json"
    info.write_text(json.dumps(controls["meta_info"]))
    lines = tmp_path / "controls.tasks"
    lines.write_text("\n".join(t["name"] for t in controls["tasks"]) + "\n")
    args = ["--tasks", str(lines), "--meta-info", str(info)]  # MTME's names carry their test set
    got = json.loads(_run(tmp_path, *args, "-f", "json", test_set=None))
    for mine, theirs in zip(got["tasks"], controls["tasks"], strict=True):
        assert mine["task"] == theirs["name"]
        assert (mine["metrics"], mine["ranks"]) == (theirs["metrics"], theirs["ranks"]), theirs["name"]
        assert mine["correlations"] == _close(mine, theirs["correlations"], theirs["name"]), theirs["name"]
    spa = SPA_ROUNDING if any("corr_fcn=pce" in t["name"] for t in controls["tasks"]) else 0
    assert got["average_correlations"] == pytest.approx(controls["average_correlations"], abs=spa or 1e-12)
    assert _run(tmp_path, *args, "-f", "tsv", test_set=None) == controls["tsv"]


def test_locale_language_pairs_as_wmt25_names_them(roots, tmp_path):
    """WMT25's language pairs carry locales (en-ar_EG, en-sr_Cyrl_RS): the same data under ``en-de_DE`` gives what
    it gives under ``en-de``."""
    import shutil

    news = tmp_path / "wmt21.news"
    shutil.copytree(roots("subset") / "wmt21.news", news)
    for path in sorted(news.rglob("*en-de*"), key=lambda p: -len(p.parts)):
        path.rename(path.with_name(path.name.replace("en-de", "en-de_DE")))
    info = json.loads((news / "meta-info.json").read_text())
    info["en-de_DE"] = info.pop("en-de")
    (news / "meta-info.json").write_text(json.dumps(info))
    located = json.loads(_run(tmp_path, "--recipe", "WMT25", "-l", "en-de_DE,zh-en", "-f", "json"))
    plain = json.loads(_run(roots("subset"), "--recipe", "WMT25", "-l", "en-de,zh-en", "-f", "json"))
    assert [t["task"].replace("en-de_DE", "en-de") for t in located["tasks"]] == [t["task"] for t in plain["tasks"]]
    assert [(t["metrics"], t["correlations"], t["ranks"]) for t in located["tasks"]] == \
        [(t["metrics"], t["correlations"], t["ranks"]) for t in plain["tasks"]]
