"""Third-party clients of the line protocol, obtained from the package registry at test time and run
unchanged against `evalpipe serve` through real pipes.

pycocoevalcap 1.2: ``pip download --no-deps pycocoevalcap==1.2``; its METEOR client
(``pycocoevalcap/meteor/meteor.py``, unmodified) is taken from the wheel and run in a child Python
whose ``PATH`` starts with an ``evalpipe shim`` named ``java``: the client starts ``java -jar ...
meteor-1.5.jar - - -stdio -l en -norm`` and gets ``evalpipe serve`` instead.  Nothing of it is copied
into the project; the download is cached in pytest's cache folder.
"""
from __future__ import annotations

import fcntl

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import sacrebleu

from conftest import child_env, script
from evalpipe import load_metric

TESTS = Path(__file__).parent
NEWS = TESTS / "data" / "wmt21.news"
TIMEOUT = 300

DRIVER = """
import json, sys
from pycocoevalcap.meteor.meteor import Meteor
gts, res = json.load(open(sys.argv[1], encoding="utf-8"))
meteor = Meteor()
score, scores = meteor.compute_score(gts, res)
print(json.dumps([score, scores]))
"""


@pytest.fixture(scope="session")
def pycocoevalcap(request):
    """A folder holding pycocoevalcap 1.2's Python files, from the wheel on the package registry."""
    folder = Path(request.config.cache.mkdir("pycocoevalcap-1.2"))
    lock = open(folder / ".lock", "w")  # one download when several test processes want it at once
    fcntl.flock(lock, fcntl.LOCK_EX)
    request.addfinalizer(lock.close)
    client = folder / "pycocoevalcap" / "meteor" / "meteor.py"
    if not client.exists():
        wheels = folder / "wheel"
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                        "pycocoevalcap==1.2", "-d", str(wheels)], check=True, timeout=TIMEOUT,
                       stdout=subprocess.DEVNULL)
        wheel = next(wheels.glob("pycocoevalcap-1.2-*.whl"))
        with zipfile.ZipFile(wheel) as archive:  # its Python files; the 100 MB of jars are not needed
            archive.extractall(folder, [n for n in archive.namelist() if n.endswith(".py")])
        wheel.unlink()
    return folder


def segments(n):
    """``n`` real WMT21 en-de segments: a system's output and reference A."""
    system = sorted((NEWS / "system-outputs" / "en-de").glob("*.txt"))[0]
    hyps = system.read_text(encoding="utf-8").splitlines()[:n]
    refs = (NEWS / "references" / "en-de.refA.txt").read_text(encoding="utf-8").splitlines()[:n]
    return hyps, refs


def run_client(folder, tmp_path, metric, hyps, refs):
    shims = tmp_path / f"shim-{metric}"
    subprocess.run([script("evalpipe"), "shim", str(shims), "-m", metric, "--dialect", "pycocoevalcap"],
                   check=True, env=child_env(), stdout=subprocess.DEVNULL, timeout=TIMEOUT)
    data = tmp_path / "data.json"
    gts = {str(i): [r] for i, r in enumerate(refs)}
    res = {str(i): [h] for i, h in enumerate(hyps)}
    data.write_text(json.dumps([gts, res]), encoding="utf-8")
    env = child_env()
    env["PATH"] = f"{shims}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(folder)
    done = subprocess.run([sys.executable, "-c", DRIVER, str(data)], capture_output=True, text=True, env=env,
                          timeout=TIMEOUT)  # a hang (the client's lock never released) fails here
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("metric", ["bleu", "chrf"])
@pytest.mark.parametrize("n", [1, 50])
def test_pycocoevalcap_meteor_client_unchanged(pycocoevalcap, tmp_path, metric, n):
    """Per-sentence scores equal sacrebleu's sentence scores and the aggregate equals its corpus score."""
    hyps, refs = segments(n)
    score, scores = run_client(pycocoevalcap, tmp_path, metric, hyps, refs)
    sent = [h.replace("|||", "").replace("  ", " ") for h in hyps]  # what the client sends
    anchor = sacrebleu.BLEU() if metric == "bleu" else sacrebleu.CHRF()
    assert scores == [anchor.sentence_score(h, [r]).score for h, r in zip(sent, refs)]
    assert score == anchor.corpus_score(sent, [refs]).score


def test_shim_checks_the_metric_before_writing(tmp_path):
    done = subprocess.run([script("evalpipe"), "shim", str(tmp_path / "s"), "-m", "no_such_metric"],
                          capture_output=True, text=True, env=child_env(), timeout=TIMEOUT)
    assert done.returncode == 2 and "no_such_metric" in done.stderr and not (tmp_path / "s" / "java").exists()


# -- Moses and cdec: their traffic, transcribed from their C++ -------------------------------------
# Moses: moses-smt/mosesdecoder mert/MeteorScorer.cpp at commit 20b3e8929e93c40e0f1ec61b9268330fe59607f9.
# cdec: redpony/cdec mteval/ns_ext.cc at commit 2eb3bb96c6f780c477585b33273fc0c0d56c80e4, and the METEOR
# command of its mteval/ns.cc.  Only the bytes they write and how they read the replies are reproduced.

def shim_folder(tmp_path, *args):
    folder = tmp_path / "shim"
    subprocess.run([script("evalpipe"), "shim", str(folder), *args], check=True, env=child_env(),
                   stdout=subprocess.DEVNULL, timeout=TIMEOUT)
    return folder


