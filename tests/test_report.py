"""All-pairs significance and the HTML report: the numbers behind every figure, and a page that is
valid, self-contained HTML.  Holm's adjustment is checked against statsmodels, the pairwise p-values
against the baseline paired bootstrap (itself checked against sacrebleu in test_score_corpus)."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import NEWS, child_env, script
from evalpipe.cli import main
from evalpipe.inputs import TextPairs
from evalpipe.registry import metric_specs
from evalpipe.scoring import System, score_systems
from evalpipe.sufficient_stats import resample

pytest.importorskip("matplotlib")
REF = str(NEWS / "references" / "en-de.refA.txt")
SYSTEMS = sorted(str(p) for p in (NEWS / "system-outputs" / "en-de").glob("*.txt") if not p.stem.startswith("ref"))


@pytest.fixture(scope="module")
def scored(news):
    refs = news["en-de.refs"][:1]
    systems = [System(Path(p).stem, [TextPairs(Path(p).read_text(encoding="utf-8").splitlines(), refs)])
               for p in SYSTEMS[:5]]
    specs = metric_specs(["bleu", "ter"])
    return systems, score_systems(systems, specs, confidence=1000, paired="bs", pairwise=True)


def test_pairwise_p_values_equal_the_baseline_paired_bootstrap(scored):
    systems, (results, test) = scored
    for metric in ("bleu", "ter"):
        pairs = test["pairwise"][metric]
        index = {s: i for i, s in enumerate(pairs["systems"])}
        base = index[systems[0].name]
        for r in results:
            if r.metric == metric and not r.baseline:
                assert pairs["p_values"][base][index[r.system]] == r.p_value


def test_systems_best_first_in_each_metrics_direction(scored):
    _, (results, test) = scored
    for metric, sign in (("bleu", -1), ("ter", 1)):
        pairs = test["pairwise"][metric]
        by_system = {r.system: r.score for r in results if r.metric == metric}
        assert pairs["scores"] == [by_system[s] for s in pairs["systems"]]
        assert pairs["scores"] == sorted(pairs["scores"], key=lambda v: sign * v)


def test_holm_equals_statsmodels(scored):
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    _, (_, test) = scored
    raw = np.array(test["pairwise"]["bleu"]["p_values"])
    upper = np.triu_indices(len(raw), 1)
    expected = multitest.multipletests(raw[upper], method="holm")[1]
    assert np.allclose(np.array(test["pairwise"]["bleu"]["adjusted"])[upper], expected, rtol=0, atol=1e-15)
    random = np.random.default_rng(3).uniform(0, 0.2, size=(9, 9))
    random = np.triu(random, 1) + np.triu(random, 1).T + np.eye(9)
    upper = np.triu_indices(9, 1)
    assert np.allclose(resample.holm(random)[upper], multitest.multipletests(random[upper], method="holm")[1],
                       rtol=0, atol=1e-15)


def test_clusters_follow_the_documented_rule(scored):
    _, (_, test) = scored
    for pairs in test["pairwise"].values():
        adjusted, clusters, alpha = np.array(pairs["adjusted"]), pairs["clusters"], pairs["alpha"]
        start = 0
        for i in range(len(clusters)):
            new = bool((adjusted[start:i, i] <= alpha).any())
            assert clusters[i] == (clusters[i - 1] + 1 if new else clusters[i - 1] if i else 1)
            start = i if new else start


class _Page(HTMLParser):
    """Collects tags and attributes; fails on unbalanced structure elements."""

    def __init__(self) -> None:
        super().__init__()
        self.tags, self.attributes, self.text = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attributes += [(tag, k, v or "") for k, v in attrs]

    def handle_data(self, data):
        self.text.append(data)


def _report(tmp_path, *extra):
    out = tmp_path / "report.html"
    result = CliRunner().invoke(main, ["score-corpus", "-r", REF, "-m", "bleu", "-m", "chrf", "--report", str(out),
                                       "-f", "json", "-q", *extra, *SYSTEMS])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), out.read_text(encoding="utf-8")


def assert_self_contained(html):
    """Valid enough to parse, and nothing it would fetch: no script, link, image, frame or object, no
    attribute or CSS url() pointing outside the page."""
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    page = _Page()
    page.feed(html)
    page.close()
    assert {"script", "link", "img", "iframe", "object", "embed"}.isdisjoint(page.tags)
    external = [(t, k, v) for t, k, v in page.attributes
                if k in ("src", "href", "xlink:href") and not v.startswith("#")]
    assert not external, external
    assert not re.search(r"url\((?!#)", html) and "@import" not in html  # only references inside the page
    return page


def test_report_is_self_contained_html_with_the_json_numbers(tmp_path):
    doc, html = _report(tmp_path)
    page = assert_self_contained(html)
    assert page.tags.count("svg") == 1 and html.count('<table class="matrix">') == len(doc["pairwise"])
    text = " ".join(page.text)
    for metric, pairs in doc["pairwise"].items():
        assert pairs["correction"] == "holm" and "Holm" in text
        assert pairs["systems"] == [r["system"] for r in sorted(
            (r for r in doc["results"] if r["metric"] == metric), key=lambda r: -r["score"])]
        for system, score in zip(pairs["systems"], pairs["scores"]):
            row = next(r for r in doc["results"] if r["metric"] == metric and r["system"] == system)
            assert f"{score:.2f}" in text and f"[{row['ci'][0]:.2f}, {row['ci'][1]:.2f}]" in text
        assert next(r["signature"] for r in doc["results"] if r["metric"] == metric) in text
        matrix = html.split("<h2>")[1 + list(doc["pairwise"]).index(metric)]
        adjusted = np.array(pairs["adjusted"])
        significant = int(np.sum(np.triu(adjusted <= pairs["alpha"], 1)))
        assert matrix.count('class="better') == matrix.count('class="worse') == significant
        cells = re.findall(r'<td class="(?:same|better|worse)[^"]*" title="[^"]*">([^<]*)</td>', matrix)
        assert cells == [f"{p:.2f}".lstrip("0") if p < 1 else "1" for i, row in enumerate(adjusted)
                         for j, p in enumerate(row) if i != j]


def test_report_command_on_saved_json_gives_the_same_page(tmp_path):
    doc, html = _report(tmp_path)
    saved = tmp_path / "scores.json"
    saved.write_text(json.dumps(doc), encoding="utf-8")
    out = tmp_path / "again.html"
    completed = subprocess.run([script("evalpipe"), "report", str(saved), "-o", str(out)], capture_output=True,
                               text=True, env=child_env(), timeout=300)
    assert completed.returncode == 0, completed.stderr
    assert out.read_text(encoding="utf-8") == html


@pytest.mark.parametrize("suffix, magic", [("svg", b"<?xml"), ("png", b"\x89PNG"), ("pdf", b"%PDF")])
def test_plot_formats(tmp_path, suffix, magic):
    plot = tmp_path / f"scores.{suffix}"
    result = CliRunner().invoke(main, ["score-corpus", "-r", REF, "--plot", str(plot), "-q", *SYSTEMS[:3]])
    assert result.exit_code == 0, result.output
    assert plot.read_bytes().startswith(magic)


def test_table_shows_clusters():
    result = CliRunner().invoke(main, ["score-corpus", "-r", REF, "--all-pairs", "-q", *SYSTEMS[:4]])
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if x.startswith("BLEU clusters"))
    assert "Holm" in line and all(Path(p).stem in line for p in SYSTEMS[:4])


def test_errors_name_what_is_wrong(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"results": [{"system": "a"}]}', encoding="utf-8")
    result = CliRunner().invoke(main, ["report", str(bad), "-o", str(tmp_path / "x.html")])
    assert result.exit_code == 1 and "missing metric, score, signature, ci" in result.output
    bad.write_text("not json", encoding="utf-8")
    result = CliRunner().invoke(main, ["report", str(bad), "-o", str(tmp_path / "x.html")])
    assert result.exit_code == 1 and "expected JSON written by evalpipe" in result.output
    bad.write_text('{"x": 1}', encoding="utf-8")
    result = CliRunner().invoke(main, ["report", str(bad), "-o", str(tmp_path / "x.html")])
    assert result.exit_code == 1 and "expected the JSON of score-corpus, meta-eval matrix or tasks, simul, compare or mbr" in result.output
    result = CliRunner().invoke(main, ["score-corpus", "-r", REF, "--plot", str(tmp_path / "x.gif"), "-q", SYSTEMS[0]])
    assert result.exit_code == 2 and ".svg, .png, .pdf" in result.output
    result = CliRunner().invoke(main, ["score-corpus", "-r", REF, "--report", str(tmp_path / "x.html"), "-q", SYSTEMS[0]])
    assert result.exit_code == 2 and "at least two systems" in result.output


def test_missing_extra_names_it(tmp_path):
    """A plot is nothing but a figure: without matplotlib it is refused, naming the extra, and nothing is
    written (a report is written with its tables: tests/test_input_used.py)."""
    code = ("import sys; sys.modules['matplotlib'] = None; from evalpipe.cli import main; "
            f"main(['score-corpus', '-r', {REF!r}, '--plot', {str(tmp_path / 'r.svg')!r}, {SYSTEMS[0]!r}])")
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=child_env(),
                               timeout=120)
    assert completed.returncode == 1  # a missing package: the environment, exit 1
    assert "pip install 'evalpipe[report]'" in completed.stderr
    assert not (tmp_path / "r.svg").exists()


def test_report_is_deterministic(tmp_path):
    _, first = _report(tmp_path)
    _, second = _report(tmp_path)
    assert first == second
    assert not re.search(r"\d{4}-\d\d-\d\dT", first)  # no timestamp in the figures


def _meta_doc(tmp_path):
    out = tmp_path / "meta.html"
    result = CliRunner().invoke(main, ["meta-eval", "matrix", "--root", str(NEWS.parent), "--test-set", "wmt21.news",
                                       "-l", "en-de", "-k", "50", "--seed", "1", "-f", "json", "--report", str(out)])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), out.read_text(encoding="utf-8")


def test_meta_report_figures_show_the_json(tmp_path):
    from evalpipe.meta.correlation import average_correlation
    from evalpipe.meta.evalset import EvalSet
    from evalpipe.report import figures

    doc, html = _meta_doc(tmp_path)
    assert_self_contained(html)
    evs = EvalSet(str(NEWS.parent), "wmt21.news", "en-de")
    gold = evs.Scores("sys", "mqm")
    assert doc["human_scores"] == [gold[s][0] for s in doc["systems"]]
    for name, corr in zip(doc["metrics"], doc["correlations"]):
        assert doc["metric_scores"][name] == [evs.Scores("sys", name)[s][0] for s in doc["systems"]]
        assert corr == average_correlation(doc["human_scores"], doc["metric_scores"][name], len(doc["systems"]))[0]
    bars = figures.correlation_figure(doc).axes[0].patches
    assert [b.get_width() for b in bars] == doc["correlations"]
    panels = figures.scatter_figure(doc).axes
    for ax, name in zip(panels, doc["metrics"]):
        points = ax.collections[0].get_offsets().tolist()
        assert points == [[m, h] for m, h in zip(doc["metric_scores"][name], doc["human_scores"]) if h is not None]
    assert html.count("<svg") == 2 and html.count('<table class="matrix">') == 1
    cells = re.findall(r'title="[^"]*: p = [^"]*">([^<]*)</td>', html)
    n = len(doc["metrics"])
    assert cells == [f"{doc['matrix'][i][j]:.2f}" for i in range(n) for j in range(i + 1, n)]


def test_simul_report_of_several_runs(tmp_path):
    from evalpipe.report import figures

    runs = {}
    for k in (1, 3):
        out = tmp_path / f"wait{k}.json"
        result = CliRunner().invoke(main, ["simul", "run", "--demo", "--agent-option", f"k={k}", "-f", "json",
                                           "--output", str(tmp_path / f"out{k}")])
        assert result.exit_code == 0, result.output
        out.write_text(result.output, encoding="utf-8")
        runs[f"wait{k}"] = json.loads(result.stdout)
    html_file = tmp_path / "simul.html"
    completed = subprocess.run([script("evalpipe"), "report", str(tmp_path / "wait1.json"), str(tmp_path / "wait3.json"),
                                "--instances", str(tmp_path / "out3" / "instances.log"), "--sentence", "2",
                                "-o", str(html_file)], capture_output=True, text=True, env=child_env(), timeout=300)
    assert completed.returncode == 0, completed.stderr
    html = html_file.read_text(encoding="utf-8")
    assert_self_contained(html)
    assert html.count("<svg") == 2 and "Sentence 2" in html
    for label, run in runs.items():
        assert f"<td>{run['AL']:.2f}</td>" in html and f"<td>{run['BLEU']:.2f}</td>" in html
    lines = figures.quality_latency_figure(runs).axes[0].lines[0]
    assert lines.get_xdata().tolist() == [runs["wait1"]["AL"], runs["wait3"]["AL"]]
    assert lines.get_ydata().tolist() == [runs["wait1"]["BLEU"], runs["wait3"]["BLEU"]]
    record = json.loads((tmp_path / "out3" / "instances.log").read_text(encoding="utf-8").splitlines()[2])
    step = figures.staircase_figure(record).axes[0].lines[0]
    assert step.get_xdata().tolist()[1:] == record["delays"]
    completed = subprocess.run([script("evalpipe"), "report", str(tmp_path / "wait1.json"), "--instances",
                                str(tmp_path / "out3" / "instances.log"), "--sentence", "999", "-o", str(html_file)],
                               capture_output=True, text=True, env=child_env(), timeout=300)
    assert completed.returncode == 2 and "--sentence: expected 0 to 199, got 999" in completed.stderr


def test_demo_report_runs_on_the_shipped_data(tmp_path):
    out = tmp_path / "demo.html"
    completed = subprocess.run([script("evalpipe"), "report", "--demo", "-o", str(out)], capture_output=True, text=True,
                               env=child_env(), timeout=300)
    assert completed.returncode == 0, completed.stderr
    html = out.read_text(encoding="utf-8")
    assert "10 systems, 300 segments" in html and html.count('<table class="matrix">') == 2
    completed = subprocess.run([script("evalpipe"), "report", "-o", str(out)], capture_output=True, text=True,
                               env=child_env(), timeout=300)
    assert completed.returncode == 2 and "or --demo" in completed.stderr


def test_task_set_report_shows_the_json(tmp_path):
    """``meta-eval tasks --report``: the task-set table's cells are the JSON's ranks and values, each task's ranking
    is there in clusters, and with k > 0 its p-value matrix."""
    import shutil

    root = tmp_path / "root"
    shutil.copytree(NEWS, root / "wmt21.news")
    out = tmp_path / "tasks.html"
    tasks = ["--task", "lang=en-de level=sys refs={'refA'} gold=mqm human=False k=50",
             "--task", "lang=en-de level=sys refs={'refA'} gold=mqm human=False corr_fcn=kendall k=0"]
    result = CliRunner().invoke(main, ["meta-eval", "tasks", "--root", str(root), "--test-set", "wmt21.news", *tasks,
                                       "-f", "json", "--report", str(out)])
    assert result.exit_code == 0, result.output
    doc, html = json.loads(result.stdout), out.read_text(encoding="utf-8")
    assert_self_contained(html)
    cells = re.findall(r'<td class="task[^"]*">(\d+) &middot; ([-\d.]+)</td>', html)
    want = []
    for metric in doc["average_correlations"]:
        for task in doc["tasks"]:
            i = task["metrics"].index(metric)
            want.append((str(task["ranks"][i]), f"{task['correlations'][i]:.3f}"))
    assert cells == want
    assert html.count('<table class="matrix">') == 1  # the k = 50 task; k = 0 has no test
    for task in doc["tasks"]:
        assert task["task"].replace("'", "&#x27;") in html
