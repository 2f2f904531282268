"""The wmt21.news copy that task sets are recorded on (tests/data/make_mtme_task_sets.py, with MTME) and tested on
(tests/test_task_sets.py, with evalpipe): the same files for both.

``build(source, root)`` copies ``source/wmt21.news`` (the shipped subset or ../shared/data's full set) to
``root/wmt21.news``, gives it the one file MTME's reader needs that the copies lack (``documents/LP.docs``: every
segment in document ``doc1`` of domain ``news``), and adds segment- and system-level metric files written by
``evalpipe meta-eval add-metric`` against each language pair's standard reference (en-de refC, zh-en refA):
``chrF`` and ``sentBLEU`` (WMT21 primaries), ``chrFpp`` (chrF++, not primary) and, en-de only, ``chrF`` against
refA (a reference outside the tasks' standard one: left out by them); plus ``lenratio-src`` (no reference:
``[noref]``), the negated distance of each output's length ratio to its source from 1, written here.  zh-en's
``*-all`` files are removed (it has one reference, so MTME names them ``*-refA`` too and refuses the duplicate), and
lines of score files naming a system without outputs in the copy are dropped (the subset keeps some systems only;
MTME's reader refuses scores of unknown systems).

``build(..., domains=True)`` (the data-control tasks) writes instead documents of 10 segments each, alternately of
domain ``news`` and ``web``, and domain-level files (``LP.mqm.domain.score`` and every segment-level metric's
``.domain.score``): each system's mean over the domain's segments (its rated ones for MQM; None where none is).
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

LPS = ("en-de", "zh-en")
STD_REF = {"en-de": "refC", "zh-en": "refA"}
METRICS = [("chrf", "chrF", []), ("bleu", "sentBLEU", ["-o", "effective_order=true"]),
           ("chrf", "chrFpp", ["-o", "word_order=2"])]


def _evalpipe() -> str:
    path = Path(sys.executable).parent / "evalpipe"
    if not path.exists():
        raise SystemExit(f"evalpipe is not installed beside {sys.executable}")
    return str(path)


def _lines(path: Path) -> list:
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


def _domain_files(news: Path, lp: str, domain_per_seg: list) -> None:
    domains = sorted(set(domain_per_seg))
    seg_files = [news / "human-scores" / f"{lp}.mqm.seg.score", *(news / "metric-scores" / lp).glob("*.seg.score")]
    for path in seg_files:
        per_system: dict = {}
        for line in _lines(path):
            system, value = line.split()
            per_system.setdefault(system, []).append(None if value == "None" else float(value))
        out = []
        for domain in domains:
            for system, values in per_system.items():
                kept = [v for v, d in zip(values, domain_per_seg) if d == domain and v is not None]
                out.append(f"{domain}\t{system}\t{sum(kept) / len(kept)!r}" if kept else f"{domain}\t{system}\tNone")
        path.with_name(path.name.replace(".seg.score", ".domain.score")).write_text("\n".join(out) + "\n")


def build(source: Path, root: Path, domains: bool = False) -> Path:
    news = root / "wmt21.news"
    shutil.copytree(source / "wmt21.news", news)
    (news / "documents").mkdir(exist_ok=True)
    for path in (news / "metric-scores" / "zh-en").glob("*-all.*.score"):
        path.unlink()
    for lp in LPS:
        known = {p.stem for p in (news / "system-outputs" / lp).glob("*.txt")}
        for path in [*(news / "human-scores").glob(f"{lp}.*.score"), *(news / "metric-scores" / lp).glob("*.score")]:
            kept = [line for line in _lines(path) if line.split()[0] in known]
            path.write_text("".join(line + "\n" for line in kept))
        n = len(_lines(news / "sources" / f"{lp}.txt"))
        if domains:
            domain_per_seg = ["news" if (i // 10) % 2 == 0 else "web" for i in range(n)]
            (news / "documents" / f"{lp}.docs").write_text("".join(f"{d} doc{i // 10}\n"
                                                                  for i, d in enumerate(domain_per_seg)))
        else:
            (news / "documents" / f"{lp}.docs").write_text("news doc1\n" * n)
        runs = [(m, name, opts, STD_REF[lp]) for m, name, opts in METRICS]
        if lp == "en-de":
            runs.append(("chrf", "chrF", [], "refA"))
        for metric, name, opts, ref in runs:
            subprocess.run([_evalpipe(), "meta-eval", "add-metric", metric, "--root", str(root), "--test-set",
                            "wmt21.news", "-l", lp, "-r", ref, "--name", name, "--force", *opts], check=True,
                           stdout=subprocess.DEVNULL)
        src = _lines(news / "sources" / f"{lp}.txt")
        seg, sys_ = [], []
        for path in sorted((news / "system-outputs" / lp).glob("*.txt")):
            scores = [-abs(len(h) / max(len(s), 1) - 1.0) for h, s in zip(_lines(path), src)]
            seg += [f"{path.stem}\t{v!r}" for v in scores]
            sys_.append(f"{path.stem}\t{sum(scores) / len(scores)!r}")
        (news / "metric-scores" / lp / "lenratio-src.seg.score").write_text("\n".join(seg) + "\n")
        (news / "metric-scores" / lp / "lenratio-src.sys.score").write_text("\n".join(sys_) + "\n")
        if domains:
            _domain_files(news, lp, domain_per_seg)
    return news
