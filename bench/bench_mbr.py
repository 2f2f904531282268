"""Minimum Bayes risk decoding (issue 28): speed against the anchors MBR users pick, and the real result.

Data: the 20 WMT21 en-de MT systems of ``../shared/data/wmt21.news`` (human references left out) as a
20-candidate pool for each of the 1,002 segments.  Every figure is measured in this run, single process:

* pairwise chrF of the 20 x 20 x 1,002 pool: ``evalpipe.mbr.pairwise_batch`` against fastchrf 0.2.1's
  ``pairwise_chrf`` (target >= 2x), both from the texts;
* aggregated chrF: ``evalpipe.mbr.aggregate_utilities`` against fastchrf's ``aggregate_chrf`` (target >= 2x);
* pairwise BLEU (effective order, sentence BLEU as mbrs uses it): against sacrebleu's ``sentence_score``
  timed on the first 40 segments' pairs and scaled to the pool (target >= 50x);
* N = 256: each of the first 60 segments gets the 20 real outputs and 236 word-level perturbations of them
  (one word dropped, duplicated, or swapped with its neighbour, drawn with seed 1) -- 256 x 256 chrF pairs a
  segment -- run in a child process whose peak resident memory is read from ``ru_maxrss``, beside the same
  process scoring N = 20: memory grows with one segment's n-grams, not with N^2 tables.

Then the real result: MBR with chrF, chrF++ and BLEU utilities, full and aggregated, the selection's corpus
BLEU and chrF against refA beside the best single system and the oracle (best sentence chrF per segment).
Run: ``python bench/bench_mbr.py [RUNS]`` (default 3 runs of the timings).
"""
from __future__ import annotations

import json
import logging
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from common import NEWS  # noqa: E402


def pool():
    folder = NEWS / "system-outputs" / "en-de"
    files = sorted(p for p in folder.glob("*.txt") if not p.stem.startswith("ref"))
    outs = [p.read_text(encoding="utf-8").splitlines() for p in files]
    return [p.stem for p in files], [[o[i] for o in outs] for i in range(len(outs[0]))], outs


def perturbed(segment, n, rng):
    out = list(segment)
    while len(out) < n:
        words = rng.choice(segment).split()
        if len(words) > 1:
            k = rng.randrange(len(words))
            kind = rng.randrange(3)
            if kind == 0:
                del words[k]
            elif kind == 1:
                words.insert(k, words[k])
            elif k + 1 < len(words):
                words[k], words[k + 1] = words[k + 1], words[k]
        out.append(" ".join(words))
    return out


def child_memory(n: int) -> None:
    """(in a child process) MBR-chrF over the first 60 segments with n candidates each; prints peak RSS MiB."""
    from evalpipe import load_metric, mbr

    _, segments, _ = pool()
    rng = random.Random(1)
    cands = [perturbed(s, n, rng) for s in segments[:60]]
    start = time.perf_counter()
    choices = mbr.decode(load_metric("chrf"), cands)
    print(json.dumps({"n": n, "seconds": time.perf_counter() - start, "pairs": sum(len(c) ** 2 for c in cands),
                      "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "chosen": sum(c.index for c in choices)}))


def timings(runs: int) -> None:
    import fastchrf
    import sacrebleu

    from evalpipe import load_metric, mbr

    _, segments, _ = pool()
    chrf, bleu = load_metric("chrf"), load_metric("bleu", effective_order=True)
    sentence_bleu = sacrebleu.BLEU(effective_order=True)
    pairs = sum(len(s) ** 2 for s in segments)
    print(f"pool: {len(segments)} segments x {len(segments[0])} candidates = {pairs} pairs")
    for run in range(1, runs + 1):
        t = time.perf_counter()
        ours = mbr.pairwise_batch(chrf, segments)
        t_ours = time.perf_counter() - t
        t = time.perf_counter()
        theirs = fastchrf.pairwise_chrf(segments, segments)
        t_fast = time.perf_counter() - t
        same = bool(np.array_equal(np.array(ours), np.array(theirs)))
        t = time.perf_counter()
        agg = mbr.aggregate_utilities(chrf, segments)
        t_agg = time.perf_counter() - t
        t = time.perf_counter()
        fagg = fastchrf.aggregate_chrf(segments, segments)
        t_fagg = time.perf_counter() - t
        close = float(np.abs(np.array(agg) - np.array(fagg)).max())
        t = time.perf_counter()
        mbr.pairwise_batch(bleu, segments)
        t_bleu = time.perf_counter() - t
        logging.disable(logging.WARNING)
        t = time.perf_counter()
        sample = segments[:40]
        for seg in sample:
            for h in seg:
                for r in seg:
                    sentence_bleu.sentence_score(h, [r])
        t_sb = (time.perf_counter() - t) / sum(len(s) ** 2 for s in sample) * pairs
        print(f"run {run}: pairwise chrF evalpipe {t_ours:.2f}s fastchrf {t_fast:.2f}s ({t_fast / t_ours:.1f}x, "
              f"identical: {same}) | aggregated chrF evalpipe {t_agg:.2f}s fastchrf {t_fagg:.2f}s "
              f"({t_fagg / t_agg:.1f}x, max diff {close:.1e}) | pairwise BLEU evalpipe {t_bleu:.2f}s sacrebleu "
              f"sentence_score {t_sb:.1f}s scaled from 40 segments ({t_sb / t_bleu:.0f}x)")
    for n in (20, 256):
        done = subprocess.run([sys.executable, __file__, "--child", str(n)], capture_output=True, text=True, check=True)
        doc = json.loads(done.stdout)
        print(f"N = {n}: 60 segments, {doc['pairs']} chrF pairs in {doc['seconds']:.2f}s, peak RSS {doc['peak_mib']:.0f} "
              f"MiB (the whole process)")


def real_result() -> None:
    import sacrebleu

    from evalpipe import load_metric, mbr

    names, segments, outs = pool()
    ref = (NEWS / "references" / "en-de.refA.txt").read_text(encoding="utf-8").splitlines()

    def corpus(hyps):
        return sacrebleu.corpus_bleu(hyps, [ref]).score, sacrebleu.corpus_chrf(hyps, [ref]).score

    rows = []
    for label, name, options in (("chrF", "chrf", {}), ("chrF++", "chrf", {"word_order": 2}),
                                 ("BLEU", "bleu", {"effective_order": True})):
        for aggregate in (False, True):
            choices = mbr.decode(load_metric(name, **options), segments, aggregate=aggregate)
            rows.append((f"MBR, {label} utility{', aggregated' if aggregate else ''}", *corpus([c.text for c in choices])))
    best = max(range(len(names)), key=lambda k: corpus(outs[k])[0])
    rows.append((f"best single system by BLEU ({names[best]})", *corpus(outs[best])))
    sentence = sacrebleu.CHRF()
    oracle = [max(seg, key=lambda h, r=r: sentence.sentence_score(h, [r]).score) for seg, r in zip(segments, ref)]
    rows.append(("oracle (best sentence chrF per segment)", *corpus(oracle)))
    print(f"\n{len(segments)} segments x {len(names)} WMT21 en-de systems, against refA\n")
    print("| selection | BLEU | chrF |\n|---|---|---|")
    for label, b, c in rows:
        print(f"| {label} | {b:.2f} | {c:.2f} |")


def main(runs: int = 3) -> None:
    if not (NEWS / "system-outputs" / "en-de").is_dir():
        print(f"MBR benchmark skipped: no {NEWS}")
        return
    timings(runs)
    real_result()


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child_memory(int(sys.argv[2]))
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
