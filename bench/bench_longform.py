"""Issue 13 benchmark: long-form scoring of 200 talks x 100 sentences against simulstream's and
OmniSTEval's own commands on the same files, in the same run, values compared.

Data: real WMT21 en-de text of ../shared/data/wmt21.news (sources, reference A, the 23 system outputs):
talk k holds sentences 100 (k mod 10) .. +99, translated by system k mod 23, with drafts from system
k + 1 mod 23.  ``evalpipe stream run`` (the replay agent, retracting a draft at a quarter of the steps,
1 s steps on the made-up clock of ``tests/streamlogs.py``: 0.32 s per source word + 0.5 s a sentence)
writes the simulstream log.  Timed end to end, each a fresh process:

* simulstream 1.0.0 (installed --no-deps from PyPI into a temporary folder, with a stub ``comet``):
  ``score_latency --scorer stream_laal`` + ``score_quality --scorer sacrebleu`` + ``stats`` (its three
  commands for StreamLAAL ideal and CA, BLEU, normalized erasure and RTF), against
  ``evalpipe stream score --resegmenter mweralign --workers 2`` for the same five values;
* OmniSTEval 0.1.10 ``omnisteval longform --hypothesis_format simulstream`` (its own multiprocessing pool
  over talks), against ``evalpipe stream score --workers 2`` (BLEU, chrF, the ten Long* values).

Memory: peak RSS of ``evalpipe stream score`` (one process) on 50 and 200 talks.
``python bench/bench_longform.py [SCALE]``: SCALE scales the number of talks (1 = 200).
"""
from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import NEWS, child_env

BIN = Path(sys.executable).parent
STUB = "def download_model(*a, **k):\n    raise RuntimeError('stub')\ndef load_from_checkpoint(*a, **k):\n    raise RuntimeError('stub')\n"


def lines(path: Path):
    return path.read_text(encoding="utf-8").splitlines()


def build(folder: Path, talks: int) -> dict:
    src = lines(NEWS / "sources" / "en-de.txt")
    ref = lines(NEWS / "references" / "en-de.refA.txt")
    systems = [lines(p) for p in sorted((NEWS / "system-outputs" / "en-de").glob("*.txt"))]
    out = {k: [] for k in ("src", "ref", "hyp", "alt", "audio")}
    for k in range(talks):
        block = range(100 * (k % 10), 100 * (k % 10) + 100)
        t = 0.0
        for i in block:
            d = round(0.32 * len(src[i].split()) + 0.5, 2)
            out["audio"].append(f"- {{duration: {d}, offset: {round(t, 2)}, wav: talk{k:03d}.wav}}")
            t = round(t + d + 0.2, 2)
            out["src"].append(src[i])
            out["ref"].append(ref[i])
            out["hyp"].append(systems[k % len(systems)][i])
            out["alt"].append(systems[(k + 1) % len(systems)][i])
    paths = {k: folder / f"{k}.txt" for k in ("src", "ref", "hyp", "alt")}
    paths["audio"] = folder / "audio.yaml"
    for k, path in paths.items():
        path.write_text("\n".join(out[k]) + "\n", encoding="utf-8")
    paths["config"] = folder / "eval.yaml"
    paths["config"].write_text("detokenizer_type: simuleval\nlatency_unit: word\n")
    paths["log"] = folder / "metrics.jsonl"
    run([str(BIN / "evalpipe"), "stream", "run", "--source", paths["src"], "-a", paths["audio"], "--agent-option",
         f"hypothesis={paths['hyp']}", "--agent-option", f"drafts={paths['alt']}", "--agent-option", "retract=0.25", "--output",
         paths["log"]])
    return {k: str(v) for k, v in paths.items()}


def run(cmd, env=None):
    """(seconds, stdout, peak RSS in MiB of the process tree) of one command."""
    wrapper = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
               "p = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
               "sys.stdout.write(p.stdout); sys.stderr.write(p.stderr); "
               "print('@@', time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, p.returncode, "
               "file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", wrapper, *map(str, cmd)], capture_output=True, text=True,
                          env=env or child_env())
    tail = done.stderr.strip().splitlines()[-1].split()
    if tail[-1] != "0":
        raise RuntimeError(f"{cmd[:3]} failed: {done.stderr[-1500:]}")
    return float(tail[1]), done.stdout, done.stderr, int(tail[2]) / 1024


def simulstream_site(folder: Path) -> str:
    site = folder / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site),
                    "simulstream==1.0.0"], check=True, capture_output=True)
    (folder / "stub" / "comet").mkdir(parents=True)
    (folder / "stub" / "comet" / "__init__.py").write_text(STUB)
    return f"{site}:{folder / 'stub'}"


def number(pattern, text):
    m = re.search(pattern, text)
    if not m:
        raise RuntimeError(f"no {pattern!r} in {text[-800:]}")
    return m.group(1)


