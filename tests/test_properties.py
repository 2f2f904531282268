"""Property-based tests (Hypothesis) of the invariants that define evalpipe.

Profiles (tests/conftest.py): ``ci`` (the default: few examples, fast) and ``long``
(``HYPOTHESIS_PROFILE=long pytest tests/test_properties.py``: many examples, for a run on demand).
"""
from __future__ import annotations

import io
import tempfile

import pytest

import sacrebleu
from hypothesis import given
from hypothesis import strategies as st

from evalpipe import load_metric
from evalpipe.corpus import line_blocks, read_stream
from evalpipe.errors import InputError
from evalpipe.engines.base import merge
from evalpipe.inputs import SimulPairs, TextPairs
from evalpipe.protocol.codec import decode_line
from evalpipe.protocol.dispatch import Dispatcher
from evalpipe.protocol.loop import serve
from evalpipe.sufficient_stats import SimulHypothesis
from evalpipe.sufficient_stats.vectors import format_stats, parse_stats, sum_stats


WORDS = st.sampled_from("the a cat dog sat on mat . , ! Haus ß é 猫 🙂 x y z 1 2".split())
SENTENCE = st.lists(WORDS, min_size=0, max_size=12).map(" ".join)
PAIRS = st.lists(st.tuples(SENTENCE, SENTENCE.filter(str.strip)), min_size=1, max_size=30)
TEXT_METRICS = st.sampled_from(["bleu", "chrf", "ter", "token_f1", "bleu-ter", "0.7*bleu+0.3*chrf"])
NUMBER = st.one_of(st.integers(-10**30, 10**30), st.floats(allow_nan=False, allow_infinity=False))


def cuts(n, data):
    """Random cut points of range(n) into contiguous chunks."""
    points = sorted(set(data.draw(st.lists(st.integers(0, n), max_size=6))))
    return [0] + points + [n]


@given(PAIRS, TEXT_METRICS)
def test_stats_of_a_concatenation_are_the_sum_of_the_stats(pairs, name):
    metric = load_metric(name)
    hyps, refs = [h for h, _ in pairs], [r for _, r in pairs]
    half = len(pairs) // 2
    whole = sum_stats(metric.corpus_stats(hyps, [refs]), metric.num_stats)
    parts = [metric.corpus_partial(hyps[a:b], [refs[a:b]]) for a, b in ((0, half), (half, len(pairs)))]
    assert whole == merge(parts, metric.num_stats)  # exact partial sums (float stats are not re-rounded)
    assert whole == sum_stats([metric.stats(h, [r]) for h, r in pairs], metric.num_stats)


@given(PAIRS, TEXT_METRICS, st.data())
def test_any_split_into_chunks_gives_the_same_totals(pairs, name, data):
    metric = load_metric(name)
    text = TextPairs([h for h, _ in pairs], [[r for _, r in pairs]])
    bounds = cuts(len(pairs), data)
    chunks = [TextPairs(text.hypotheses[a:b], [text.references[0][a:b]]) for a, b in zip(bounds, bounds[1:])]
    assert merge([c.partial(metric) for c in chunks], metric.num_stats) == text.partial(metric).finish()
    assert merge([c.partial(metric) for c in text.split(data.draw(st.integers(1, 8)))], metric.num_stats) \
        == sum_stats(text.rows(metric), metric.num_stats)


@given(st.lists(NUMBER, min_size=1, max_size=20))
def test_parse_of_format_is_the_identity(stats):
    assert parse_stats(format_stats(stats)) == stats


@given(PAIRS)
def test_eval_of_summed_score_replies_is_sacrebleus_corpus_score(pairs):
    dispatcher = Dispatcher(load_metric("bleu"))
    rows = [parse_stats(dispatcher.handle(f"SCORE ||| {r} ||| {h}")[0]) for h, r in pairs]
    (reply,) = dispatcher.handle(f"EVAL ||| {format_stats(sum_stats(rows))}")
    hyps, refs = [h for h, _ in pairs], [r for _, r in pairs]
    assert float(reply) == sacrebleu.BLEU().corpus_score(hyps, [refs]).score


@given(st.lists(st.binary(max_size=200).map(lambda b: b.replace(b"\n", b"")), min_size=1, max_size=20),
       st.sampled_from(["bleu", "chrf", "ter", "al", "bleu-ter"]))
