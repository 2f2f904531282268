"""Benchmark data and timing helpers.

Segments are cut from real WMT21 en-de text (../shared/data beside the project, or the demo data
shipped in the package): references from reference A, hypotheses from the system outputs, each
made unique so that no cache of the anchor or of evalpipe sees a repeated line by accident.
"""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Callable, List, Tuple

ROOT = Path(__file__).resolve().parents[1]
NEWS = ROOT.parent / "shared" / "data" / "wmt21.news"


def _lines(path: Path) -> List[str]:
    return [line.rstrip("\n") for line in open(path, encoding="utf-8")]


def corpus_text() -> Tuple[List[str], List[List[str]]]:
    """(reference lines, [system lines, ...]) of real en-de text."""
    if NEWS.is_dir():
        refs = _lines(NEWS / "references" / "en-de.refA.txt")
        systems = [_lines(p) for p in sorted((NEWS / "system-outputs" / "en-de").glob("*.txt"))]
    else:
        demo = ROOT / "src" / "evalpipe" / "demo"
        refs, systems = _lines(demo / "newstest.ref.de"), [_lines(demo / "newstest.hyp.de")]
    return refs, systems


def windows(text: List[str], n_tokens: int) -> List[List[str]]:
    """The whitespace tokens of ``text`` cut into consecutive windows of ``n_tokens``."""
    tokens = " ".join(text).split()
    return [tokens[i:i + n_tokens] for i in range(0, len(tokens) - n_tokens + 1, n_tokens)]


def unique_pairs(count: int, n_tokens: int = 25) -> Tuple[List[str], List[str]]:
    """``count`` (hypothesis, reference) pairs of ``n_tokens`` tokens, every line unique."""
    refs_text, systems = corpus_text()
    ref_windows = windows(refs_text, n_tokens)
    sys_windows = [windows(s, n_tokens) for s in systems]
    hyps, refs = [], []
    for i in range(count):
        k = i % len(ref_windows)
        system = sys_windows[(i // len(ref_windows)) % len(sys_windows)]
        hyp = list(system[k % len(system)])
        ref = list(ref_windows[k])
        tag = f"u{i}"  # makes the line unique; one extra token on each side
        hyps.append(" ".join(hyp[:-1] + [tag]))
        refs.append(" ".join(ref[:-1] + [tag]))
    return hyps, refs


def nbest(n_refs: int, per_ref: int = 100, n_tokens: int = 25) -> List[Tuple[str, List[str]]]:
    """``n_refs`` references, each with ``per_ref`` distinct hypotheses (an n-best list)."""
    refs_text, systems = corpus_text()
    ref_windows = windows(refs_text, n_tokens)
    sys_windows = [windows(s, n_tokens) for s in systems]
    out = []
    for k in range(n_refs):
        ref = " ".join(ref_windows[k % len(ref_windows)]) + f" r{k}"
        hyps = []
        for j in range(per_ref):
            system = sys_windows[j % len(sys_windows)]
            tokens = list(system[k % len(system)])
            del tokens[j % len(tokens)]
            hyps.append(" ".join(tokens) + f" h{j}")
        out.append((ref, hyps))
    return out


def best_of(fn: Callable[[], object], repeat: int = 5) -> float:
    """The fastest of ``repeat`` wall-clock timings of ``fn()`` in seconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def child_env() -> dict:
    """The environment of a measured subprocess: without PYTHONUNBUFFERED (it would hide a missing flush)
    and without PYTHONDONTWRITEBYTECODE (this machine sets it; it would make every evalpipe process compile
    its own modules from source again, while the anchors' were byte-compiled by pip when installed)."""
    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def report(name: str, ours: float, anchor: float, unit: str, target: str = "") -> str:
    ratio = anchor / ours if ours else float("inf")
    line = f"{name:<58} evalpipe {ours:10.2f} {unit:<10} anchor {anchor:10.2f} {unit:<10} ratio {ratio:6.2f}x"
    return line + (f"  (target {target})" if target else "")


def import_mtme(bench: str) -> bool:
    """Make MT Metrics Eval importable from ``MTME_PATH`` (a checkout; its code is imported from there, never copied
    here), with empty stand-ins for the modules it imports for features the benches do not use; False, with a line
    saying so, when ``MTME_PATH`` is not set."""
    import sys
    import types

    mtme = os.environ.get("MTME_PATH")
    if not mtme:
        print(f"{bench} skipped: set MTME_PATH to an MT Metrics Eval checkout")
        return False
    sys.path.insert(0, mtme)
    for missing in ("apache_beam", "dacite"):
        sys.modules.setdefault(missing, types.ModuleType(missing))
    return True
