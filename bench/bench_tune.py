"""Issue 12 benchmark: `evalpipe tune` on real n-best lists built from WMT21 en-de (../shared/data).

* n-best lines scored per second through the pipe by the tuner (SCORE requests pipelined by
  ``Client.score_many``), against the same lines scored one request at a time (``Client.score``), and
  against sacrebleu computing the same BLEU stats in process (``BLEU._extract_corpus_statistics`` per
  line, the anchor's own sentence path) -- every stats vector identical;
* MERT on the full 1002-segment set (every MT system's output a hypothesis; the demo's features),
  tuned on the first half, held-out BLEU reported beside the best single system.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from common import NEWS

SYSTEMS = ["BUPT_rush", "Facebook-AI", "HuaweiTSC", "ICL", "NVIDIA-NeMo", "Online-W", "UEdin", "VolcTrans-AT",
           "VolcTrans-GLAT", "eTranslation"]


def read(path: Path):
    return path.read_text(encoding="utf-8").splitlines()


def main(scale: float = 1.0):
    import sacrebleu

    from evalpipe.protocol import Client
    from evalpipe.tune.demo import demo_nbest_lines
    from evalpipe.tune.mert import corpus_score, mert, nbest_stats
    from evalpipe.tune.nbest import parse_nbest

    n = max(50, int(1002 * scale))
    sources = read(NEWS / "sources" / "en-de.txt")[:n]
    refs = read(NEWS / "references" / "en-de.refA.txt")[:n]
    systems = {name: read(NEWS / "system-outputs" / "en-de" / f"{name}.txt")[:n] for name in SYSTEMS}
    nbest = parse_nbest(demo_nbest_lines(sources, systems), "<bench>")
    pairs = [(h, [refs[sid]]) for sid in nbest.ids for h in nbest.hypotheses[sid]]
    with Client("bleu", timeout=600) as client:
        client.score_many(pairs[:100])  # start-up outside the timing
        start = time.perf_counter()
        stats = nbest_stats(nbest, [refs], client)
        t_pipelined = time.perf_counter() - start
        start = time.perf_counter()
        one_by_one = [client.score(h, r) for h, r in pairs]
        t_sync = time.perf_counter() - start
        bleu = sacrebleu.BLEU()
        start = time.perf_counter()
        theirs = [bleu._extract_corpus_statistics([h], [r]) for h, r in pairs]
        t_sacre = time.perf_counter() - start
        ours = [row for sid in nbest.ids for row in stats[sid].tolist()]
        same = ours == [list(map(float, x)) for x in one_by_one] == [list(map(float, t[0])) for t in theirs]
        lines = len(pairs)
        print(f"{f'n-best lines scored, {lines} lines (BLEU)':<58} pipelined {lines / t_pipelined:8.0f} lines/s  "
              f"one by one {lines / t_sync:8.0f} lines/s  sacrebleu in process {lines / t_sacre:8.0f} lines/s  "
              f"ratio {t_sacre / t_pipelined:5.2f}x  identical: {same}")
        dev = [i for i in nbest.ids if i < n // 2]
        test = [i for i in nbest.ids if i >= n // 2]
        start = time.perf_counter()
        result = mert(nbest, stats, client, restarts=5, seed=0, ids=dev)
        t_mert = time.perf_counter() - start
        w = np.array([result.weights[f] for f in nbest.feature_names])
        tuned = corpus_score(stats, nbest.features, test, w, client)
        uniform = corpus_score(stats, nbest.features, test, np.ones(len(w)), client)
        single = max(client.evaluate_many([np.sum([stats[s][k] for s in test], axis=0).tolist()])[1]
                     for k in range(len(SYSTEMS)))
    print(f"{f'MERT, {len(dev)} tuning segments x {len(SYSTEMS)} hyps, 5 restarts':<58} {t_mert:6.1f} s;  held-out BLEU "
          f"tuned {tuned:.2f}, uniform weights {uniform:.2f}, best single system {single:.2f}")


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
