"""The ``iwslt2020`` convention equals the IWSLT 2020 server's own scorer, after the source ends too.

The oracle, :func:`scorer_2020`, is this project's transcription of fairseq commit 12d5e6ff (the 2020 shared
task's server): ``examples/simultaneous_translation/eval/scorers/text_scorer.py`` counts one step per source
word served and sets the steps to |X| + 1 once it serves ``</s>``; ``scorer.py`` records every target token,
the final ``</s>`` included, with the steps at that moment; ``eval_latency.py`` (``start_from_zero=False``)
and ``utils/latency.py`` (``LatencyInference``) take ``min(step, |X| + 1)`` per token and compute AP, AL and
DAL with |X| + 1 source units and |Y| counting ``</s>``, in torch float32, averaged over sentences.  The
server runs as ``evalpipe simul serve --convention iwslt2020`` (the console script); the client below speaks
only HTTP, as the 2020 client does (GET /src, PUT /hypo), and logs the steps the 2020 server would record.
float32 arithmetic there, float64 here: values agree to 1e-6.
"""
from __future__ import annotations

import random
import subprocess

import numpy as np
import pytest

from conftest import child_env, script
from test_simul_http_client import call, free_port


def scorer_2020(steps, source_lengths):
    """(AL, AP, DAL) of the 2020 scorer: ``steps[s]`` are sentence s's recorded steps, ``</s>`` last."""
    al, ap, dal = [], [], []
    for recorded, n in zip(steps, source_lengths):
        src = np.float32(n + 1)
        d = np.array([int(x) - 1 for x in recorded], dtype=np.int64)  # eval_latency: start_from_zero=False
        d = np.where(d >= n + 1, n, d)  # LatencyInference: steps past the source end become |X| + 1 - 1
        d = (d + 1).astype(np.float32)  # prepare_latency_metric: start_from_zero=True adds one
        tgt = np.float32(len(d))
        gamma = tgt / src
        index = np.arange(len(d), dtype=np.float32)
        ap.append(float(d.sum(dtype=np.float32) / (src * tgt)))
        after = np.concatenate(([False], (d >= src)[:-1]))  # positions after the first reaching |X| + 1
        lagging = np.where(after, np.float32(0), d - index / gamma)
        al.append(float(lagging.sum(dtype=np.float32) / np.float32((~after).sum())))
        new = np.zeros_like(d)
        for i in range(len(d)):
            new[i] = d[i] if i == 0 else max(new[i - 1] + np.float32(1) / gamma, d[i])
        dal.append(float((new - index / gamma).sum(dtype=np.float32) / tgt))
    return sum(al) / len(al), sum(ap) / len(ap), sum(dal) / len(dal)


def client(base, sent_id, k, stop_after=None, extra_after_end=0):
    """A wait-k copy agent over HTTP: reads k words ahead, writes the source's words one at a time, after the
    source ends (it asked for more and got ``</s>``) writes the rest, ``extra_after_end`` repeats of the last
    word, then ``</s>``; ``stop_after`` ends the hypothesis after that many words.  Returns the steps the
    2020 server records for every token and the final ``</s>``."""
    source, steps, written, served, ended = [], [], 0, 0, False

    def write(token):
        call(base, "PUT", f"/hypo?sent_id={sent_id}", token)
        steps.append(served)

    while True:
        if stop_after is not None and written >= stop_after:
            break
        if not ended and len(source) - written < k:
            _, state = call(base, "GET", f"/src?sent_id={sent_id}")
            if state["segment"] == "</s>":
                ended, served = True, len(source) + 1
            else:
                source.append(state["segment"])
                served += 1
            continue
        if written < len(source):
            write(source[written])
            written += 1
        elif ended:
            for _ in range(extra_after_end if source else 0):
                write(source[-1])
            break
    write("</s>")
    return steps


@pytest.fixture()
def server(tmp_path):
    rng = random.Random(2020)
    sources = [" ".join(f"w{i}_{j}" for j in range(rng.randint(1, 25))) for i in range(60)]
    (tmp_path / "src.txt").write_text("\n".join(sources) + "\n", encoding="utf-8")
    (tmp_path / "ref.txt").write_text("\n".join(sources) + "\n", encoding="utf-8")
    port = free_port()
    proc = subprocess.Popen([script("evalpipe"), "simul", "serve", "--source", str(tmp_path / "src.txt"),
                             "--ref", str(tmp_path / "ref.txt"), "--convention", "iwslt2020", "--port", str(port),
                             "--output", str(tmp_path / "out")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=child_env())
    base = f"http://127.0.0.1:{port}"
    import time
    import urllib.error

    for _ in range(400):
        try:
            call(base, "GET", "/")
            break
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.05)
    yield base, [len(s.split()) for s in sources], rng
    proc.terminate()
    proc.wait(timeout=10)


def test_a_wait_k_agents_al_is_k_as_on_the_2020_server(server):
    base, lengths, _ = server
    steps = [client(base, i, 3) for i in range(len(lengths))]
    _, result = call(base, "GET", "/result")
    want = scorer_2020(steps, lengths)
    assert (result["AL"], result["AP"], result["DAL"]) == pytest.approx(want, rel=1e-6)
    short = [i for i, n in enumerate(lengths) if n >= 3]  # (shorter sources lag less than 3)
    assert np.mean([scorer_2020([steps[i]], [lengths[i]])[0] for i in short]) == pytest.approx(3.0, rel=1e-6)


def test_early_ends_words_after_the_source_and_empty_hypotheses(server):
    """Agents of every k, some ending before the source does, some writing more after it ended, some writing
    nothing but ``</s>``: the server's AL, AP and DAL are the 2020 scorer's."""
    base, lengths, rng = server
    steps = []
    for i in range(len(lengths)):
        kind = i % 4
        steps.append(client(base, i, rng.randint(1, 6), stop_after=rng.randint(0, lengths[i]) if kind == 1 else
                            0 if kind == 3 and i % 8 == 3 else None,
                            extra_after_end=rng.randint(1, 4) if kind == 2 else 0))
    _, result = call(base, "GET", "/result")
    assert (result["AL"], result["AP"], result["DAL"]) == pytest.approx(scorer_2020(steps, lengths), rel=1e-6)