def main(scale: float = 1.0) -> None:
    if not (NEWS / "system-outputs" / "en-de").is_dir():
        print(f"long-form benchmark skipped: no {NEWS}")
        return
    talks = max(4, int(200 * scale))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = child_env()
        env["PYTHONPATH"] = simulstream_site(folder)
        p = build(folder, talks)
        print(f"{talks} talks x 100 sentences, log {os.path.getsize(p['log']) / 2**20:.1f} MiB")
        common = ["--eval-config", p["config"], "--log-file", p["log"], "--audio-definition", p["audio"]]
        mod = [sys.executable, "-m"]
        t1, out1, err1, m1 = run(mod + ["simulstream.metrics.score_latency", *common, "--reference", p["ref"],
                                        "--scorer", "stream_laal"], env)
        t2, out2, err2, m2 = run(mod + ["simulstream.metrics.score_quality", *common, "--references", p["ref"],
                                        "--scorer", "sacrebleu"], env)
        t3, out3, err3, m3 = run(mod + ["simulstream.metrics.stats", "--eval-config", p["config"], "--log-file",
                                        p["log"]], env)
        anchor = {"stream_laal": float(number(r"ideal_latency=([-\d.e]+)", out1)),
                  "stream_laal_ca": float(number(r"computational_aware_latency=([-\d.e]+)", out1)),
                  "bleu": float(number(r"sacrebleu score: ([-\d.e]+)", out2))}
        stats = json.loads(out3[out3.index("{"):])
        anchor.update({k: v["value"] for k, v in stats.items()})
        ours = [str(BIN / "evalpipe"), "stream", "score", "--log-file", p["log"], "-a", p["audio"], "-r", p["ref"],
                "--eval-config", p["config"], "-f", "json"]
        te, oute, erre, me = run(ours + ["--resegmenter", "mweralign", "--workers", "2"] +
                                 [a for m in anchor for a in ("-m", m)], env)
        got = {r["metric"]: r["score"] for r in json.loads(oute)["results"]}
        worst = max(abs(got[k] - v) / max(1, abs(v)) for k, v in anchor.items())
        ts = t1 + t2 + t3
        print(f"simulstream 1.0.0, 3 commands       {ts:8.2f} s  (latency {t1:.2f} + quality {t2:.2f} + stats {t3:.2f}),"
              f" peak {max(m1, m2, m3):.0f} MiB")
        print(f"evalpipe --resegmenter mweralign -j2 {te:8.2f} s  peak {me:.0f} MiB  -> {ts / te:.1f}x faster; "
              f"largest relative difference {worst:.1e} over {len(anchor)} values")
        out_dir = folder / "omni"
        to, outo, erro, mo = run([str(BIN / "omnisteval"), "longform", "--speech_segmentation", p["audio"],
                                  "--ref_sentences_file", p["ref"], "--hypothesis_file", p["log"],
                                  "--hypothesis_format", "simulstream", "--simulstream_config_file", p["config"], "--word_level",
                                  "--output_folder", out_dir], env)
        omni = dict(line.split("\t") for line in (out_dir / "scores.tsv").read_text().splitlines()[1:])
        tw, outw, errw, mw = run(ours + ["--workers", "2"], env)
        mine = {r["metric"]: r["score"] for r in json.loads(outw)["results"]}
        names = {m: ("BLEU" if m == "bleu" else "chrF" if m == "chrf" else
                     f"Long{m[5:].replace('_ca', '').upper()} ({'CA' if m.endswith('_ca') else 'CU'})") for m in mine}
        same = sum(f"{v:.4f}" == omni.get(names[m]) for m, v in mine.items())
        print(f"OmniSTEval 0.1.10 longform           {to:8.2f} s  peak {mo:.0f} MiB (its pool of {os.cpu_count()})")
        print(f"evalpipe --resegmenter omnisteval -j2 {tw:7.2f} s  peak {mw:.0f} MiB  -> {to / tw:.1f}x faster; "
              f"{same} of {len(mine)} values equal to OmniSTEval's printed 4 decimals")
        if same != len(mine):
            print("  differ:", {m: (round(v, 4), omni.get(names[m])) for m, v in mine.items()
                                if f"{v:.4f}" != omni.get(names[m])})
        for n in (max(2, talks // 4), talks):
            sub = Path(tmp) / f"mem{n}"
            sub.mkdir()
            q = build(sub, n)
            tm, _, _, mm = run([str(BIN / "evalpipe"), "stream", "score", "--log-file", q["log"], "-a", q["audio"],
                                "-r", q["ref"], "--eval-config", q["config"], "-f", "json"], env)
            print(f"memory: evalpipe stream score, {n:3d} talks, one process: peak {mm:.0f} MiB ({tm:.1f} s)")


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
