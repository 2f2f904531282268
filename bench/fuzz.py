"""Fuzz harness (issue 16): ``python bench/fuzz.py [SCALE]`` -- exits non-zero on any finding.

1. Every metric's ``evalpipe serve`` through a real pipe (1,000,000 generated requests in total at scale
   1): random bytes, invalid UTF-8, NUL, long lines, NaN/inf/hex and wrong lengths in EVAL, U+2028 and
   U+0085 inside fields, several vectors, with valid SCORE requests interleaved whose replies must equal
   sacrebleu's own statistics (bleu, chrf, ter, bleu-ter) or, for metrics sacrebleu lacks, evalpipe's
   in this process.  Counted: requests, crashes (the server
   died), hangs (no reply within 60 s), lost or extra reply lines (against the reply count of the
   request), wrong answers (valid requests), tracebacks on stdout.
2. The simultaneous HTTP server on loopback: malformed request lines and headers, bad and huge bodies,
   unknown paths, out-of-range and non-integer ids, hypotheses after ``</s>``, clients that disconnect
   mid-request, slow clients; after each one the server must still answer ``GET /`` correctly.
3. The file readers in process on mutated real files: MTME score files, SimulEval instance logs,
   n-best lists, text corpora, and the whole MTME layout loaded with one file mutated or deleted.  A
   reader may return or raise an ``EvalpipeError``; anything else is a crash.  (simulstream logs are not
   read by evalpipe yet: issue 13.)  The HTTP server takes raw text bodies, so "bad JSON" there means
   bodies that are not UTF-8 or not words.
"""
from __future__ import annotations

import json
import os
import random
import selectors
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
METRICS = ["bleu", "chrf", "ter", "token_f1", "accuracy", "al", "bleu-ter"]
WORDS = "the a cat dog sat on mat Haus ß é 猫 🙂 , . ! ? x y z 1 2 3".split()


def child_env():
    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)
    return env


def evalpipe():
    script = Path(sys.executable).parent / "evalpipe"
    return [str(script)] if script.exists() else [sys.executable, "-m", "evalpipe"]


def sentence(rng, n=None):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 15) if n is None else n))


def junk(rng, metric):
    """One hostile request line (bytes, no newline)."""
    kind = rng.randrange(14)
    if kind == 0:
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 80))).replace(b"\n", b"")
    if kind == 1:
        return b"SCORE ||| " + sentence(rng).encode() + b" \xff\xfe ||| " + sentence(rng).encode()
    if kind == 2:
        return b"SCORE ||| a\x00b ||| " + sentence(rng).encode() + b"\x00"
    if kind == 3:
        return ("EVAL ||| " + " ".join(rng.choice(["nan", "inf", "-inf", "0x1p3", "1e400", "-1", "1.5", "7", "", "x"])
                                      for _ in range(rng.randint(0, 14)))).encode()
    if kind == 4:
        return ("EVAL ||| " + " ||| ".join(" ".join(str(rng.randint(0, 9)) for _ in range(rng.randint(1, 14)))
                                          for _ in range(rng.randint(1, 4)))).encode()
    if kind == 5:
        return f"SCORE ||| {sentence(rng)}\u2028{sentence(rng)} ||| {sentence(rng)}\u0085x".encode()
    if kind == 6:
        return rng.choice([b"", b"   ", b"|||", b"SCORE", b"EVAL", b"INFO", b"score ||| a ||| a", b"\r", b"EVAL |||"])
    if kind == 7:
        return ("SCORE ||| " + " ||| ".join(sentence(rng) for _ in range(rng.randint(0, 6)))).encode()
    if kind == 8 and rng.random() < 0.01:
        return ("SCORE ||| " + sentence(rng, 1000) + " ||| " + " ".join(["w"] * rng.randint(10000, 1000000))).encode()
    if kind == 9:
        return f"SCORE ||| {rng.choice(['-3', 'x', '0', '1e9', ''])} ||| {sentence(rng)} ||| 1 2 x ||| 3".encode()
    if kind == 10:
        return f"SCORE ||| {rng.randint(1, 20)} ||| {sentence(rng)} ||| {' '.join(map(str, sorted(rng.sample(range(30), 5))))}".encode()
    if kind == 11:
        return "EVAL ||| " .encode() + " ".join(["1"] * rng.randint(0, 40)).encode()
    if kind == 12:
        return ("INFO ||| " + sentence(rng)).encode()
    return ("SCORE ||| " + sentence(rng) + " ||| " + sentence(rng)).encode()


