"""Spark as a cluster runs it: a standalone master and two one-core workers on 127.0.0.1, started with
pyspark's own ``spark-class``, and ``score-corpus``, ``stream score`` and ``meta-eval add-metric`` through the
console script (and ``mbr``, exact and pruning) with ``--spark-master spark://127.0.0.1:PORT``: byte-identical output to the local engine, and no
Spark chatter on stderr without ``-v``.  Marked ``cluster`` (about a minute and a half for both tests on the
2-core machine, which would put the default run over five minutes): ``pytest -m cluster`` runs them.  The workers share the driver's virtual environment (``PYSPARK_PYTHON``);
docs/engines.md says how executors without it get evalpipe.  Every process started here is stopped by its id
(each leads its own process group, which its executors join)."""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from importlib import resources
from pathlib import Path

import pytest

from conftest import NEWS, child_env, script

DEMO = Path(str(resources.files("evalpipe").joinpath("demo", "longform")))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, seconds: float, what: str) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    pyspark = pytest.importorskip("pyspark")
    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        pytest.skip("no Java")
    home = Path(pyspark.__file__).parent
    tmp = tmp_path_factory.mktemp("spark-cluster")
    env = dict(child_env(), SPARK_HOME=str(home), PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1",
               SPARK_LOG_DIR=str(tmp / "logs"), SPARK_WORKER_DIR=str(tmp / "work"))
    port = free_port()
    url = f"spark://127.0.0.1:{port}"
    started = []

    def launch(name, *args):
        out = open(tmp / f"{name}.log", "wb")
        started.append(subprocess.Popen([str(home / "bin" / "spark-class"), *args], stdout=out,
                                        stderr=subprocess.STDOUT, env=env, start_new_session=True))
        return tmp / f"{name}.log"

    master_log = launch("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                        "--webui-port", str(free_port()))
    try:
        wait_for(lambda: b"I have been elected leader" in master_log.read_bytes(), 90, "the master")
        for n in range(2):
            launch(f"worker{n}", "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--cores", "1",
                   "--memory", "1g", "--webui-port", str(free_port()), "--work-dir", str(tmp / f"work{n}"), url)
        wait_for(lambda: master_log.read_bytes().count(b"Registering worker") >= 2, 90, "two workers")
        yield url, env
    finally:
        for proc in started:  # by id: the process group each leads (its executors are in it)
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in started:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


def evalpipe(env, *args):
    done = subprocess.run([script("evalpipe"), *map(str, args)], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


@pytest.mark.spark
@pytest.mark.cluster
def test_score_corpus_stream_score_and_add_metric_on_a_standalone_cluster(cluster, tmp_path):
    url, env = cluster
    spark = ["--engine", "spark", "--spark-master", url]
    systems = sorted((NEWS / "system-outputs" / "en-de").glob("*.txt"))[:3]
    corpus = ["score-corpus", "-q", "-r", NEWS / "references" / "en-de.refA.txt", "-m", "bleu", "chrf", "ter",
              "-f", "json", *systems]
    local, remote = evalpipe(env, *corpus), evalpipe(env, *corpus, *spark)
    assert remote.stdout == local.stdout and json.loads(remote.stdout)["segments"] == 150
    assert remote.stderr == "", remote.stderr  # no Spark start-up chatter without -v
    log = tmp_path / "metrics.jsonl"
    evalpipe(env, "stream", "run", "--demo", "--output", log, "-f", "json")
    stream = ["stream", "score", "--log-file", log, "-a", DEMO / "audio.json", "-r", DEMO / "reference.de",
              "-m", "bleu", "-m", "long_yaal", "-m", "normalized_erasure", "-f", "json"]
    assert evalpipe(env, *stream, *spark).stdout == evalpipe(env, *stream).stdout
    written = {}
    for where, extra in (("local", []), ("spark", spark)):
        root = tmp_path / where
        shutil.copytree(NEWS, root / NEWS.name)
        evalpipe(env, "meta-eval", "add-metric", "--root", root, "--test-set", NEWS.name, "-l", "en-de", "chrf",
                 "-r", "refA", *extra)
        written[where] = {p.name: p.read_bytes() for p in (root / NEWS.name / "metric-scores" / "en-de").glob("chrf*")}
    assert written["spark"] == written["local"] and written["local"]
    for extra in ([], ["--decoder", "pruning", "--sampling-scheduler", "2,4,8", "--top", "2"]):
        mbr = ["mbr", *systems, "-f", "json", *extra]
        assert evalpipe(env, *mbr, *spark).stdout == evalpipe(env, *mbr).stdout


@pytest.mark.spark
@pytest.mark.cluster
def test_executors_without_the_drivers_environment_get_a_packed_one(cluster, tmp_path):
    """Spark's documented way for executors that do not share the driver's environment: a virtual environment
    with evalpipe (its C kernels built) packed by venv-pack, shipped by Spark's ``--archives`` (spark.archives)
    and unpacked beside each executor as ``./environment``, ``PYSPARK_PYTHON`` pointing into it.  The packed
    environment holds no pyspark (Spark ships its own Python side), nothing of the driver's."""
    url, env = cluster
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "dist"),
                    str(Path(__file__).resolve().parents[1])], check=True, timeout=600, env=env)
    packed = tmp_path / "packed"
    subprocess.run([sys.executable, "-m", "venv", str(packed)], check=True, timeout=120)
    subprocess.run([str(packed / "bin" / "python"), "-m", "pip", "install", "-q",
                    str(next((tmp_path / "dist").glob("evalpipe-*.whl")))], check=True, timeout=600, env=env)
    archive = tmp_path / "evalpipe-env.tar.gz"
    subprocess.run([str(Path(sys.executable).parent / "venv-pack"), "-p", str(packed), "-o", str(archive), "-q"],
                   check=True, timeout=600)
    shipped = dict(env, PYSPARK_PYTHON="./environment/bin/python",
                   PYSPARK_SUBMIT_ARGS=f"--archives {archive}#environment pyspark-shell")
    check = ["-c", "import evalpipe.evaluators.kernels._ngram_matches, sys; print(sys.prefix)"]
    assert str(packed) in subprocess.run([str(packed / "bin" / "python"), *check], capture_output=True, text=True,
                                         check=True).stdout
    corpus = ["score-corpus", "-q", "-r", NEWS / "references" / "en-de.refA.txt", "-m", "bleu", "chrf", "-f", "json",
              *sorted((NEWS / "system-outputs" / "en-de").glob("*.txt"))[:2]]
    assert evalpipe(shipped, *corpus, "--engine", "spark", "--spark-master", url).stdout == evalpipe(env, *corpus).stdout
