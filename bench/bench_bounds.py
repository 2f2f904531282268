"""Issue 16 resource bounds: ``python bench/bench_bounds.py [SCALE]``.

* ``evalpipe serve bleu`` under N SCORE requests (1,000,000 at scale 1), every one with a reference
  never seen before (the worst case for the reference cache): the server's resident memory (VmRSS)
  sampled along the way must level off -- the cache holds at most ``cache_size`` reference sets and
  only those asked for twice.
* ``evalpipe simul serve`` under 32 concurrent wait-3 agents, the corpus run several times over with a
  reset (``POST /``) between passes -- an hour of evaluation traffic at scale 1 in requests, not in
  wall time: VmRSS after each pass must not grow from pass to pass.
Prints the samples; exits non-zero when memory keeps growing.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from common import child_env


def rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return int(next(line for line in status if line.startswith("VmRSS:")).split()[1])


def evalpipe():
    script = Path(sys.executable).parent / "evalpipe"
    return [str(script)] if script.exists() else [sys.executable, "-m", "evalpipe"]


def serve_unique_references(n: int) -> bool:
    proc = subprocess.Popen(evalpipe() + ["serve", "bleu"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=child_env())
    samples = []
    marks = {int(n * f) for f in (0.1, 0.25, 0.5, 0.75, 1.0)}
    batch = 5000

    def write():
        for start in range(0, n, batch):
            proc.stdin.write("".join(f"SCORE ||| ref {i} number {i * 7} of the run ||| hyp {i} of the run\n"
                                     for i in range(start, min(n, start + batch))).encode())
        proc.stdin.close()

    threading.Thread(target=write, daemon=True).start()
    start = time.perf_counter()
    for done in range(1, n + 1):
        if not proc.stdout.readline():
            raise RuntimeError(f"the server stopped after {done - 1} replies")
        if done in marks:
            samples.append((done, rss_kib(proc.pid)))
    elapsed = time.perf_counter() - start
    proc.wait()
    shown = ", ".join(f"{d // 1000}k: {kib / 1024:.0f} MiB" for d, kib in samples)
    growth = samples[-1][1] - samples[1][1]
    print(f"{f'serve bleu, {n} unique references':<58} VmRSS {shown}  "
          f"({n / elapsed:.0f} req/s; growth after 25%: {growth / 1024:+.1f} MiB)")
    return growth < 32 * 1024


def simul_passes(passes: int, sentences: int = 640, agents: int = 32) -> bool:
    from evalpipe.simul.agent import WaitKAgent
    from evalpipe.simul.driver import HTTPClient, evaluate

    with tempfile.TemporaryDirectory() as tmp:
        text = "\n".join(" ".join(f"s{i}w{j}" for j in range(8 + i % 25)) for i in range(sentences)) + "\n"
        Path(tmp, "src.txt").write_text(text)
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        proc = subprocess.Popen(evalpipe() + ["simul", "serve", "--source", str(Path(tmp, "src.txt")),
                                              "--ref", str(Path(tmp, "src.txt")), "--port", str(port),
                                              "--output", str(Path(tmp, "out"))],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=child_env())
        url = f"http://127.0.0.1:{port}"
        for _ in range(200):
            try:
                HTTPClient(url).call("GET", "/")
                break
            except Exception:  # noqa: BLE001 -- not up yet
                time.sleep(0.05)
        samples = []
        start = time.perf_counter()
        for _ in range(passes):
            evaluate(lambda: WaitKAgent(k=3), url, num_threads=agents, reset=True)
            samples.append(rss_kib(proc.pid))
        elapsed = time.perf_counter() - start
        proc.terminate()
        proc.wait()
    requests = passes * sum(2 * (8 + i % 25) + 2 for i in range(sentences))  # ~ GETs + PUTs per pass
    shown = ", ".join(f"{kib / 1024:.0f}" for kib in samples)
    growth = samples[-1] - samples[len(samples) // 2]
    print(f"{f'simul serve, {agents} agents, {passes} passes of {sentences} sentences':<58} VmRSS per pass (MiB) "
          f"{shown}  (~{requests} requests in {elapsed:.0f} s; growth over the second half: {growth / 1024:+.1f} MiB)")
    return growth < 16 * 1024


def main(scale: float = 1.0) -> int:
    ok = serve_unique_references(max(20000, int(1_000_000 * scale)))
    ok = simul_passes(max(2, int(20 * scale))) and ok
    print("bounded" if ok else "MEMORY KEEPS GROWING")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0))
