"""`evalpipe serve` through a real pipe: replies arrive flushed, one per request, with a timeout.

PYTHONUNBUFFERED is removed from the child's environment so a missing flush would hang the test.
"""
from __future__ import annotations

import selectors
import subprocess
import sys

import pytest
import sacrebleu

from conftest import child_env, script
from evalpipe.protocol import Client, ProtocolError
from evalpipe.sufficient_stats.vectors import format_stats, parse_stats, sum_stats

TIMEOUT = 30


def read_line(proc, timeout=TIMEOUT):
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    if not sel.select(timeout):
        proc.kill()
        raise AssertionError(f"no reply within {timeout}s: the server did not flush")
    return proc.stdout.readline().decode("utf-8").rstrip("\n")


def start(*args):
    # stdout unbuffered on our side: a buffered reader could take two reply lines from the pipe at once and
    # leave the second where read_line's select() cannot see it (a false "did not flush" on a busy machine)
    return subprocess.Popen([script("evalpipe"), "serve", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=child_env(), bufsize=0)


def test_synchronous_round_trips_through_the_console_script():
    proc = start("bleu")
    hyps = ["the cat sat on the mat", "", "a b c d"]
    refs = ["the cat is on the mat", "x", "a b c e"]
    rows = []
    for h, r in zip(hyps, refs):
        proc.stdin.write(f"SCORE ||| {r} ||| {h}\n".encode())
        proc.stdin.flush()
        rows.append(parse_stats(read_line(proc)))
    proc.stdin.write(b"NOPE\n")
    proc.stdin.flush()
    assert read_line(proc).startswith("ERROR ||| ")
    proc.stdin.write(f"EVAL ||| {format_stats(sum_stats(rows))}\n".encode())
    proc.stdin.flush()
    assert float(read_line(proc)) == sacrebleu.BLEU().corpus_score(hyps, [refs]).score
    proc.stdin.close()
    assert proc.wait(timeout=TIMEOUT) == 0
    assert proc.stdout.read() == b""


def test_closed_reader_ends_quietly():
    proc = start("bleu")
    proc.stdout.close()
    proc.stdin.write(b"SCORE ||| a ||| a\n" * 2000)
    try:
        proc.stdin.close()
    except BrokenPipeError:
        pass
    assert proc.wait(timeout=TIMEOUT) == 0
    assert b"Traceback" not in proc.stderr.read()


def test_unknown_metric_is_a_usage_error():
    proc = start("no_such_metric")
    proc.stdin.close()
    assert proc.wait(timeout=TIMEOUT) == 2
    err = proc.stderr.read().decode()
    assert "unknown plugin 'no_such_metric'" in err and "bleu" in err


def test_python_client(monkeypatch):
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)
    with Client("chrf", {"word_order": 2}) as client:
        stats = client.score("the cat sat", ["the cat sits", "a cat sat"])
        assert client.evaluate(stats) == sacrebleu.CHRF(word_order=2).sentence_score(
            "the cat sat", ["the cat sits", "a cat sat"]).score
        assert "nw:2" in client.info()
        with pytest.raises(ProtocolError, match="expects"):
            client.evaluate([1, 2])
        assert client.evaluate(stats) > 0  # still serving after the error


def test_on_error_exit_ends_the_process_non_zero_for_a_cdec_style_client():
    """cdec turns an ERROR reply into empty statistics (a silent zero); with --on-error exit the
    client instead sees end of file and the process's non-zero status, after the answered requests."""
    proc = start("bleu", "--on-error", "exit")
    proc.stdin.write(b"SCORE ||| a b c ||| a b c\n")
    proc.stdin.flush()
    assert read_line(proc) == "3 3 3 2 1 0 3 2 1 0"
    proc.stdin.write(b"SCORE ||| a b c\n")  # a hypothesis without a reference
    proc.stdin.flush()
    assert proc.stdout.readline() == b""
    assert proc.wait(timeout=TIMEOUT) == 1
    assert b"request 2 could not be served" in proc.stderr.read()


def peak_rss_kib(proc):
    with open(f"/proc/{proc.pid}/status") as status:
        return int(next(line for line in status if line.startswith("VmHWM:")).split()[1])


def test_a_100_mb_line_gets_an_error_and_the_server_stays_small():
    """A 100 MB request line is answered with an error (read and dropped in pieces, never held whole);
    the next request is served; the server's peak RSS grows by far less than the line's size."""
    baseline = start("bleu")
    baseline.stdin.write(b"SCORE ||| a b c ||| a b c\n")
    baseline.stdin.flush()
    assert read_line(baseline) == "3 3 3 2 1 0 3 2 1 0"
    proc = start("bleu")
    chunk = b"x " * (1 << 20)  # 2 MiB
    for _ in range(50):
        proc.stdin.write(chunk)
    proc.stdin.write(b"\nSCORE ||| a b c ||| a b c\n")
    proc.stdin.flush()
    reply = read_line(proc, timeout=120)
    assert reply.startswith("ERROR ||| expected a request line of at most") and "got 104857601 bytes" in reply
    assert read_line(proc) == "3 3 3 2 1 0 3 2 1 0"
    growth = peak_rss_kib(proc) - peak_rss_kib(baseline)
    for p in (proc, baseline):
        p.stdin.close()
        assert p.wait(timeout=TIMEOUT) == 0
    print(f"peak RSS growth for a 100 MB line: {growth} KiB")
    assert growth < 48 * 1024, f"peak RSS grew by {growth} KiB for a 100 MB line (limit 16 MiB)"
