"""The serving loop with in-memory streams: the reply lines of every request, errors included."""
from __future__ import annotations

import io

import pytest
import sacrebleu

from evalpipe import load_metric
from evalpipe.protocol.codec import parse_request
from evalpipe.protocol.dispatch import Dispatcher
from evalpipe.protocol.loop import serve
from evalpipe.sufficient_stats.vectors import format_stats, parse_stats, sum_stats


def run(metric_name, requests, **options):
    data = b"".join(r if isinstance(r, bytes) else r.encode("utf-8") + b"\n" for r in requests)
    out = io.BytesIO()
    served = serve(load_metric(metric_name, **options), io.BytesIO(data), out)
    replies = out.getvalue().decode("utf-8").split("\n")
    assert replies[-1] == ""
    return served, replies[:-1]


def test_score_then_eval_equals_sacrebleu():
    hyps = ["the cat sat on the mat", "a quick brown fox", "hello world"]
    refs = [["the cat is on the mat", "a cat sat on a mat"], ["the quick brown fox", "a fast brown fox"],
            ["hello , world", "hi world"]]
    served, replies = run("bleu", [" ||| ".join(["SCORE", *r, h]) for h, r in zip(hyps, refs)])
    assert served == 3 and len(replies) == 3
    total = sum_stats(parse_stats(r) for r in replies)
    _, (score,) = run("bleu", [f"EVAL ||| {format_stats(total)}"])
    expected = sacrebleu.BLEU().corpus_score(hyps, [list(x) for x in zip(*refs)]).score
    assert float(score) == expected
    assert score == repr(expected)


def test_integers_written_without_decimal_point():
    _, (reply,) = run("bleu", ["SCORE ||| a b c ||| a b c"])
    assert reply == "3 3 3 2 1 0 3 2 1 0"


def test_errors_are_one_line_each_and_loop_goes_on():
    requests = [
        "FOO ||| bar",
        "SCORE ||| only-one-field",
        "EVAL ||| 1 2 3",
        "EVAL ||| 1 2 x 4 5 6 7 8 9 10",
        "EVAL ||| ",
        b"SCORE ||| caf\xe9 ||| cafe\n",
        "",
        "SCORE ||| a b ||| a b",
    ]
    served, replies = run("bleu", requests)
    assert served == len(requests) == len(replies)
    for reply in replies[:-1]:
        assert reply.startswith("ERROR ||| "), reply
    assert "expected a request starting with SCORE, EVAL, INFO" in replies[0]
    assert "at least one reference" in replies[1]
    assert "expects 10 stats" in replies[2] and "got 3" in replies[2]
    assert "expected a number, got 'x'" in replies[3]
    assert "UTF-8" in replies[5]
    assert replies[-1] == "2 2 2 1 0 0 2 1 0 0"


def test_crlf_spaces_and_cdec_handshake():
    _, replies = run("bleu", [b"SCORE |||  a b c  |||a b c \r\n",
                              "SCORE ||| Reference initialization string . ||| Testing initialization string ."])
    assert replies[0] == "3 3 3 2 1 0 3 2 1 0"
    assert len(parse_stats(replies[1])) == 10


def test_meteor_style_integer_eval_and_several_vectors():
    """One vector: one line.  n vectors: n lines, then the score of their sum (METEOR 1.5's answer)."""
    one, two = [3, 3, 3, 2, 1, 0, 3, 2, 1, 0], [3, 3, 3, 2, 1, 1, 3, 2, 1, 1]
    _, replies = run("bleu", [f"EVAL ||| {format_stats(one)}", f"EVAL ||| {format_stats(one)} ||| {format_stats(two)}"])
    bleu = load_metric("bleu")
    assert replies == [repr(bleu.score(one)), repr(bleu.score(one)), repr(bleu.score(two)),
                       repr(bleu.score(sum_stats([one, two])))]


def test_pycocoevalcap_dialect_answers_the_aggregate_also_for_one_vector():
    vector = [3, 3, 3, 2, 1, 0, 3, 2, 1, 0]
    data = f"EVAL ||| {format_stats(vector)}\nEVAL ||| x\n".encode()
    out = io.BytesIO()
    serve(load_metric("bleu"), io.BytesIO(data), out, dialect="pycocoevalcap")
    score = repr(load_metric("bleu").score(vector))
    first, second, error = out.getvalue().decode().splitlines()
    assert (first, second) == (score, score) and error.startswith("ERROR ||| ")


@pytest.mark.parametrize("metric,vector,message", [
    ("bleu", "3 3 4 2 1 0 3 2 1 0", "correct_1=4 > total_1=3"),
    ("bleu", "3 -1 3 2 1 0 3 2 1 0", "ref_len=-1"),
    ("chrf", " ".join(["2 2 3"] + ["0 0 0"] * 5), "c1_match=3 > c1_hyp=2"),
    ("ter", "-1 4", "num_edits=-1"),
    ("bleu-ter", "3 3 3 2 1 0 3 2 1 0 -2 4", "num_edits=-2")])