def valid(rng, metric):
    """A valid SCORE request of ``metric`` (the protocol form it takes)."""
    if metric == "al":
        src = rng.randint(3, 20)
        delays = sorted(rng.randint(1, src) for _ in range(rng.randint(1, 10)))
        return f"SCORE ||| {src} ||| {sentence(rng, rng.randint(1, 10))} ||| {' '.join(map(str, delays))}"
    if metric == "accuracy":
        n = rng.randint(1, 6)
        return f"SCORE ||| {' '.join(rng.choice('ABC') for _ in range(n))} ||| {' '.join(rng.choice('ABC') for _ in range(n))}"
    return f"SCORE ||| {sentence(rng, rng.randint(1, 12))} ||| {sentence(rng)}"


def anchor_reply(metric, request):
    """sacrebleu's own stats for a valid SCORE request of bleu, chrf, ter or bleu-ter (None for metrics
    sacrebleu does not have: their replies are checked against evalpipe in this process)."""
    import sacrebleu

    from evalpipe.sufficient_stats.vectors import format_stats

    anchors = {"bleu": [sacrebleu.BLEU()], "chrf": [sacrebleu.CHRF()], "ter": [sacrebleu.TER()],
               "bleu-ter": [sacrebleu.BLEU(), sacrebleu.TER()]}.get(metric)
    if anchors is None:
        return None
    _, ref, hyp = [field.strip() for field in request.split("|||")]
    return [format_stats([v for a in anchors for v in a._extract_corpus_statistics([hyp], [[ref]])[0]])]


def fuzz_serve(metric, count, seed, findings):
    """Drive one ``serve`` process with ``count`` requests, pipelined."""
    from evalpipe import load_metric
    from evalpipe.protocol.dispatch import Dispatcher

    rng = random.Random(seed)
    oracle = Dispatcher(load_metric(metric))
    requests, expected, checks = [], [], {}
    for i in range(count):
        if rng.random() < 0.2:
            text = valid(rng, metric)
            line = text.encode("utf-8")
            checks[i] = anchor_reply(metric, text) or oracle.handle(line)
        else:
            line = junk(rng, metric)
        requests.append(line)
        expected.append(len(oracle.handle(line)))
    proc = subprocess.Popen(evalpipe() + ["serve", metric], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=child_env())

    def write():
        try:
            for start in range(0, len(requests), 1000):
                proc.stdin.write(b"".join(r + b"\n" for r in requests[start:start + 1000]))
            proc.stdin.close()
        except BrokenPipeError:
            pass

    def drain_stderr():
        proc.stderr.read()

    threading.Thread(target=write, daemon=True).start()
    threading.Thread(target=drain_stderr, daemon=True).start()
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ)
    buffer, replies = b"", []
    while True:
        if not selector.select(60):
            findings["hangs"] += 1
            proc.kill()
            break
        chunk = os.read(proc.stdout.fileno(), 1 << 20)
        if not chunk:
            break
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        replies += lines
    code = proc.wait()
    if code != 0:
        findings["crashes"] += 1
    position = 0
    for i, n in enumerate(expected):
        got = replies[position:position + n]
        position += n
        if i in checks and [g.decode("utf-8", "replace") for g in got] != checks[i]:
            findings["wrong answers"] += 1
    findings["lost or extra replies"] += abs(len(replies) - sum(expected)) + (1 if buffer else 0)
    findings["tracebacks on stdout"] += sum(1 for r in replies if b"Traceback" in r)
    return count


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def raw_http(port, data, read=True, timeout=5.0, slow=False):
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        if slow:
            for i in range(0, len(data), 3):
                s.sendall(data[i:i + 3])
                time.sleep(0.01)
        else:
            s.sendall(data)
        if not read:
            return b""
        s.shutdown(socket.SHUT_WR)
        out = b""
        try:
            while True:
                piece = s.recv(65536)
                if not piece:
                    break
                out += piece
        except socket.timeout:
            pass
        return out


