"""MBR decoders through the command line, start-up included, against mbrs 0.1.8's same decoders and fastchrf.

Data: the 20 WMT21 en-de MT systems of ``../shared/data/wmt21.news`` as a 20-candidate pool for each of the 1,002
segments (the candidates are also the pseudo-references), written as ``--samples`` JSON lines.  Every figure is
measured in this run, on this machine, one after the other:

* chrF, every decoder: ``evalpipe mbr --samples POOL --decoder D`` (wall time of the process) against mbrs's same
  decoder with its ``MetricChrF`` (``fastchrf=True``, its fastest chrF, the same values) run by
  tests/anchors/mbrs_efficient.py in its own process (target >= 3x); exact and aggregate MBR also against
  fastchrf 0.2.1's ``pairwise_chrf`` / ``aggregate_chrf`` plus the expectation, in a process of their own
  (target >= 5x).  mbrs has no centroid decoder for chrF (its k-means needs embeddings): evalpipe's is timed alone;
* COMET (the tiny regression model of ``python -m evalpipe.tiny_comet``), the first 100 segments of the same
  20-candidate pool: each of mbrs's decoders with its ``MetricCOMET`` (tests/anchors/mbrs_comet.py, in
  unbabel-comet's environment) against ``evalpipe mbr -m comet --decoder D`` (target >= 3x), with the cells
  probabilistic and pruning computed (target <= 1/4 of exact MBR's).  Pruning's default schedule (mbrs's:
  8, 16, 32, ...) starts with 8 of the 20 pseudo-references, 40 % of the matrix before anything is pruned, so it
  is also run with a schedule that starts at a tenth of the pool (2, 4, 8, 16, 20), as a pool this small needs;
* the choices: the same chosen text as mbrs (and the same index: among identical candidates -- one output given by
  several systems, with the same utility -- ``--ties mbrs`` follows torch's ``topk`` over the whole utility
  vector, whose last bits differ from mbrs's by up to 1e-6 where the model's batches differ, so it may name
  another copy of the same text);
* the share of segments where each decoder picks a candidate of the highest exact expected utility,
  and its regret (the exact expected utility lost, averaged over segments), for evalpipe's draws (torch's: mbrs's
  own; and numpy's, an environment without torch) and mbrs's.  Timed runs use evalpipe's default ties; the
  choices compared with mbrs's come from an untimed ``--ties mbrs`` run.

``python bench/bench_mbr_decoders.py [RUNS]`` (default 2).
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))
sys.path.insert(0, str(HERE))

from common import NEWS, ROOT, child_env  # noqa: E402

BIN = Path(sys.executable).parent
MBRS = Path.home() / ".cache" / "evalpipe-test-anchors" / "mbrs-0.1.8-py3.11"
ANCHORS = ROOT / "tests" / "anchors"

FASTCHRF = """
import json, sys, time
import fastchrf, numpy
pool = [json.loads(line) for line in open(sys.argv[2], encoding="utf-8")]
if sys.argv[1] == "mbr":
    u = fastchrf.pairwise_chrf(pool, pool)
    chosen = [int(numpy.argmax(numpy.asarray(m).mean(axis=1))) for m in u]
else:
    u = fastchrf.aggregate_chrf(pool, pool)
    chosen = [int(numpy.argmax(m)) for m in u]
print(json.dumps(chosen))
"""

DECODERS = {"mbr": ("mbr", {}), "aggregate": ("aggregate_mbr", {}), "probabilistic": ("probabilistic_mbr", {}),
            "pruning": ("pruning_mbr", {}), "centroid": (None, {})}


def _run(args, env=None):
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, env=dict(child_env(), **(env or {})))
    took = time.perf_counter() - start
    if done.returncode:
        raise SystemExit(f"{' '.join(map(str, args[:3]))} failed: {done.stderr[-1500:]}")
    return took, done


def _ours(pool_file: Path, decoder: str, extra=()):
    """The timed run (default ties: ``--ties mbrs`` would import torch for exact and aggregate MBR), and an untimed
    one with ``--ties mbrs`` whose choices are compared with mbrs's."""
    args = [str(BIN / "evalpipe"), "mbr", "--samples", str(pool_file), "-f", "json", "--decoder", decoder, *extra]
    took, done = _run(args)
    doc = json.loads(done.stdout)
    _, same_ties = _run(args + ["--ties", "mbrs"])
    return took, [s["choice"] for s in json.loads(same_ties.stdout)["segments"]], doc.get("cells")


