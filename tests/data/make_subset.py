"""Write the small real-data subset in tests/data from the full data in ../shared/data.

    python tests/data/make_subset.py [--shared ../shared/data]

What it keeps (see tests/data/README.md for provenance):

* ``wmt21.news`` in the MTME layout: the first SEGMENTS segments of the en-de and zh-en sources,
  references and system outputs (en-de: the MQM-rated systems and the first four by name; zh-en: the
  first three by name), the first SEGMENTS segment-level human scores of every system, and the
  system-level human and metric score files unchanged (they describe the full test set);
* ``wmt21.tedtalks``: the first TED_SEGMENTS segments of every file, documents included;
* ``simul/iwslt17-dev2010.de-en/derived``: the first LOG_LINES records of four wait-k logs;
* ``simul/iwslt17-dev2010.de-en/REAL``: the first STREAM_SENTENCES sentences of two wait-k streams: the
  source, the resegmented output, and the READ/WRITE actions up to the last word of those sentences.

The segment-level meta-evaluation cases (tests/meta_cases.py) use the first 150 items of each MQM
system, so the MTME values recorded in mtme_expected.json hold for the subset unchanged.
"""
from __future__ import annotations

import argparse
import shutil
from pathlib import Path

SEGMENTS = 150
TED_SEGMENTS = 171  # the first two talks
LOG_LINES = 120
LOGS = ("wait1", "wait10", "wait2", "wait3")
STREAM_SENTENCES = 60
STREAMS = ("1", "5")
HERE = Path(__file__).resolve().parent


def head(src: Path, dst: Path, n: int) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    with open(src, "rb") as handle:
        lines = handle.read().split(b"\n")
    dst.write_bytes(b"\n".join(lines[:n]) + b"\n")


def head_per_system(src: Path, dst: Path, n: int) -> None:
    """The first ``n`` lines of every system of a segment-level score file (``SYS SCORE`` lines)."""
    seen: dict = {}
    out = []
    for line in src.read_bytes().decode("utf-8").splitlines():
        system = line.split("\t")[0].split()[0]
        seen[system] = seen.get(system, 0) + 1
        if seen[system] <= n:
            out.append(line)
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_text("\n".join(out) + "\n", encoding="utf-8")


def mtme_subset(src: Path, dst: Path, n: int, systems_of) -> None:
    for folder in ("sources", "references", "documents"):
        for path in sorted((src / folder).glob("*")) if (src / folder).is_dir() else []:
            head(path, dst / folder / path.name, n)
    for lp_dir in sorted((src / "system-outputs").iterdir()):
        for path in systems_of(lp_dir.name, src):
            head(path, dst / "system-outputs" / lp_dir.name / path.name, n)
    for path in sorted((src / "human-scores").glob("*.score")):
        if path.name.endswith(".seg.score"):
            head_per_system(path, dst / "human-scores" / path.name, n)
        elif path.name.endswith(".sys.score"):
            (dst / "human-scores").mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dst / "human-scores" / path.name)
    for path in sorted((src / "metric-scores").glob("*/*.sys.score")):
        (dst / "metric-scores" / path.parent.name).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, dst / "metric-scores" / path.parent.name / path.name)


def news_systems(lp: str, src: Path):
    outputs = sorted((src / "system-outputs" / lp).glob("*.txt"))
    if lp == "zh-en":
        return outputs[:3]
    mqm = {line.split("\t")[0] for line in (src / "human-scores" / f"{lp}.mqm.sys.score").read_text().splitlines()}
    return [p for i, p in enumerate(outputs) if i < 4 or p.stem in mqm]


def stream_subset(src: Path, dst: Path, n: int) -> None:
    head(src / "source.de", dst / "source.de", n)
    for k in STREAMS:
        head(src / "REAL" / f"{k}.reseg_h", dst / "REAL" / f"{k}.reseg_h", n)
        words = sum(len(line.split()) for line in (dst / "REAL" / f"{k}.reseg_h").read_text(encoding="utf-8").splitlines())
        actions, written = [], 0
        for action in (src / "REAL" / f"{k}.RW").read_text(encoding="utf-8").split():
            if written == words:
                break
            actions.append(action)
            written += action == "W"
        (dst / "REAL" / f"{k}.RW").write_text(" ".join(actions) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=HERE.parents[1].parent / "shared" / "data")
    args = parser.parse_args()
    for name in ("wmt21.news", "wmt21.tedtalks", "simul"):
        shutil.rmtree(HERE / name, ignore_errors=True)
    mtme_subset(args.shared / "wmt21.news", HERE / "wmt21.news", SEGMENTS, news_systems)
    mtme_subset(args.shared / "wmt21.tedtalks", HERE / "wmt21.tedtalks", TED_SEGMENTS,
                lambda lp, src: sorted((src / "system-outputs" / lp).glob("*.txt")))
    logs = Path("simul") / "iwslt17-dev2010.de-en" / "derived"
    for name in LOGS:
        head(args.shared / logs / f"{name}.instances.jsonl", HERE / logs / f"{name}.instances.jsonl", LOG_LINES)
    stream = Path("simul") / "iwslt17-dev2010.de-en"
    stream_subset(args.shared / stream, HERE / stream, STREAM_SENTENCES)


if __name__ == "__main__":
    main()
