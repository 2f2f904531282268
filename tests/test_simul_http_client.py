"""The evaluation server through a client that speaks only HTTP (no evalpipe import in this file),
as existing IWSLT 2020 clients do.  The server runs as `evalpipe simul serve` in a subprocess."""
from __future__ import annotations

import fcntl

import json
import os
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest
import sacrebleu

from conftest import script

SOURCES = ["ein kleiner Test", "noch ein etwas längerer Satz hier", "kurz", "der letzte Satz ohne Ende"]
REFERENCES = ["a small test", "another somewhat longer sentence here", "short", "the last sentence without end"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(base, method, path, body=None):
    request = urllib.request.Request(base + path, data=None if body is None else body.encode("utf-8"), method=method)
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def start_server(tmp_path):
    """`evalpipe simul serve` on a free port with --output tmp_path/out: (process, base URL, output folder)."""
    src, tgt = tmp_path / "src.txt", tmp_path / "tgt.txt"
    src.write_text("\n".join(SOURCES) + "\n", encoding="utf-8")
    tgt.write_text("\n".join(REFERENCES) + "\n", encoding="utf-8")
    port = free_port()
    cmd = [script("evalpipe"), "simul", "serve", "--source", str(src), "--ref", str(tgt),
           "--port", str(port), "--output", str(tmp_path / "out")]
    env = dict(os.environ)
    env.pop("PYTHONUNBUFFERED", None)
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            call(base, "GET", "/")
            break
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.05)
    return proc, base, tmp_path / "out"


@pytest.fixture()
def server(tmp_path):
    proc, base, out = start_server(tmp_path)
    yield base, out
    proc.terminate()
    proc.wait(timeout=10)


def wait_k(base, sent_id, k, copy_until=None, send_eos=True):
    """A wait-k client that copies source words (HTTP only)."""
    source, target, finished = [], [], False
    while True:
        if not finished and len(source) - len(target) < k:
            _, state = call(base, "GET", f"/src?sent_id={sent_id}")
            if state["segment"] == "</s>":
                finished = True
            else:
                source.append(state["segment"])
            continue
        if len(target) < len(source) and (copy_until is None or len(target) < copy_until):
            word = source[len(target)]
            call(base, "PUT", f"/hypo?sent_id={sent_id}", word)
            target.append(word)
        elif finished:
            if send_eos:
                call(base, "PUT", f"/hypo?sent_id={sent_id}", "</s>")
            return target
        else:
            _, state = call(base, "GET", f"/src?sent_id={sent_id}")
            if state["segment"] == "</s>":
                finished = True
            else:
                source.append(state["segment"])


def test_api_shapes_and_delays(server):
    base, out = server
    assert call(base, "GET", "/") == (200, {"num_sentences": 4})
    status, first = call(base, "GET", "/src?sent_id=0")
    assert status == 200 and first == {"sent_id": 0, "segment_id": 0, "segment": "ein"}
    assert call(base, "POST", "/")[0] == 200  # reset
    for i in range(3):
        wait_k(base, i, 2)
    wait_k(base, 3, 2, send_eos=False)  # no </s>: the last word must still count
    status, result = call(base, "GET", "/result")
    assert status == 200
    assert set(result) >= {"BLEU", "chrF", "TER", "AL", "AP", "DAL", "LAAL", "sentences", "signatures"}
    log = [json.loads(x) for x in (out / "instances.log").read_text(encoding="utf-8").splitlines()]
    hyps, refs = [r["prediction"] for r in log], [[r["reference"] for r in log]]
    for key, anchor in (("BLEU", sacrebleu.BLEU()), ("chrF", sacrebleu.CHRF()), ("TER", sacrebleu.TER())):
        assert result[key] == anchor.corpus_score(hyps, refs).score, key
        assert result["signatures"][key] == str(anchor.get_signature()), key
    assert log[1]["prediction"] == SOURCES[1] and log[1]["delays"] == [2, 3, 4, 5, 6, 6]
    assert log[3]["prediction"] == SOURCES[3]  # nothing dropped without </s>
    assert log[2]["delays"] == [1]  # one-word source: capped at |X|
    assert (out / "scores.json").exists() and (out / "metrics.tsv").exists()


def test_bad_requests_get_4xx_and_the_server_goes_on(server):
    base, _ = server
    assert call(base, "GET", "/src?sent_id=99")[0] == 404
    assert call(base, "GET", "/src?sent_id=abc")[0] == 400
    assert call(base, "GET", "/src")[0] == 400
    assert call(base, "GET", "/nope")[0] == 404
    assert "error" in call(base, "PUT", "/hypo?sent_id=-1", "x")[1]
    assert call(base, "GET", "/")[0] == 200


def test_sentences_without_hypothesis_are_scored(server):
    base, _ = server
    wait_k(base, 0, 1)
    status, result = call(base, "GET", "/result")
    assert status == 200 and result["sentences"] == 4 and result["without_hypothesis"] == 3


