"""The documentation's example metric plugin and example engine (docs/metrics.md, docs/engines.md), taken from
the pages themselves: each is one
file plus one entry-point line (declared here in a ``dist-info`` folder on ``PYTHONPATH``, as an
installed package would declare it), and works through the real CLI and the line protocol."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from conftest import ROOT, child_env, script

DEMO = ROOT / "src" / "evalpipe" / "demo"


def readme_file(name: str) -> str:
    """The python block of README.md or docs/*.md that starts with ``# NAME``."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    blocks = [b for page in pages for b in re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S)]
    found = [b for b in blocks if b.startswith(f"# {name}\n")]
    if len(found) != 1:
        raise LookupError(f"expected one block in README.md and docs/ starting with '# {name}', found {len(found)}")
    return found[0]


@pytest.fixture(scope="module")
def plugins(tmp_path_factory):
    """A folder holding the two example files and a distribution that declares their entry points."""
    folder = tmp_path_factory.mktemp("plugins")
    for name in ("my_metrics.py", "thread_engine.py"):
        (folder / name).write_text(readme_file(name), encoding="utf-8")
    info = folder / "readme_examples-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: readme-examples\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[evalpipe.metrics]\nlength_ratio = my_metrics:LengthRatio\n\n"
                                           "[evalpipe.engines]\nthreads = thread_engine:ThreadEngine\n")
    return folder


def run(plugins, *args, stdin=None):
    env = child_env()
    env["PYTHONPATH"] = str(plugins)
    return subprocess.run([script("evalpipe"), *args], input=stdin, capture_output=True, text=True, timeout=120,
                          env=env)


def corpus(n=60):
    hyps = (DEMO / "newstest.hyp.de").read_text(encoding="utf-8").splitlines()[:n]
    refs = (DEMO / "newstest.ref.de").read_text(encoding="utf-8").splitlines()[:n]
    return hyps, refs


def test_example_metric_through_its_entry_point(plugins, tmp_path):
    hyps, refs = corpus()
    (tmp_path / "hyp").write_text("\n".join(hyps) + "\n", encoding="utf-8")
    (tmp_path / "ref").write_text("\n".join(refs) + "\n", encoding="utf-8")
    listing = run(plugins, "list")
    assert "length_ratio" in listing.stdout, listing.stderr
    out = run(plugins, "score-corpus", "-q", "-f", "json", "-r", str(tmp_path / "ref"), "-m", "length_ratio",
              "-o", "unit=chars", str(tmp_path / "hyp"))
    assert out.returncode == 0, out.stderr
    expected = 100.0 * sum(map(len, hyps)) / sum(map(len, refs))
    assert json.loads(out.stdout)["results"][0]["score"] == pytest.approx(expected)
    served = run(plugins, "serve", "length_ratio", stdin="SCORE ||| a b c ||| x y\nEVAL ||| 2 3\nEVAL ||| 2 0\n")
    lines = served.stdout.splitlines()
    assert lines[:2] == ["2 3", repr(100.0 * 2 / 3)]
    assert lines[2].startswith("ERROR ||| ") and "references are empty" in lines[2]
    bad = run(plugins, "score-corpus", "-r", str(tmp_path / "ref"), "-m", "length_ratio", "-o", "unit=bytes",
              str(tmp_path / "hyp"))
    assert bad.returncode == 2 and "unit" in bad.stderr and "chars" in bad.stderr


def test_example_engine_gives_the_local_numbers(plugins, tmp_path):
    hyps, refs = corpus(200)
    (tmp_path / "hyp").write_text("\n".join(hyps) + "\n", encoding="utf-8")
    (tmp_path / "ref").write_text("\n".join(refs) + "\n", encoding="utf-8")
    common = ["score-corpus", "-q", "-f", "json", "-m", "bleu", "-m", "chrf", "--confidence", "-r",
              str(tmp_path / "ref"), str(tmp_path / "hyp")]
    local = run(plugins, *common)
    for engine in ("threads", "thread_engine:ThreadEngine"):
        out = run(plugins, *common, "--engine", engine, "--workers", "2")
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout) == json.loads(local.stdout)
    missing = run(plugins, *common, "--engine", "nowhere")
    assert missing.returncode == 2 and "threads" in missing.stderr


def test_example_engine_in_python(plugins, monkeypatch):
    monkeypatch.syspath_prepend(str(plugins))
    from evalpipe.engines import Job, make_engine
    from evalpipe.inputs import TextPairs
    from evalpipe.registry import MetricSpec

    hyps, refs = corpus(200)
    spec = MetricSpec.of("bleu", {"tokenize": "intl"})
    job = Job(spec, TextPairs(hyps, [refs]))
    with make_engine("thread_engine:ThreadEngine", workers=2) as threads, make_engine("local") as local:
        assert threads.total(job) == local.total(job)
        assert threads.rows(job) == local.rows(job)
    sys.modules.pop("thread_engine", None)
