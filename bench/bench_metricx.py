"""MetricX through the command line, start-up included, against google-research/metricx's ``predict.py``.

The model is evalpipe's tiny MetricX-24 (``python -m evalpipe.tiny_metricx``: mT5's layout and vocabulary, 2 encoder
layers, 1 decoder layer, d_model 16; tests/test_metricx.py shows transformers' mT5 gives the same scores).  On real
WMT21 en-de text (../shared/data; the shipped demo without it):

* ``python -m metricx24.predict --tokenizer M --model_name_or_path M --max_input_length 1536 --batch_size B`` (its
  JSON lines in and out; transformers' Trainer) against ``evalpipe score-corpus -m metricx -o metricx.model=M
  --source SRC -r REF A B`` over 2 systems x 1,002 segments (target >= 3x; the scores' means must agree to 1e-5);
* peak resident memory (``/usr/bin/time -f %M``) of ``score-corpus -m metricx`` over 100,000 segments beside the
  same at a tenth of the size: memory is bounded by the chunk, not the corpus.

metricx's code is not part of evalpipe: the bench takes it from ``METRICX_REPO`` (a checkout of
google-research/metricx, or its git directory: ``metricx24/`` is extracted with ``git archive``) and skips without
it.  ``predict.py`` needs transformers 4 (its ``models.py`` imports what transformers 5 removed), datasets and
accelerate: installed once with ``pip --target`` into ``~/.cache/evalpipe-bench-anchors/metricx-predict-deps``
(torch and numpy come from this environment).  Every run is printed.  ``python bench/bench_metricx.py [SCALE] [RUNS]``.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, child_env

NEWS = ROOT.parent / "shared" / "data" / "wmt21.news"
DEPS = Path.home() / ".cache" / "evalpipe-bench-anchors" / "metricx-predict-deps"
BIN = Path(sys.executable).parent
HEAVY = ("torch", "nvidia", "cuda", "triton", "functorch", "torchgen", "sympy", "networkx", "mpmath", "numpy")


def _deps() -> Path:
    if not (DEPS / "complete").exists():
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--target", str(DEPS), "transformers>=4.40,<4.50",
                        "datasets>=2.16", "accelerate>=0.26", "tqdm>=4.66.3"], check=True, capture_output=True,
                       timeout=1800)
        for entry in DEPS.iterdir():  # torch and numpy come from this environment
            if entry.name.split("-")[0].split("_")[0] in HEAVY or entry.name == "numpy.libs":
                subprocess.run(["rm", "-rf", str(entry)], check=True)
        (DEPS / "complete").write_text("ok\n")
    return DEPS


def _metricx_code(into: Path) -> Path:
    repo = Path(os.environ.get("METRICX_REPO", ""))
    if (repo / "metricx24" / "predict.py").is_file():
        return repo
    archive = subprocess.run(["git", f"--git-dir={repo}", "archive", "HEAD", "metricx24"], capture_output=True)
    if archive.returncode:
        raise SystemExit(f"bench_metricx: METRICX_REPO={repo!s} is neither a checkout of google-research/metricx nor "
                         f"its git directory")
    into.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def _lines(path: Path) -> list:
    return [line.rstrip("\n") for line in open(path, encoding="utf-8")]


def _data():
    if NEWS.is_dir():
        src = _lines(NEWS / "sources" / "en-de.txt")
        ref = _lines(NEWS / "references" / "en-de.refA.txt")
        systems = [_lines(p) for p in sorted((NEWS / "system-outputs" / "en-de").glob("*.txt"))[:2]]
    else:
        demo = ROOT / "src" / "evalpipe" / "demo" / "wmt21-ende"
        src, ref = _lines(demo / "src.en"), _lines(demo / "ref.de")
        systems = [_lines(p) for p in sorted((demo / "systems").glob("*.de"))[:2]]
    return src, ref, systems


def _timed(args, env=None, **kw):
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, env=env or child_env(), **kw)
    if done.returncode:
        raise SystemExit(f"{args[0]} failed: {done.stderr[-800:]}")
    return time.perf_counter() - start, done


def _peak(args) -> int:
    done = subprocess.run(["/usr/bin/time", "-f", "%M", *args], capture_output=True, text=True, env=child_env())
    if done.returncode:
        raise SystemExit(f"{args[0]} failed: {done.stderr[-800:]}")
    return int(done.stderr.strip().splitlines()[-1])


def main(scale: float = 1.0, runs: int = 3, batch: int = 1) -> None:
    if not os.environ.get("METRICX_REPO"):
        print("bench_metricx: METRICX_REPO (a checkout of google-research/metricx, or its git directory) is not set; "
              "skipped")
        return
    from evalpipe import tiny_metricx

    src, ref, systems = _data()
    n = max(10, int(len(src) * scale))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        model = tiny_metricx.build(folder / "tiny-metricx-24")
        code = _metricx_code(folder / "code")
        paths = {"src": folder / "src.en", "ref": folder / "ref.de"}
        paths["src"].write_text("\n".join(src[:n]) + "\n", encoding="utf-8")
        paths["ref"].write_text("\n".join(ref[:n]) + "\n", encoding="utf-8")
        hyps = []
        rows = []
        for k, system in enumerate(systems):
            hyp = folder / f"sys{k}.de"
            hyp.write_text("\n".join(system[:n]) + "\n", encoding="utf-8")
            hyps.append(hyp)
            rows += [{"source": s, "hypothesis": h, "reference": r} for s, h, r in zip(src[:n], system[:n], ref[:n])]
        jsonl = folder / "in.jsonl"
        jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        env = dict(child_env(), PYTHONPATH=os.pathsep.join([str(_deps()), str(code)]), CUDA_VISIBLE_DEVICES="",
                   TOKENIZERS_PARALLELISM="false")
        predict = [sys.executable, "-m", "metricx24.predict", "--tokenizer", str(model), "--model_name_or_path",
                   str(model), "--max_input_length", "1536", "--batch_size", str(batch), "--input_file", str(jsonl),
                   "--output_file", str(folder / "out" / "predictions.jsonl")]
        ours = [str(BIN / "evalpipe"), "score-corpus", "-m", "metricx", "-o", f"metricx.model={model}", "--source",
                str(paths["src"]), "-r", str(paths["ref"]), *map(str, hyps), "-f", "json"]
        print(f"{len(rows):,} segments (2 systems x {n:,}), tiny MetricX-24; seconds, start-up included; every run")
        for run in range(1, runs + 1):
            t_anchor, _ = _timed(predict, env=env, cwd=str(folder))
            t_ours, done = _timed(ours)
            theirs = [json.loads(line)["prediction"] for line in open(folder / "out" / "predictions.jsonl")]
            means = [r["score"] for r in json.loads(done.stdout)["results"]]
            expected = [sum(theirs[k * n:(k + 1) * n]) / n for k in range(len(systems))]
            equal = max(abs(a - b) for a, b in zip(means, expected)) <= 1e-5
            print(f"run {run}: metricx predict.py (batch {batch}) {t_anchor:.2f}  evalpipe score-corpus -m metricx "
                  f"{t_ours:.2f} ({t_anchor / t_ours:.1f}x; target >= 3x; means equal to 1e-5: {equal})")
        big = int(100000 * scale)
        for count in (big // 10, big):
            lines = [f"{src[i % n]} ({i})" for i in range(count)]
            for name, values in (("s.en", lines), ("r.de", [f"{ref[i % n]} ({i})" for i in range(count)]),
                                 ("h.de", [f"{systems[0][i % n]} ({i})" for i in range(count)])):
                (folder / name).write_text("\n".join(values) + "\n", encoding="utf-8")
            peak = _peak([str(BIN / "evalpipe"), "score-corpus", "-m", "metricx", "-o", f"metricx.model={model}",
                          "--source", str(folder / "s.en"), "-r", str(folder / "r.de"), str(folder / "h.de"), "-q"])
            print(f"score-corpus -m metricx over {count:,} segments: peak resident memory {peak / 1024:.0f} MiB")


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0, int(sys.argv[2]) if len(sys.argv) > 2 else 3,
         int(sys.argv[3]) if len(sys.argv) > 3 else 1)