def _mbrs(spec_file: Path):
    took, done = _run([sys.executable, str(ANCHORS / "mbrs_efficient.py"), str(spec_file)],
                      {"PYTHONPATH": f"{MBRS}:{ANCHORS}"})
    return took, [s["idx"][0] for s in json.loads(done.stdout)["segments"]]


def chrf(runs: int, folder: Path) -> None:
    from evalpipe import load_metric, mbr

    files = sorted(p for p in (NEWS / "system-outputs" / "en-de").glob("*.txt") if not p.stem.startswith("ref"))
    outs = [p.read_text(encoding="utf-8").splitlines() for p in files]
    pool = [[o[i] for o in outs] for i in range(len(outs[0]))]
    pool_file = folder / "pool.jsonl"
    pool_file.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in pool), encoding="utf-8")
    exact = np.array([mbr.pairwise(load_metric("chrf"), c).mean(axis=1) for c in pool])
    best = exact.max(axis=1)

    def regret(chosen):
        return float(np.mean(best - exact[np.arange(len(pool)), chosen]))

    def agree(chosen):  # the share of segments where the choice has the highest exact expected utility
        return float(np.mean(best - exact[np.arange(len(pool)), chosen] <= 1e-9))

    print(f"chrF, {len(pool):,} segments x {len(pool[0])} candidates ({len(pool) * len(pool[0]) ** 2:,} pairs); "
          f"seconds, start-up included")
    _ours(pool_file, "mbr")  # byte-compiles evalpipe's modules once
    for name, (theirs, config) in DECODERS.items():
        spec = folder / f"{name}.json"
        spec.write_text(json.dumps({"metric": "chrf", "metric_config": {"fastchrf": True}, "decoder": theirs,
                                    "config": config, "selector": "nbest", "nbest": 1, "segments": pool,
                                    "choices_only": True}))
        for run in range(1, runs + 1):
            extra = ["--ncentroids", "8"] if name == "centroid" else []
            t_ours, mine, cells = _ours(pool_file, name, extra)
            line = f"run {run}: {name}: evalpipe {t_ours:.2f}"
            if theirs is not None:
                t_theirs, chosen = _mbrs(spec)
                line += (f"  mbrs {t_theirs:.2f} ({t_theirs / t_ours:.1f}x; target >= 3x; same choices "
                         f"{sum(a == b for a, b in zip(mine, chosen))}/{len(pool)})")
            if name in ("mbr", "aggregate"):
                script = folder / "fastchrf_run.py"
                script.write_text(FASTCHRF)
                t_fast, done = _run([sys.executable, str(script), name, str(pool_file)])
                line += f"  fastchrf {t_fast:.2f} ({t_fast / t_ours:.1f}x; target >= 5x)"
            if cells:
                line += f"  cells {cells['computed']:,} of {cells['exact']:,}"
            line += f"  agrees with exact {agree(mine):.1%}, regret {regret(mine):.3f}"
            if theirs is not None and name in ("probabilistic", "pruning"):
                line += f" (mbrs's draws: agrees {agree(chosen):.1%}, regret {regret(chosen):.3f})"
            print(line)
    for name in ("probabilistic", "pruning"):  # numpy's draws (an environment without torch) against torch's
        script = folder / "numpy_draws.py"
        script.write_text("import sys, json\nfrom evalpipe import load_metric, mbr\nfrom evalpipe.mbr import Decoder\n"
                          "pool = [json.loads(l) for l in open(sys.argv[2], encoding='utf-8')]\n"
                          "got = mbr.decode(load_metric('chrf'), pool, decoder=Decoder(sys.argv[1], draws='numpy'))\n"
                          "print(json.dumps([c.index for c in got]))\n")
        _, done = _run([sys.executable, str(script), name, str(pool_file)])
        chosen = json.loads(done.stdout)
        print(f"{name} with numpy's draws (no torch): agrees with exact {agree(chosen):.1%}, regret {regret(chosen):.3f}")