def test_concurrent_clients_lose_no_token(server):
    base, out = server
    errors = []

    def run(i):
        try:
            wait_k(base, i, 1 + i % 3)
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    call(base, "GET", "/result")
    log = [json.loads(x) for x in (out / "instances.log").read_text(encoding="utf-8").splitlines()]
    assert [r["prediction"] for r in log] == SOURCES
    for r in log:
        assert r["delays"] == sorted(r["delays"])


@pytest.fixture(scope="session")
def fairseq_client(request):
    """fairseq 0.10.2's simultaneous-translation client, ``client.py`` unmodified from its wheel on the
    package registry; its ``scorers`` import serves only local scoring and is stubbed here."""
    import importlib.util
    import sys
    import zipfile
    from pathlib import Path

    folder = Path(request.config.cache.mkdir("fairseq-0.10.2-client"))
    lock = open(folder / ".lock", "w")  # one download when several test processes want it at once
    fcntl.flock(lock, fcntl.LOCK_EX)
    request.addfinalizer(lock.close)
    client = folder / "client.py"
    if not client.exists():
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                        "--python-version", "3.8", "--platform", "manylinux1_x86_64", "fairseq==0.10.2",
                        "-d", str(folder)], check=True, timeout=300, stdout=subprocess.DEVNULL)
        wheel = next(folder.glob("fairseq-0.10.2-*.whl"))
        with zipfile.ZipFile(wheel) as archive:
            client.write_bytes(archive.read("fairseq/examples/simultaneous_translation/eval/client.py"))
        wheel.unlink()
    stub = type(sys)("scorers")
    stub.build_scorer = lambda args: (_ for _ in ()).throw(NotImplementedError("local scoring is not used"))
    sys.modules.setdefault("scorers", stub)
    spec = importlib.util.spec_from_file_location("fairseq_simul_client", client)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_fairseq_2020_client_unchanged(server, fairseq_client, capsys):
    """fairseq's SimulSTEvaluationService drives `evalpipe simul serve` as it drove fairseq's server:
    session, corpus info, source words, hypotheses, and scores with BLEU, TER and the latency keys."""
    base, out = server
    service = fairseq_client.SimulSTEvaluationService(hostname="127.0.0.1", port=int(base.rsplit(":", 1)[1]))
    with service:
        for sent_id in range(service.corpus_info()["num_sentences"]):
            source, written = [], 0
            while True:  # wait-2, copying the source
                segment = service.get_src(sent_id)["segment"]
                if segment == "</s>":
                    break
                source.append(segment)
                if len(source) >= 2:
                    service.send_hypo(sent_id, source[written])
                    written += 1
            for word in source[written:] + ["</s>"]:
                service.send_hypo(sent_id, word)
        service.get_scores()
    printed = capsys.readouterr().out
    assert "Evaluation session started." in printed and "Evaluation session finished." in printed
    status, result = call(base, "GET", "/result")
    assert status == 200 and f"Scores: {result}" in printed
    assert {"BLEU", "TER", "AL"} <= set(result) and result["sentences"] == len(SOURCES)
    log = [json.loads(x) for x in (out / "instances.log").read_text(encoding="utf-8").splitlines()]
    assert [r["prediction"] for r in log] == SOURCES and log[1]["delays"][:2] == [2, 3]


def test_bad_content_lengths_get_4xx_and_the_server_goes_on(server):
    """Found by bench/fuzz.py: a non-numeric or negative Content-Length was a 500 internal error."""
    base, _ = server
    port = int(base.rsplit(":", 1)[1])

    def raw(data):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
            out = b""
            while True:
                piece = s.recv(65536)
                if not piece:
                    return out
                out += piece

    for length, status in ((b"abc", b"400"), (b"-5", b"400"), (str(2 << 20).encode(), b"413")):
        reply = raw(b"PUT /hypo?sent_id=1 HTTP/1.1\r\nContent-Length: " + length + b"\r\n\r\nword")
        assert reply.startswith(b"HTTP/1.1 " + status), reply[:80]
        assert b'"error"' in reply
    assert call(base, "GET", "/") == (200, {"num_sentences": 4})


def test_a_server_killed_mid_run_leaves_the_finished_sentences_and_says_so(tmp_path):
    proc, base, out = start_server(tmp_path)
    wait_k(base, 1, 2)
    wait_k(base, 0, 2)
    wait_k(base, 3, 2, send_eos=False)  # started, never finished
    proc.kill()
    proc.wait(timeout=10)
    finished = [json.loads(line) for line in (out / "finished.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["index"] for r in finished] == [1, 0] and [r["prediction"] for r in finished] == SOURCES[1::-1]
    progress = json.loads((out / "progress.json").read_text(encoding="utf-8"))
    assert progress["finished_sentences"] == 2 and progress["sentences"] == 4 and progress["complete"] is False
    assert not (out / "instances.log").exists() and not (out / "scores.json").exists()
