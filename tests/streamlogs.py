"""simulstream-format logs of long-form talks built from real data, for the streaming tests and bench.

Text is real: the two WMT21 TED talks of ``tests/data/wmt21.tedtalks`` (reference A, sources, real
system outputs; documents give the talks), or any MTME-layout test set with documents.  The clock is
made up and documented here: a reference sentence lasts 0.32 s per source word + 0.5 s, sentences
follow each other with 0.2 s pauses; output word j of a hypothesis sentence of n words becomes
ready at ``offset + duration * min(1, (j + k) / n)`` (a wait-k-like lag, k = 2); a step is logged every
``chunk`` seconds of audio with the tokens ready by then and a computation time drawn in [0.05, 0.6) s.
Retractions are drawn too: with probability ``retract`` a step ends with 1-3 draft tokens (words of
another system's translation of the same sentence, or a cut-off prefix of the next word) that the next
step deletes before going on.  Detokenizers: ``word`` (tokens are words), ``spm`` (``▁``-prefixed
pieces, a word sometimes split in two pieces that may land in different steps), ``char`` (characters,
spaces included).  Two talks interleave; lines without an id are sprinkled in.
"""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Dict, List, Sequence, Tuple

TED = Path(__file__).parent / "data" / "wmt21.tedtalks"


def ted_talks(root: Path = TED, system: str = "Online-W", other: str = "Nemo", pair: str = "en-de"):
    """[(talk name, sources, references, hypotheses, other system's hypotheses)] by document."""
    docs = [line.split("\t")[0] for line in (root / "documents" / f"{pair}.docs").read_text("utf-8").splitlines()]
    src = (root / "sources" / f"{pair}.txt").read_text("utf-8").splitlines()
    ref = (root / "references" / f"{pair}.refA.txt").read_text("utf-8").splitlines()
    hyp = (root / "system-outputs" / pair / f"{system}.txt").read_text("utf-8").splitlines()
    alt = (root / "system-outputs" / pair / f"{other}.txt").read_text("utf-8").splitlines()
    talks: Dict[str, List[int]] = {}
    for i, d in enumerate(docs):
        talks.setdefault(d, []).append(i)
    return [(name.replace(" ", "_"), [src[i] for i in ix], [ref[i] for i in ix], [hyp[i] for i in ix],
             [alt[i] for i in ix]) for name, ix in talks.items()]


def _pieces(word: str, detok: str, rng: random.Random, first: bool) -> List[str]:
    if detok == "word":
        return [word]
    if detok == "char":
        return ([] if first else [" "]) + list(word)
    if len(word) > 3 and rng.random() < 0.4:
        k = rng.randrange(1, len(word) - 1)
        return ["\u2581" + word[:k], word[k:]]
    return ["\u2581" + word]


def make_talk_log(name: str, sources: Sequence[str], hyps: Sequence[str], alts: Sequence[str], ident: int,
                  detok: str = "word", seed: int = 0, chunk: float = 1.0, retract: float = 0.25,
                  lag: int = 2) -> Tuple[List[dict], List[dict]]:
    """(log records of one talk, its audio-definition entries)."""
    rng = random.Random(f"{name}/{seed}/{detok}")
    entries, ready = [], []  # ready: (time, tokens of one word, alternatives for drafts)
    t, first = 0.0, True
    for s, h, a in zip(sources, hyps, alts):
        duration = round(0.32 * len(s.split()) + 0.5, 2)
        entries.append({"wav": f"{name}.wav", "offset": round(t, 2), "duration": duration})
        words = h.split()
        for j, w in enumerate(words):
            when = t + duration * min(1.0, (j + lag) / max(len(words), 1))
            ready.append((when, _pieces(w, detok, rng, first), a.split()))
            first = False
        t = round(t + duration + 0.2, 2)
    end = t
    records = [{"id": ident, "metadata": {"wav_name": f"/audio/{name}.wav"}}]
    audio, k, pending = 0.0, 0, []
    while audio < end or k < len(ready):
        audio = min(round(audio + chunk, 3), end) if audio < end else end
        new: List[str] = []
        while k < len(ready) and (ready[k][0] <= audio or audio >= end):
            new += ready[k][1]
            k += 1
        draft: List[str] = []
        if audio < end and k < len(ready) and rng.random() < retract:
            if rng.random() < 0.5 and len(ready[k][1][0]) > 2:
                draft = [ready[k][1][0][: len(ready[k][1][0]) // 2]]  # a cut-off prefix of the next token
            else:
                alts = ready[k][2] or ["äh"]
                draft = [p for w in rng.sample(alts, min(len(alts), rng.randint(1, 3)))
                         for p in _pieces(w, detok, rng, False)]
        records.append({"id": ident, "total_audio_processed": audio,
                        "computation_time": round(rng.uniform(0.05, 0.6), 4),
                        "generated_tokens": new + draft, "deleted_tokens": pending})
        pending = draft
        if audio >= end and k >= len(ready):
            break
    if pending:  # the last step retracts what is still a draft
        records.append({"id": ident, "total_audio_processed": end, "computation_time": 0.01,
                        "generated_tokens": [], "deleted_tokens": pending})
    return records, entries


def write_case(folder: Path, talks, detok: str = "word", seed: int = 0, **kwargs) -> Dict[str, str]:
    """Write log, audio definition (YAML), references and eval config of ``talks`` in ``folder``;
    returns their paths.  The talks' step lines interleave."""
    folder.mkdir(parents=True, exist_ok=True)
    per_talk, entries, refs = [], [], []
    for ident, (name, src, ref, hyp, alt) in enumerate(talks):
        records, defs = make_talk_log(name, src, hyp, alt, ident, detok, seed, **kwargs)
        per_talk.append(records)
        entries += defs
        refs += ref
    lines = [json.dumps({"info": "server started"})]
    for records in per_talk:
        lines.append(json.dumps(records[0], ensure_ascii=False))
    queues = [r[1:] for r in per_talk]
    rng = random.Random(seed)
    while any(queues):
        q = rng.choice([q for q in queues if q])
        lines.append(json.dumps(q.pop(0), ensure_ascii=False))
    paths = {"log": folder / "metrics.jsonl", "audio": folder / "audio.yaml", "ref": folder / "ref.txt",
             "config": folder / "eval.yaml"}
    paths["log"].write_text("\n".join(lines) + "\n", "utf-8")
    paths["audio"].write_text("".join(f"- {{duration: {e['duration']}, offset: {e['offset']}, wav: {e['wav']}}}\n"
                                      for e in entries), "utf-8")
    paths["ref"].write_text("\n".join(refs) + "\n", "utf-8")
    paths["config"].write_text(f"detokenizer_type: simuleval\nlatency_unit: {detok}\n", "utf-8")
    return {k: str(v) for k, v in paths.items()}