def comet(runs: int, folder: Path) -> None:
    env_python = ROOT / ".pytest_cache" / "anchors" / "unbabel-comet-2.2.7" / "bin" / "python"
    if not env_python.exists():
        print("COMET: no unbabel-comet environment (python bench/bench_comet.py builds it); skipped")
        return
    src = (NEWS / "sources" / "en-de.txt").read_text(encoding="utf-8").splitlines()
    files = sorted(p for p in (NEWS / "system-outputs" / "en-de").glob("*.txt") if not p.stem.startswith("ref"))
    outs = [p.read_text(encoding="utf-8").splitlines() for p in files]
    g = 100
    model = folder / "tiny"
    subprocess.run([sys.executable, "-m", "evalpipe.tiny_comet", str(model)], check=True, capture_output=True,
                   env=child_env())
    cand_files = []
    for k, out in enumerate(outs):
        path = folder / f"c{k}.txt"
        path.write_text("\n".join(out[:g]) + "\n", encoding="utf-8")
        cand_files.append(str(path))
    (folder / "src.txt").write_text("\n".join(src[:g]) + "\n", encoding="utf-8")
    pool = [[o[i] for o in outs] for i in range(g)]
    (folder / "segments.json").write_text(json.dumps([{"source": src[i], "candidates": pool[i]} for i in range(g)]))
    print(f"COMET (tiny model), {g} segments x {len(outs)} candidates; seconds, start-up included")
    for name, theirs, config, flags in (
            ("mbr", "mbr", None, []), ("aggregate", "aggregate_mbr", None, ["--decoder", "aggregate"]),
            ("centroid", "centroid_mbr", {"kmeans": {"ncentroids": 4}}, ["--decoder", "centroid", "--ncentroids", "4"]),
            ("probabilistic", "probabilistic_mbr", {}, ["--decoder", "probabilistic"]),
            ("pruning", "pruning_mbr", {}, ["--decoder", "pruning"]),
            ("pruning 2,4,8,16,20", "pruning_mbr", {"sampling_scheduler": [2, 4, 8, 16, 20]},
             ["--decoder", "pruning", "--sampling-scheduler", "2,4,8,16,20"])):
        args = [str(env_python), str(ANCHORS / "mbrs_comet.py"), theirs, str(model / "checkpoints" / "model.ckpt"),
                str(folder / "segments.json")]
        if config is not None:
            (folder / "config.json").write_text(json.dumps(config))
            args.append(str(folder / "config.json"))
        ours = [str(BIN / "evalpipe"), "mbr", "-m", "comet", "-o", f"model={model}", "--source",
                str(folder / "src.txt"), *cand_files, "-f", "json", "--ties", "mbrs", *flags]
        for run in range(1, runs + 1):
            t_theirs, done_theirs = _run(args, {"PYTHONPATH": str(env_python.parents[1] / "mbrs"),
                                                "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"})
            t_ours, done = _run(ours)
            doc = json.loads(done.stdout)
            pairs = list(zip(doc["segments"], json.loads(done_theirs.stdout.strip().splitlines()[-1])["segments"]))
            same = sum(a["choice"] == b["choice"] for a, b in pairs)
            same_text = sum(a["text"] == pool[k][b["choice"]] for k, (a, b) in enumerate(pairs))
            cells = doc.get("cells")
            note = f"  cells {cells['computed']:,} of {cells['exact']:,} ({cells['computed'] / cells['exact']:.1%})" \
                if cells else ""
            print(f"run {run}: {name}: mbrs {t_theirs:.2f}  evalpipe {t_ours:.2f} ({t_theirs / t_ours:.1f}x; "
                  f"target >= 3x; same choices {same_text}/{g}, same index {same}/{g}){note}")


def main(runs: int = 2) -> None:
    if not (NEWS / "system-outputs" / "en-de").is_dir():
        print(f"MBR decoders benchmark skipped: no {NEWS}")
        return
    if not MBRS.is_dir():
        print(f"MBR decoders benchmark skipped: no mbrs at {MBRS} (the tests install it: pytest tests/test_mbr.py)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        chrf(runs, Path(tmp))
        comet(runs, Path(tmp))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
