"""Faults injected through the real CLI: a pool worker that dies mid-chunk."""
from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import child_env, script

PLUGINS = Path(__file__).parent / "plugins"


def corpus_with(tmp_path, hyps, reference):
    """sys.txt (``hyps``) and ref.txt (``reference`` on every line) in ``tmp_path``, and the environment
    that puts tests/plugins on the path."""
    (tmp_path / "sys.txt").write_text("\n".join(hyps) + "\n")
    (tmp_path / "ref.txt").write_text("\n".join(reference for _ in hyps) + "\n")
    env = child_env()
    env["PYTHONPATH"] = str(PLUGINS)
    return env


def test_a_pool_worker_that_dies_mid_chunk_fails_the_run_naming_the_chunk(tmp_path):
    hyps = [f"w{i} x y" for i in range(400)]
    hyps[250] = "DIE"
    env = corpus_with(tmp_path, hyps, "a b c")
    for command in ("--engine", "pool", "--workers", "2"), ("--engine", "pool", "--workers", "2", "--confidence"):
        done = subprocess.run([script("score-corpus"), "-q", "-r", str(tmp_path / "ref.txt"), "-m", "dying_plugin:Dying",
                               *command, str(tmp_path / "sys.txt")], capture_output=True, text=True, env=env,
                              timeout=120)  # a hang fails here
        assert done.returncode != 0 and done.stdout == ""
        assert "a worker process died while scoring chunk(s)" in done.stderr
        # 8 chunks of 50; segment 251 is the fatal one (a chunk the other worker had in flight may be named too)
        assert "6 (segments 251-300)" in done.stderr and " of 8; no score was computed" in done.stderr
    ok = subprocess.run([script("score-corpus"), "-q", "-r", str(tmp_path / "ref.txt"), "-m", "dying_plugin:Dying",
                         "--engine", "pool", "--workers", "2", str(tmp_path / "ref.txt")],
                        capture_output=True, text=True, env=env, timeout=120)
    assert ok.returncode == 0 and ok.stdout.strip()


def test_a_crash_while_writing_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    import os

    from evalpipe.corpus import write_atomically

    target = tmp_path / "scores.json"
    write_atomically(str(target), '{"old": 1}\n')

    def crash(*args):
        raise KeyboardInterrupt("killed while writing")

    monkeypatch.setattr(os, "fsync", crash)
    try:
        write_atomically(str(target), '{"new": 2, "long": "' + "x" * 100000 + '"}\n')
    except KeyboardInterrupt:
        pass
    assert target.read_text() == '{"old": 1}\n' and [p.name for p in tmp_path.iterdir()] == ["scores.json"]


def test_every_file_the_package_writes_goes_through_write_atomically():
    """No module of the package opens a file for writing, or writes one, other than by write_atomically
    (whose own temporary file, and a device or pipe it writes in place, are the exceptions)."""
    import re

    root = Path(__file__).resolve().parents[1]
    writers = re.compile(r"open\([^)]*['\"][wa]b?['\"]|\.write_text\(|\.write_bytes\(|json\.dump\(")
    found = []
    for folder in ("src", "evaluators", "protocol", "sufficient_stats"):
        for path in (root / folder).rglob("*.py"):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if writers.search(line) and not (path.name == "corpus.py" and "os.fdopen(handle" in line):
                    found.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    assert found == []


def test_fuzz_findings_stay_fixed(tmp_path):
    """Found by bench/fuzz.py: an undecodable byte in an instances log escaped as UnicodeDecodeError, and
    TER on a million-token line kept `serve` busy for minutes (the C kernel now scores it in a fraction of a
    second, as sacrebleu scores any length: no default cap; a server may set -o max_tokens=N)."""
    import pytest

    from evalpipe import load_metric
    from evalpipe.errors import InputError
    from evalpipe.simul.records import read_instances

    log = tmp_path / "instances.log"
    log.write_bytes(b'{"delays": [1], "source_length": 2, "reference": "a"}\n\xff{}\n')
    with pytest.raises(InputError, match=r"line 2: expected UTF-8 text, got undecodable byte\(s\) b'\\xff'"):
        read_instances(str(log))
    from evalpipe.evaluators.kernels import tercom

    if tercom.NATIVE:
        assert load_metric("ter").stats(" ".join(["w"] * 1000000), ["a b c"]) == [1000000, 3.0]
    with pytest.raises(InputError, match=r"at most 20 tokens in a hypothesis, got 21 \(the metric option max_tokens"):
        load_metric("ter", max_tokens=20).stats(" ".join(["w"] * 21), ["a b c"])
    assert load_metric("ter", max_tokens=20).stats(" ".join(["w"] * 12), ["a b c"]) == [12, 3.0]


def test_a_spark_task_that_fails_once_is_retried_by_spark_with_identical_numbers(tmp_path):
    """Spark's own retry: in local[2,2] a task may fail once; the injected fault fails the first attempt of
    the task holding ``FLAKY`` and the run still gives the local engine's exact numbers."""
    import json

    import pytest

    pytest.importorskip("pyspark")
    hyps = [f"w{i} x y" for i in range(300)]
    hyps[123] = "FLAKY"
    env = corpus_with(tmp_path, hyps, "a b c d")
    env["EVALPIPE_FLAKY_MARKER"] = str(tmp_path / "failed-once")
    base = [script("score-corpus"), "-q", "-f", "json", "-r", str(tmp_path / "ref.txt"), "-m", "flaky_plugin:Flaky",
            "--sentence-level"]
    runs = {}
    for name, engine in (("spark", ["--engine", "spark", "--spark-master", "local[2,2]"]), ("local", [])):
        done = subprocess.run(base + engine + [str(tmp_path / "sys.txt")], capture_output=True, text=True, env=env,
                              timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        runs[name] = [json.loads(line) for line in done.stdout.splitlines()]
    assert (tmp_path / "failed-once").exists()  # the fault did fire (in Spark's first attempt)
    assert runs["spark"] == runs["local"] and len(runs["local"]) == 300