def test_strict_stats_rejects_vectors_no_segment_can_produce(metric, vector, message):
    good = "3 3 3 2 1 0 3 2 1 0 1 4" if metric == "bleu-ter" else "3 3 3 2 1 0 3 2 1 0"
    requests = [f"EVAL ||| {vector}"] + ([f"EVAL ||| {good}"] if metric.startswith("bleu") else [])
    lenient = run(metric, requests)[1]
    data = "".join(r + "\n" for r in requests).encode()
    out = io.BytesIO()
    serve(load_metric(metric), io.BytesIO(data), out, strict_stats=True)
    strict = out.getvalue().decode().splitlines()
    assert not lenient[0].startswith("ERROR") and strict[0].startswith("ERROR ||| EVAL vector 1: ")
    assert message in strict[0] and strict[1:] == lenient[1:]


def test_on_error_exit_stops_at_the_first_bad_request_after_flushing_the_answers():
    from evalpipe.protocol.loop import RequestFailed

    data = b"SCORE ||| a b c ||| a b c\nSCORE ||| only one field\nSCORE ||| a ||| a\n"
    out = io.BytesIO()
    with pytest.raises(RequestFailed, match="request 2 could not be served: SCORE expects"):
        serve(load_metric("bleu"), io.BytesIO(data), out, on_error="exit")
    assert out.getvalue() == b"3 3 3 2 1 0 3 2 1 0\n"


def test_info_names_signature_and_fields():
    _, (reply,) = run("chrf", ["INFO"], word_order=2)
    signature, fields = reply.split(" ||| ")
    assert "nw:2" in signature and fields.split()[:3] == ["c1_hyp", "c1_ref", "c1_match"]


def test_combination_bleu_minus_ter():
    _, replies = run("bleu-ter", ["SCORE ||| a b c d ||| a b c e"])
    stats = parse_stats(replies[0])
    assert len(stats) == 12
    _, (score,) = run("bleu-ter", [f"EVAL ||| {format_stats(stats)}"])
    bleu, ter = load_metric("bleu"), load_metric("ter")
    assert float(score) == pytest.approx((bleu.score(stats[:10]) - ter.score(stats[10:])) / 2)


def test_accuracy_length_mismatch_is_an_error_reply():
    _, replies = run("accuracy", ["SCORE ||| A B C ||| A B", "SCORE ||| A B ||| A C"])
    assert replies[0].startswith("ERROR ||| ") and "expected 3 predicted labels" in replies[0]
    assert replies[1] == "1 2 1"


def test_parse_request_strips_fields():
    assert parse_request(" SCORE |||  x ||| y ") == ("SCORE", ["x", "y"])


def test_dispatcher_turns_plugin_bugs_into_internal_errors_logged_with_traceback(caplog):
    class Broken:
        num_stats = 1
        stats_fields = ("x",)
        hypothesis_kind = "text"

        def stats(self, hypothesis, references):
            raise RuntimeError("boom\nsecond line")

    with caplog.at_level("ERROR", logger="evalpipe.protocol.dispatch"):
        reply = Dispatcher(Broken()).handle("SCORE ||| a ||| b")
    assert reply == ["ERROR ||| internal error: RuntimeError: boom second line"]
    assert "Traceback" in caplog.text and "RuntimeError: boom" in caplog.text


class Pieces(io.RawIOBase):
    """A stream whose reads return the given pieces one by one (what a pipe hands over), recording
    how many replies had been written before each read."""

    def __init__(self, pieces, out):
        self.pieces, self.out, self.written_before_read = list(pieces), out, []

    def read1(self, size=-1):
        self.written_before_read.append(self.out.getvalue().count(b"\n"))
        return self.pieces.pop(0) if self.pieces else b""


@pytest.mark.parametrize("cut", [1, 2, 7, 64, 10 ** 6])
def test_requests_cut_anywhere_get_the_replies_of_whole_lines(cut):
    """However the input arrives -- lines split across reads, several lines in one read, a last line
    without a line end, empty and over-long lines -- the replies are those of the lines one by one,
    and every reply to a finished line is written before the next read."""
    lines = [b"SCORE ||| a b c ||| a b c", b"", b"SCORE ||| " + b"x " * 40 + b"||| x", b"SCORE ||| the cat ||| a cat",
             b"SCORE ||| a b c ||| a b c", b"EVAL ||| 3 3 3 2 1 0 3 2 1 0", b"SCORE ||| a b ||| a b"]
    data = b"\n".join(lines)  # no line end after the last
    want = []
    for line in lines:
        out = io.BytesIO()
        serve(load_metric("bleu"), io.BytesIO(line + b"\n"), out, max_line_bytes=60)
        want.append(out.getvalue())
    out = io.BytesIO()
    stream = Pieces([data[i:i + cut] for i in range(0, len(data), cut)], out)
    assert serve(load_metric("bleu"), stream, out, max_line_bytes=60) == len(lines)
    assert out.getvalue() == b"".join(want)
    assert b"at most 60 bytes, got 96 bytes" in want[2]  # 95 bytes and the line end
    ends = [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]  # bytes read when each line was complete
    for k, count in enumerate(stream.written_before_read):
        read = min(k * cut, len(data))
        assert count >= sum(end <= read for end in ends)