def fuzz_http(count, seed, findings):
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp, "src.txt")
        src.write_text("\n".join(sentence(rng, rng.randint(2, 12)) for _ in range(20)) + "\n", encoding="utf-8")
        port = free_port()
        proc = subprocess.Popen(evalpipe() + ["simul", "serve", "--source", str(src), "--ref", str(src),
                                              "--port", str(port)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=child_env())
        for _ in range(200):
            try:
                raw_http(port, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                break
            except OSError:
                time.sleep(0.05)
        attacks = [
            lambda: b"GARBAGE\r\n\r\n",
            lambda: bytes(rng.randrange(256) for _ in range(rng.randint(1, 300))),
            lambda: b"GET /src?sent_id=" + str(rng.choice([-1, 20, 10**30, "x", "", "1e3"])).encode()
            + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            lambda: b"PUT /hypo?sent_id=" + str(rng.randint(-2, 25)).encode() + b" HTTP/1.1\r\nContent-Length: 9\r\n"
            b"Connection: close\r\n\r\n\xff\xfe</s> x y",
            lambda: b"PUT /hypo?sent_id=1 HTTP/1.1\r\nContent-Length: 100000\r\nConnection: close\r\n\r\nshort",
            lambda: b"PUT /hypo?sent_id=1 HTTP/1.1\r\nContent-Length: -5\r\nConnection: close\r\n\r\n",
            lambda: b"PUT /hypo?sent_id=1 HTTP/1.1\r\nContent-Length: abc\r\nConnection: close\r\n\r\n",
            lambda: b"DELETE /" + rng.choice([b"", b"x", b"../etc", b"src", b"result"]) + b" HTTP/1.1\r\nConnection: close\r\n\r\n",
            lambda: b"GET /nowhere?" + b"a=" * rng.randint(1, 5000) + b" HTTP/1.1\r\nConnection: close\r\n\r\n",
            lambda: b"PUT /hypo?sent_id=2 HTTP/1.1\r\nContent-Length: 5\r\nConnection: close\r\n\r\n</s> " ,
            lambda: b"PUT /hypo?sent_id=2 HTTP/1.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\nzz",  # after </s>
            lambda: b"GET /result HTTP/1.1\r\nConnection: close\r\n\r\n",
            lambda: b"POST /hypo?sent_id=3 HTTP/1.1\r\nContent-Length: " + str(1 << 22).encode() + b"\r\n"
            b"Connection: close\r\n\r\n" + b"w " * (1 << 21),
            lambda: b"GET / HTTP/1.1\r\n" + b"X-Long: " + b"h" * 70000 + b"\r\n\r\n",
        ]
        tried = 0
        for i in range(count):
            attack = rng.choice(attacks)()
            mode = rng.random()
            try:
                if mode < 0.1:
                    raw_http(port, attack[: rng.randint(0, len(attack))], read=False)  # disconnect mid-request
                elif mode < 0.13:
                    raw_http(port, attack[:200], slow=True, timeout=3)
                else:
                    raw_http(port, attack, timeout=3)
            except OSError:
                pass
            tried += 1
            if i % 10 == 0 or i == count - 1:
                try:
                    reply = raw_http(port, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", timeout=10)
                    if b'"num_sentences": 20' not in reply:
                        findings["http: server stopped answering"] += 1
                        break
                except OSError:
                    findings["http: server stopped answering"] += 1
                    break
            if proc.poll() is not None:
                findings["crashes"] += 1
                break
        proc.terminate()
        proc.wait()
    return tried


def fuzz_readers(count, seed, findings):
    from evalpipe.errors import EvalpipeError
    from evalpipe.meta.evalset import parse_score_lines
    from evalpipe.simul.records import read_instances
    from evalpipe.tune.nbest import parse_nbest
    from evalpipe.corpus import read_lines

    rng = random.Random(seed)
    data = ROOT / "tests" / "data"
    seeds = {
        "score file": (data / "wmt21.news" / "human-scores" / "en-de.mqm.seg.score").read_text(encoding="utf-8"),
        "instances": next((data / "simul").rglob("*.jsonl")).read_text(encoding="utf-8")[:20000],
        "n-best": "0 ||| a b ||| F= 1 2 ||| 0\n0 ||| a c ||| F= 0 1 ||| 0\n1 ||| x ||| F= 3 3 ||| 1\n",
        "text": (data / "wmt21.news" / "references" / "en-de.refA.txt").read_text(encoding="utf-8")[:20000],
    }

    def mutate(text):
        raw = bytearray(text.encode("utf-8"))
        for _ in range(rng.randint(1, 20)):
            op = rng.randrange(5)
            at = rng.randrange(len(raw) + 1)
            if op == 0 and raw:
                del raw[at:at + rng.randint(1, 50)]
            elif op == 1:
                raw[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
            elif op == 2:
                raw[at:at] = rng.choice([b"\t", b"|||", b"\n", b"nan", b"-", b"{", b"}", b'"', b"\x00", b"\r"])
            elif op == 3 and raw:
                raw = raw[:at]
            else:
                raw[at:at] = rng.choice([b"\xff", b"\xe2\x80\xa8", b"\xc2\x85", b"1e999", b"[]", b"null"])
        return bytes(raw)

    tried = 0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "f")
        for i in range(count):
            kind = rng.choice(sorted(seeds))
            blob = mutate(seeds[kind])
            try:
                if kind == "score file":
                    parse_score_lines(blob.decode("utf-8", "replace").splitlines(), "fuzz.score")
                elif kind == "n-best":
                    parse_nbest(blob.decode("utf-8", "replace").splitlines(), "fuzz.nbest")
                else:
                    path.write_bytes(blob)
                    (read_instances if kind == "instances" else read_lines)(str(path))
            except EvalpipeError:
                pass
            except Exception as exc:  # noqa: BLE001 -- a finding
                findings[f"reader crash ({kind}: {type(exc).__name__})"] += 1
            tried += 1
    return tried


def fuzz_mtme_layout(count, seed, findings):
    """A copy of the real MTME-layout subset with one file mutated (or deleted) per try, loaded whole."""
    import shutil

    from evalpipe.errors import EvalpipeError
    from evalpipe.meta.evalset import EvalSet

    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(ROOT / "tests" / "data" / "wmt21.news", Path(tmp, "wmt21.news"))
        files = sorted(p for p in Path(tmp, "wmt21.news").rglob("*") if p.is_file() and "en-de" in str(p))
        for _ in range(count):
            path = rng.choice(files)
            original = path.read_bytes()
            raw = bytearray(original)
            for _ in range(rng.randint(1, 10)):
                at = rng.randrange(len(raw) + 1)
                raw[at:at + rng.randint(0, 40)] = rng.choice([b"", b"\t", b"\n", b"\xff", b"nan", b"-1e9", b" ",
                                                             b"None", b"\t\t\t", b"x" * rng.randint(1, 30)])
            try:
                if rng.random() < 0.05:
                    path.unlink()
                else:
                    path.write_bytes(bytes(raw))
                evs = EvalSet(tmp, "wmt21.news", "en-de")
                for level in ("sys", "seg"):
                    evs.Scores(level, "mqm")
            except EvalpipeError:
                pass
            except Exception as exc:  # noqa: BLE001 -- a finding
                findings[f"reader crash (MTME layout: {type(exc).__name__}: {str(exc)[:60]})"] += 1
            finally:
                path.write_bytes(original)
    return count


def main(scale: float = 1.0) -> int:
    from collections import Counter

    findings = Counter({"crashes": 0, "hangs": 0, "lost or extra replies": 0, "wrong answers": 0,
                        "tracebacks on stdout": 0})
    per_metric = max(1000, int(1_000_000 * scale) // len(METRICS))
    start = time.perf_counter()
    total = 0
    for i, metric in enumerate(METRICS):
        total += fuzz_serve(metric, per_metric, 1000 + i, findings)
    print(f"serve: {total} requests over {len(METRICS)} metrics in {time.perf_counter() - start:.0f} s")
    start = time.perf_counter()
    http = fuzz_http(max(100, int(1000 * scale)), 7, findings)
    print(f"simul serve (HTTP): {http} hostile requests in {time.perf_counter() - start:.0f} s")
    start = time.perf_counter()
    files = fuzz_readers(max(200, int(20000 * scale)), 11, findings)
    print(f"file readers: {files} mutated files in {time.perf_counter() - start:.0f} s")
    start = time.perf_counter()
    layouts = fuzz_mtme_layout(max(50, int(500 * scale)), 13, findings)
    print(f"MTME layout: {layouts} loads with one mutated or missing file in {time.perf_counter() - start:.0f} s")
    for key, value in sorted(findings.items()):
        print(f"  {key}: {value}")
    bad = sum(findings.values())
    print("clean" if not bad else f"FINDINGS: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0))
