"""Repeated SCORE lines (an n-best list repeats hypotheses) are answered from the dispatcher's reply cache:
the same replies as computing them, reference counts kept, errors never cached, the cache bounded."""
from __future__ import annotations

import sacrebleu

from evalpipe import load_metric
from evalpipe.protocol import dispatch
from evalpipe.protocol.dispatch import Dispatcher


def test_repeats_equal_computed_replies_and_sacrebleu(news, monkeypatch):
    refs, hyps = news["en-de.refs"][0][:20], list(news["en-de.systems"].values())[0][:20]
    lines = [f"SCORE ||| {r} ||| {h}\n".encode() for r, h in zip(refs, hyps)] * 3
    served = Dispatcher(load_metric("bleu"))
    calls = []
    original = served.metric.stats
    monkeypatch.setattr(served.metric, "stats", lambda *a: calls.append(1) or original(*a))
    replies = [served.handle(line) for line in lines]
    assert len(calls) == 20  # each distinct line computed once
    bleu = sacrebleu.BLEU()
    want = [" ".join(str(int(x)) for x in bleu._extract_corpus_statistics([h], [[r]])[0]) for r, h in zip(refs, hyps)]
    assert [r[0] for r in replies] == want * 3
    assert served.handle("INFO").pop().startswith("nrefs:1|")


def test_errors_are_not_cached_and_the_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(dispatch, "REPLY_CACHE", 3)
    served = Dispatcher(load_metric("bleu"))
    bad = b"SCORE ||| only one field\n"
    assert served.handle(bad)[0].startswith("ERROR") and bad not in served._replies
    for k in range(10):
        served.handle(f"SCORE ||| a b c ||| a b {k}\n".encode())
    assert len(served._replies) == 3
    assert served.handle(b"EVAL ||| 3 3 2 1 0 0 3 2 1 0\n") and len(served._replies) == 3