def test_every_request_without_a_newline_gets_its_reply_lines_and_the_loop_survives(lines, name):
    """One reply line per request -- n + 1 for an EVAL of n >= 2 vectors that could be scored -- and
    nothing escapes the loop."""
    metric = load_metric(name)
    out = io.BytesIO()
    data = b"".join(line + b"\n" for line in lines)
    served = serve(metric, io.BytesIO(data), out)
    replies = out.getvalue().split(b"\n")[:-1]
    dispatcher = Dispatcher(metric)
    expected = [len(dispatcher.handle(line)) for line in lines]
    assert served == len(lines) and len(replies) == sum(expected)
    for line, count in zip(lines, expected):
        assert count == 1 or (line.strip().upper().startswith(b"EVAL") and count == line.count(b"|||") + 1)


DELAYS = st.lists(st.integers(1, 30), min_size=0, max_size=25).map(sorted)


@given(st.lists(st.tuples(DELAYS, st.integers(1, 30), SENTENCE.filter(str.strip)), min_size=1, max_size=40),
       st.sampled_from(["al", "laal", "dal", "ap", "start_offset", "end_offset", "atd"]), st.data())
def test_latency_totals_do_not_depend_on_how_a_log_is_split(records, name, data):
    metric = load_metric(name, target_length="max") if name in ("al", "ap") else load_metric(name)
    hyps = [SimulHypothesis(d, max(s, d[-1] if d else 1)) for d, s, _ in records]
    pairs = SimulPairs(hyps, [[r for _, _, r in records]])
    bounds = cuts(len(records), data)
    chunks = [SimulPairs(hyps[a:b], [pairs.references[0][a:b]]) for a, b in zip(bounds, bounds[1:])]
    assert merge([c.partial(metric) for c in chunks], metric.num_stats) == pairs.partial(metric).finish() \
        == sum_stats(pairs.rows(metric), metric.num_stats)


@given(PAIRS, st.sampled_from(["bleu-ter", "0.7*bleu+0.3*chrf", "bleu-0.1*ter+chrf"]))
def test_combination_stats_are_the_concatenation_of_the_members(pairs, spec):
    combination = load_metric(spec)
    for h, r in pairs:
        assert combination.stats(h, [r]) == [v for _, _, m in combination.members for v in m.stats(h, [r])]


def test_block_with_fewer_units_than_the_ngram_order():
    """Found by the properties above: a block of fewer tokens than BLEU's order crashed the batched
    n-gram path (``score-corpus`` on a one-line corpus with an empty hypothesis)."""
    bleu = load_metric("bleu")
    for hyps, refs in (([""], ["the the"]), (["a"], ["a b c"]), (["", ""], ["x", "y"])):
        stats = sum_stats(bleu.corpus_stats(hyps, [refs]), bleu.num_stats)
        assert bleu.score(stats) == sacrebleu.BLEU().corpus_score(hyps, [refs]).score
        assert stats == sum_stats([bleu.stats(h, [r]) for h, r in zip(hyps, refs)], bleu.num_stats)


@given(st.lists(st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"")), max_size=8),
       st.sampled_from([b"\n", b"\r\n", b"\r\r\n", b""]), st.sampled_from([b"", b"\xc3\xa9", b"\xc3", b"\r", b"\xff"]),
       st.integers(1, 3))
def test_lines_decoded_in_blocks_are_the_lines_decoded_one_by_one(pieces, end, extra, size):
    """corpus.line_blocks / read_stream decode a block at once: the same lines as decode_line on each, and on
    bad UTF-8 the same error naming the first bad line."""
    data = b"".join(p + end for p in pieces) + extra
    raw = io.BytesIO(data).readlines()
    try:
        want = [decode_line(line, "f", number) for number, line in enumerate(raw, 1)]
    except InputError as exc:
        with pytest.raises(InputError) as got:
            read_stream(io.BytesIO(data), "f", allow_empty=True)
        assert str(got.value) == str(exc)
        return
    assert read_stream(io.BytesIO(data), "f", allow_empty=True) == want
    with tempfile.NamedTemporaryFile() as handle:
        handle.write(data)
        handle.flush()
        assert [line for block in line_blocks(handle.name, size) for line in block] == want