def spawn(argv, executable, shims):
    env = child_env()
    env["PATH"] = f"{shims}{os.pathsep}{env.get('PATH', '')}"
    return subprocess.Popen(argv, executable=executable, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)


class MosesMeteorScorer:
    """MeteorScorer: bash -c 'java -Xmx1G -jar JAR - - -stdio -lower -t tune -l en'; ``SCORE ||| ref_1 |||
    ... ||| text``, one line read; ``EVAL |||`` then every (integer) stat followed by a space; atof."""

    def __init__(self, shims):
        command = "java -Xmx1G -jar /opt/meteor-1.5.jar - - -stdio -lower -t tune -l en"
        self.process = spawn(["bash", "-c", command], "/bin/bash", shims)

    def prepare_stats(self, text, refs):
        self.process.stdin.write(("SCORE" + "".join(f" ||| {r}" for r in refs) + f" ||| {text}\n").encode())
        self.process.stdin.flush()
        return [int(float(v)) for v in self.process.stdout.readline().decode().split()]

    def calculate_score(self, comps):
        self.process.stdin.write(("EVAL |||" + "".join(f"{c} " for c in comps) + "\n").encode())
        self.process.stdin.flush()
        return float(self.process.stdout.readline().decode().strip() or 0)


class CdecNScoreServer:
    """NScoreServer: the command split on whitespace and exec'd with argv = words[1:] (its argv quirk);
    a handshake SCORE; references and hypothesis written word by word after ``' |||'``; reply fields
    read with ``is >> val`` into floats (reading stops at the first non-number: an ERROR reply gives
    empty statistics); ``EVAL |||`` then ``' ' << field`` for each float field (6 significant digits)."""

    def __init__(self, command, shims):
        words = command.split()
        self.process = spawn(words[1:], words[0], shims)
        assert self.request("SCORE ||| Reference initialization string . ||| Testing initialization string .")

    def request(self, line):
        self.process.stdin.write((line + "\n").encode())
        self.process.stdin.flush()
        return self.process.stdout.readline().decode().strip(" \t\n")

    def evaluate(self, refs, hyp):
        line = "SCORE" + "".join(" |||" + "".join(f" {w}" for w in r.split()) for r in refs)
        return self.fields(self.request(line + " |||" + "".join(f" {w}" for w in hyp.split())))

    @staticmethod
    def fields(reply):
        fields = []
        for token in reply.split():
            try:
                fields.append(float(np.float32(token)))
            except ValueError:
                break
        return fields

    def compute_score(self, fields):
        return float(self.request("EVAL |||" + "".join(" %g" % f for f in fields)) or 0)


def test_moses_meteor_scorer_traffic(tmp_path):
    hyps, refs = segments(50)
    scorer = MosesMeteorScorer(shim_folder(tmp_path, "-m", "bleu", "--on-error", "exit"))
    totals = np.sum([scorer.prepare_stats(h, [r]) for h, r in zip(hyps, refs)], axis=0).tolist()
    assert scorer.calculate_score(totals) == sacrebleu.BLEU().corpus_score(hyps, [refs]).score
    scorer.process.stdin.close()
    assert scorer.process.wait(timeout=TIMEOUT) == 0


def test_cdec_external_metric_traffic_argv_quirk_and_float_fields(tmp_path):
    hyps, refs = segments(50)
    shims = shim_folder(tmp_path, "-m", "bleu", "-o", "tokenize=none", "--on-error", "exit", "--score-scale", "0.01")
    # cdec's METEOR command (ns.cc): execvp("java", ["-Xmx1536m", "-jar", ...]); the shim ignores its argv
    server = CdecNScoreServer("java -Xmx1536m -jar /opt/meteor.jar - - -mira -lower -t tune -l en", shims)
    rows = [server.evaluate([r], h) for h, r in zip(hyps, refs)]
    totals = np.sum(np.array(rows, dtype=np.float32), axis=0, dtype=np.float32).tolist()
    tokenized = [" ".join(h.split()) for h in hyps], [[" ".join(r.split()) for r in refs]]
    assert server.compute_score(totals) == sacrebleu.BLEU(tokenize="none").corpus_score(*tokenized).score * 0.01
    # 6 significant digits: a sum of 1,234,567 tokens reaches the server as 1.23457e+06 (parsed, drifted)
    big = [v * 10000 + 7 for v in totals]
    exact = load_metric("bleu").score([int(v) for v in big]) * 0.01
    assert "e+" in "%g" % big[0] and server.compute_score(big) != exact
    server.process.stdin.close()
    assert server.process.wait(timeout=TIMEOUT) == 0


def test_cdec_turns_an_error_reply_into_empty_statistics_unless_the_server_exits(tmp_path):
    command = "java -Xmx1536m -jar /opt/meteor.jar - - -mira -lower -t tune -l en"
    lenient = CdecNScoreServer(command, shim_folder(tmp_path / "a", "-m", "bleu"))
    lenient.process.stdin.write(b"SCORE ||| a b ||| \xff\n")  # a hypothesis that is not UTF-8
    lenient.process.stdin.flush()
    reply = lenient.process.stdout.readline().decode()
    assert reply.startswith("ERROR ||| ") and CdecNScoreServer.fields(reply) == []  # a silent zero in cdec
    strict = CdecNScoreServer(command, shim_folder(tmp_path / "b", "-m", "bleu", "--on-error", "exit"))
    strict.process.stdin.write(b"SCORE ||| a b ||| \xff\n")
    strict.process.stdin.flush()
    assert strict.process.stdout.readline() == b"" and strict.process.wait(timeout=TIMEOUT) == 1
