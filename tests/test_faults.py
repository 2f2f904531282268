"""Faults injected through the real CLI: a pool worker that dies mid-chunk."""
from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import child_env, script

PLUGINS = Path(__file__).parent / "plugins"


def test_a_pool_worker_that_dies_mid_chunk_fails_the_run_naming_the_chunk(tmp_path):
    hyps = [f"w{i} x y" for i in range(400)]
    hyps[250] = "DIE"
    (tmp_path / "sys.txt").write_text("\n".join(hyps) + "\n")
    (tmp_path / "ref.txt").write_text("\n".join("a b c" for _ in hyps) + "\n")
    env = child_env()
    env["PYTHONPATH"] = str(PLUGINS)
    for command in ("--engine", "pool", "--workers", "2"), ("--engine", "pool", "--workers", "2", "--confidence"):
        done = subprocess.run([script("score-corpus"), "-q", "-r", str(tmp_path / "ref.txt"), "-m", "dying_plugin:Dying",
                               *command, str(tmp_path / "sys.txt")], capture_output=True, text=True, env=env,
                              timeout=120)  # a hang fails here
        assert done.returncode != 0 and done.stdout == ""
        assert "a worker process died while scoring chunk(s)" in done.stderr
        assert "6 (segments 251-300) of 8" in done.stderr  # 8 chunks of 50; segment 251 is the fatal one
    ok = subprocess.run([script("score-corpus"), "-q", "-r", str(tmp_path / "ref.txt"), "-m", "dying_plugin:Dying",
                         "--engine", "pool", "--workers", "2", str(tmp_path / "ref.txt")],
                        capture_output=True, text=True, env=env, timeout=120)
    assert ok.returncode == 0 and ok.stdout.strip()
