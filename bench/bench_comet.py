"""Issue 35 benchmark: COMET models through the command lines, start-up included, against unbabel-comet and mbrs.

The model is evalpipe's tiny regression model (``python -m evalpipe.tiny_comet``: 2-layer XLM-R, hidden
size 32; tests/test_comet.py shows unbabel-comet loads it and gives the same scores); unbabel-comet 2.2.7 and mbrs
0.1.8 run in their own environment (built as tests/test_comet.py builds it, kept in .pytest_cache/anchors).  On real
WMT21 en-de text (../shared/data; the shipped demo without it):

* ``comet-score -s SRC -t A B -r REF --model CKPT --gpus 0`` (2 systems x 1,002 segments = 2,004 rows at scale 1)
  against ``evalpipe score-corpus -m comet -o comet.model=DIR --source SRC -r REF A B`` (target >= 3x), with where
  evalpipe's time goes (its ``-v`` line: tokenization, encoder, estimator, the rest; the difference to the wall
  time is start-up: Python, torch, evalpipe);
* mbrs's ``DecoderMBR`` with ``MetricCOMET`` (tests/anchors/mbrs_comet.py, its process) against ``evalpipe mbr -m
  comet`` on 100 segments x 16 candidates (16 systems' outputs; target >= 2x);
* peak resident memory (``/usr/bin/time -f %M``) of ``mbr -m comet`` over 1,000 segments x 64 candidates and of
  ``score-corpus -m comet`` over 100,000 segments (every line made unique with a counter, so no cache helps),
  beside the same at a tenth of the size: memory is bounded by the chunk, not the corpus.

Every run is printed.  ``python bench/bench_comet.py [SCALE] [RUNS]``.
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, child_env

NEWS = ROOT.parent / "shared" / "data" / "wmt21.news"
ENV = ROOT / ".pytest_cache" / "anchors" / "unbabel-comet-2.2.7"
BIN = Path(sys.executable).parent


def _env() -> Path:
    python = ENV / "bin" / "python"
    if not (ENV / "complete").exists():
        for step in ([sys.executable, "-m", "venv", "--clear", str(ENV)],
                     [str(python), "-m", "pip", "install", "-q", "torch==2.13.0", "unbabel-comet==2.2.7", "numpy<2",
                      "setuptools<81", "sentencepiece==0.2.0"],
                     [str(python), "-m", "pip", "install", "-q", "--no-deps", "--target", str(ENV / "mbrs"),
                      "mbrs==0.1.8"]):
            subprocess.run(step, check=True, capture_output=True, timeout=1800)
        (ENV / "complete").write_text("ok\n")
    return python


def _lines(path: Path) -> list:
    return [line.rstrip("\n") for line in open(path, encoding="utf-8")]


def _run(args, env=None, memory=False):
    env = dict(child_env(), **(env or {}))
    if memory:
        args = ["/usr/bin/time", "-f", "%M", *args]
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, env=env)
    took = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{args[0]} failed: {done.stderr[-800:]}")
    rss = int(done.stderr.strip().splitlines()[-1]) / 1024 if memory else None
    return took, done, rss


def main(scale: float = 1.0, runs: int = 3) -> None:
    try:
        python = _env()
    except (subprocess.CalledProcessError, OSError) as exc:
        print(f"bench_comet: cannot build unbabel-comet's environment ({exc}); skipped")
        return
    if NEWS.is_dir():
        src, ref = _lines(NEWS / "sources" / "en-de.txt"), _lines(NEWS / "references" / "en-de.refA.txt")
        systems = [_lines(p) for p in sorted((NEWS / "system-outputs" / "en-de").glob("*.txt"))]
    else:
        demo = ROOT / "src" / "evalpipe" / "demo" / "wmt21-ende"
        src, ref = _lines(demo / "src.en"), _lines(demo / "ref.de")
        systems = [_lines(p) for p in sorted((demo / "systems").glob("*.de"))]
    n = max(50, min(len(src), int(len(src) * scale)))
    anchor_env = {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        model = folder / "tiny"
        subprocess.run([sys.executable, "-m", "evalpipe.tiny_comet", str(model)], check=True,
                       capture_output=True, env=child_env())
        for name, text in (("src.txt", src[:n]), ("ref.txt", ref[:n]), ("a.txt", systems[0][:n]),
                           ("b.txt", systems[1][:n])):
            (folder / name).write_text("\n".join(text) + "\n", encoding="utf-8")
        theirs = [str(ENV / "bin" / "comet-score"), "-s", str(folder / "src.txt"), "-t", str(folder / "a.txt"),
                  str(folder / "b.txt"), "-r", str(folder / "ref.txt"), "--model",
                  str(model / "checkpoints" / "model.ckpt"), "--gpus", "0", "--quiet", "--only_system"]
        ours = [str(BIN / "evalpipe"), "score-corpus", "-m", "comet", "-o", f"comet.model={model}", "--source",
                str(folder / "src.txt"), "-r", str(folder / "ref.txt"), str(folder / "a.txt"), str(folder / "b.txt"),
                "-q", "-v", "-b", "-w", "4"]
        _run(ours)  # byte-compiles evalpipe's modules once (pip did the anchors')
        print(f"score-corpus -m comet, 2 systems x {n:,} segments = {2 * n:,} rows (seconds, start-up included)")
        for run in range(1, runs + 1):
            t_theirs, done_theirs, _ = _run(theirs, anchor_env)
            t_ours, done, _ = _run(ours)
            where = next((line.split(": ", 2)[-1] for line in done.stderr.splitlines() if "rows in" in line), "?")
            print(f"run {run}: comet-score {t_theirs:.2f}  evalpipe {t_ours:.2f} ({t_theirs / t_ours:.1f}x; target >= 3x)"
                  f"  evalpipe scores {done.stdout.split()} comet-score (fp16) {done_theirs.stdout.split()[-2:]}"
                  f"  | evalpipe's model work: {where}")
        # MBR: 100 segments x 16 candidates
        g = max(10, int(100 * scale))
        cands = [[systems[k][i] for k in range(16)] for i in range(g)]
        files = []
        for k in range(16):
            path = folder / f"cand{k}.txt"
            path.write_text("\n".join(c[k] for c in cands) + "\n", encoding="utf-8")
            files.append(str(path))
        (folder / "mbr_src.txt").write_text("\n".join(src[:g]) + "\n", encoding="utf-8")
        (folder / "segments.json").write_text(json.dumps([{"source": s, "candidates": c}
                                                          for s, c in zip(src[:g], cands)]))
        mbrs = [str(python), str(ROOT / "tests" / "anchors" / "mbrs_comet.py"), "mbr",
                str(model / "checkpoints" / "model.ckpt"), str(folder / "segments.json")]
        mine = [str(BIN / "evalpipe"), "mbr", "-m", "comet", "-o", f"model={model}", "--source",
                str(folder / "mbr_src.txt"), *files, "--ties", "mbrs", "-f", "json"]
        print(f"mbr -m comet, {g} segments x 16 candidates (seconds, start-up included)")
        for run in range(1, runs + 1):
            t_theirs, done_theirs, _ = _run(mbrs, dict(anchor_env, PYTHONPATH=str(ENV / "mbrs")))
            t_mine, done_mine, _ = _run(mine)
            same = [s["choice"] for s in json.loads(done_mine.stdout)["segments"]] == \
                [s["choice"] for s in json.loads(done_theirs.stdout.strip().splitlines()[-1])["segments"]]
            print(f"run {run}: mbrs {t_theirs:.2f}  evalpipe {t_mine:.2f} ({t_theirs / t_mine:.1f}x; target >= 2x; "
                  f"same choices {same})")
        # memory: bounded by the chunk
        print("peak resident memory (MiB; /usr/bin/time %M), every line unique")
        for size in (100, 1000):
            k = max(10, int(size * scale))
            cands = [[f"{systems[j % len(systems)][i % len(src)]} ({j})" for j in range(64)] for i in range(k)]
            for j in range(64):
                (folder / f"m{j}.txt").write_text("\n".join(c[j] for c in cands) + "\n", encoding="utf-8")
            (folder / "m_src.txt").write_text("\n".join(f"{src[i % len(src)]} ({i})" for i in range(k)) + "\n",
                                              encoding="utf-8")
            took, _, rss = _run([str(BIN / "evalpipe"), "mbr", "-m", "comet", "-o", f"model={model}", "--source",
                                 str(folder / "m_src.txt"), *[str(folder / f"m{j}.txt") for j in range(64)],
                                 "--output", str(folder / "m_out.txt")], memory=True)
            print(f"mbr -m comet, {k:,} segments x 64 candidates: {took:.1f} s, peak {rss:.0f} MiB")
        for size in (10000, 100000):
            k = max(100, int(size * scale))
            for name, text in (("big_src.txt", src), ("big_ref.txt", ref), ("big_sys.txt", systems[0])):
                (folder / name).write_text("\n".join(f"{text[i % len(text)]} ({i})" for i in range(k)) + "\n",
                                           encoding="utf-8")
            took, _, rss = _run([str(BIN / "evalpipe"), "score-corpus", "-m", "comet", "-o", f"comet.model={model}",
                                 "--source", str(folder / "big_src.txt"), "-r", str(folder / "big_ref.txt"),
                                 str(folder / "big_sys.txt"), "-q", "-b"], memory=True)
            print(f"score-corpus -m comet, {k:,} segments: {took:.1f} s, peak {rss:.0f} MiB")


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0, int(sys.argv[2]) if len(sys.argv) > 2 else 3)
