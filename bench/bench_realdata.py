"""Issue 15 benchmark: speed on real data against sacrebleu and sacrebleu-mojo, measured in the same run.

The 23 WMT21 en-de system files of ../shared/data/wmt21.news (1,002 segments each, 23,046 pairs against
reference A, the three human references among the "systems" as the issue counts them).  One process; each
figure is the time for all 23 systems; three runs, every run printed, best of three in the table; scores
must be identical (sacrebleu-mojo to sacrebleu's printed precision, it rounds internally).

* corpus BLEU, chrF and chrF++: ``sacrebleu.BLEU/CHRF().corpus_score`` per system, ``sacrebleu_mojo``'s
  ``corpus_bleu`` / ``corpus_chrf`` (bench extra: ``pip install --no-deps --ignore-requires-python
  sacrebleu-mojo==0.2.4``), evalpipe's ``corpus_score`` (the batched block path);
* TER on the first 4,000 segment pairs;
* ``score-corpus`` on the 23 files, BLEU + chrF, end to end, against the sacrebleu CLI on the same files.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from common import NEWS, child_env

RUNS = 3


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def one_corpus(systems, refs, sacrebleu, load_metric) -> None:
    """Issue 27: the 23 systems concatenated as one corpus of 23,046 pairs, one corpus_score call each,
    against sacrebleu and bleuscore 0.2.0 (a Rust BLEU; the bench extra) in the same run."""
    try:
        import bleuscore
    except ImportError:
        bleuscore = None
    hyps = [h for system in systems for h in system]
    many = refs * len(systems)
    times = {"sacrebleu": [], "bleuscore": [], "evalpipe": []}
    scores = {}
    for _ in range(RUNS):
        t, scores["sacrebleu"] = timed(lambda: sacrebleu.BLEU().corpus_score(hyps, [many]).score)
        times["sacrebleu"].append(t)
        if bleuscore:
            t, value = timed(lambda: bleuscore.compute(references=[[r] for r in many], predictions=hyps))
            times["bleuscore"].append(t)
            scores["bleuscore"] = 100 * value["bleu"]
        metric = load_metric("bleu")  # a fresh metric: nothing cached
        t, scores["evalpipe"] = timed(lambda: metric.corpus_score(hyps, [many]))
        times["evalpipe"].append(t)
    best = {k: min(v) for k, v in times.items() if v}
    shown = "  ".join(f"{k} {', '.join(f'{x:.2f}' for x in v)} [{min(v):.2f}]" for k, v in times.items() if v)
    print(f"{'BLEU, one corpus of ' + str(len(hyps)) + ' pairs':<16} {shown}  ->  vs sacrebleu "
          f"{best['sacrebleu'] / best['evalpipe']:.2f}x"
          + (f", vs bleuscore {best['bleuscore'] / best['evalpipe']:.2f}x (bleuscore's BLEU to 1e-9: "
             f"{abs(scores['bleuscore'] - scores['evalpipe']) < 1e-9})" if "bleuscore" in best else "")
          + f"  identical to sacrebleu: {scores['evalpipe'] == scores['sacrebleu']}")


def main(scale: float = 1.0) -> None:
    folder = NEWS / "system-outputs" / "en-de"
    if not folder.is_dir():
        print(f"real-data benchmark skipped: no {folder}")
        return
    import sacrebleu

    from evalpipe import load_metric

    try:
        import sacrebleu_mojo as mojo
    except ImportError:
        mojo = None
    ref_path = NEWS / "references" / "en-de.refA.txt"
    refs = ref_path.read_text(encoding="utf-8").splitlines()
    paths = sorted(folder.glob("*.txt"))
    systems = [p.read_text(encoding="utf-8").splitlines() for p in paths]
    cases = [
        ("corpus BLEU", lambda h: sacrebleu.BLEU().corpus_score(h, [refs]).score,
         (lambda h: mojo.corpus_bleu(h, [refs]).score) if mojo else None, load_metric("bleu")),
        ("corpus chrF", lambda h: sacrebleu.CHRF().corpus_score(h, [refs]).score,
         (lambda h: mojo.corpus_chrf(h, [refs]).score) if mojo else None, load_metric("chrf")),
        ("corpus chrF++", lambda h: sacrebleu.CHRF(word_order=2).corpus_score(h, [refs]).score,
         (lambda h: mojo.corpus_chrf(h, [refs], word_order=2).score) if mojo else None,
         load_metric("chrf", word_order=2)),
    ]
    print(f"{len(systems)} systems x {len(refs)} segments ({len(systems) * len(refs)} pairs), {RUNS} runs each "
          f"(seconds for all systems; best in brackets)")
    for name, sacre, moj, ours in cases:
        times = {"sacrebleu": [], "mojo": [], "evalpipe": []}
        for _ in range(RUNS):
            t, theirs = timed(lambda: [sacre(h) for h in systems])
            times["sacrebleu"].append(t)
            if moj:
                t, mojos = timed(lambda: [moj(h) for h in systems])
                times["mojo"].append(t)
            t, mine = timed(lambda: [ours.corpus_score(h, [refs]) for h in systems])
            times["evalpipe"].append(t)
        identical = mine == theirs
        mojo_same = moj is not None and all(round(a, 2) == round(b, 2) for a, b in zip(mojos, theirs))
        best = {k: min(v) for k, v in times.items() if v}
        shown = "  ".join(f"{k} {', '.join(f'{x:.2f}' for x in v)} [{best[k]:.2f}]" for k, v in times.items() if v)
        ratios = f"vs sacrebleu {best['sacrebleu'] / best['evalpipe']:.2f}x" + (
            f", vs mojo {best['mojo'] / best['evalpipe']:.2f}x" if "mojo" in best else "")
        print(f"{name:<16} {shown}  ->  {ratios}  identical: {identical}"
              + (f"  mojo equal to 2 decimals: {mojo_same}" if moj else ""))
    one_corpus(systems, refs, sacrebleu, load_metric)
    hyps = [h for system in systems for h in system][:4000]
    refs4k = (refs * len(systems))[:4000]
    ter = load_metric("ter")
    times = {"sacrebleu": [], "evalpipe": []}
    for _ in range(RUNS):
        t, theirs = timed(lambda: sacrebleu.TER().corpus_score(hyps, [refs4k]).score)
        times["sacrebleu"].append(t)
        t, mine = timed(lambda: ter.corpus_score(hyps, [refs4k]))
        times["evalpipe"].append(t)
    print(f"{'TER, 4000 segs':<16} " + "  ".join(f"{k} {', '.join(f'{x:.2f}' for x in v)} [{min(v):.2f}]"
                                               for k, v in times.items())
          + f"  ->  vs sacrebleu {min(times['sacrebleu']) / min(times['evalpipe']):.2f}x  identical: {mine == theirs}")
    ours = [sys.executable, "-m", "evalpipe", "score-corpus", "-q", "-r", str(ref_path), "-m", "bleu", "-m", "chrf",
            "-f", "json", *map(str, paths)]
    sacre = [sys.executable, "-m", "sacrebleu", str(ref_path), "-i", *map(str, paths), "-m", "bleu", "chrf", "-f", "text"]
    t_ours, t_sacre = [], []
    for _ in range(RUNS):
        t, out = timed(lambda: subprocess.run(ours, capture_output=True, text=True, env=child_env(), check=True).stdout)
        t_ours.append(t)
        t_sacre.append(timed(lambda: subprocess.run(sacre, capture_output=True, env=child_env(), check=True))[0])
    scores = [r["score"] for r in json.loads(out)["results"]]
    print(f"{'score-corpus 23 files, BLEU+chrF, end to end':<16} evalpipe {', '.join(f'{x:.2f}' for x in t_ours)} "
          f"[{min(t_ours):.2f}]  sacrebleu CLI {', '.join(f'{x:.2f}' for x in t_sacre)} [{min(t_sacre):.2f}]  ->  "
          f"{min(t_sacre) / min(t_ours):.2f}x  ({len(scores)} scores)")


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
