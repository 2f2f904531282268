"""Agents, the driver, the CLI workflow, speech input and the IWSLT 2020 convention on the server."""
from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest
import soundfile
from click.testing import CliRunner

from evalpipe.cli import main
from evalpipe.registry import load_class
from evalpipe.simul.agent import EOS, GET, Agent, WaitKAgent, send
from evalpipe.simul.driver import evaluate
from evalpipe.simul.server import Corpus, Evaluator, make_server


def start(evaluator):
    server = make_server(evaluator, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}"


def test_abstract_policy_raises():
    class NoPolicy(Agent):
        pass

    with pytest.raises(TypeError):
        NoPolicy()

    class CallsSuper(Agent):
        def policy(self, states):
            return super().policy(states)

    with pytest.raises(NotImplementedError):
        CallsSuper().policy({})


def test_wait_k_policy_and_entry_point():
    agent = load_class("waitk", group="evalpipe.agents")(k=2)
    states = agent.init_states()
    assert agent.policy(states) == GET
    agent.update_states(states, {"segment": "a"})
    agent.update_states(states, {"segment": "b"})
    assert agent.policy(states) == send("a")
    with pytest.raises(ValueError):
        WaitKAgent(k=0)


def test_driver_threads_and_scores():
    sources = [" ".join(f"w{j}" for j in range(n)) for n in range(3, 13)]
    evaluator = Evaluator(Corpus(sources, sources=sources))
    server, url = start(evaluator)
    try:
        seen = set()

        class Recording(WaitKAgent):
            def policy(self, states):
                seen.add(threading.get_ident())
                time.sleep(0.002)  # with kept-alive connections one thread could otherwise take every sentence
                return super().policy(states)

        result = evaluate(lambda: Recording(k=3), url, num_threads=3)
    finally:
        server.shutdown()
    assert len(seen) == 3
    assert result["BLEU"] == pytest.approx(100.0)
    # wait-3 copying its source, reference = source: AL is 3 for sources of 3+ words
    assert result["AL"] == pytest.approx(np.mean([3.0] * 10))


def test_iwslt2020_convention_on_the_server():
    sources = ["a b c d e f g h i j"]
    server, url = start(Evaluator(Corpus(sources, sources=sources), convention="iwslt2020"))
    try:
        result = evaluate(lambda: WaitKAgent(k=3), url)
    finally:
        server.shutdown()
    # the 2020 server's steps: t9, t10 and </s> come after the source's </s> was served, at |X| + 1 = 11;
    # AL = (8 x 3 + (11 - 8)) / 9 = 3, a wait-k agent's AL is k there (tests/test_iwslt2020_scorer.py)
    assert result["AL"] == pytest.approx(3.0)


def test_speech_segments_and_ms_delays(tmp_path):
    rate = 16000
    paths = []
    for n, seconds in enumerate((1.0, 0.5)):
        path = tmp_path / f"{n}.wav"
        samples = (np.sin(np.arange(int(rate * seconds)) / 10) * 1000).astype("int16")
        soundfile.write(str(path), samples, rate)
        paths.append(str(path))
    (tmp_path / "wavs.txt").write_text("\n".join(paths) + "\n")
    (tmp_path / "ref.txt").write_text("one two three\nfour five\n")
    corpus = Corpus.from_files(str(tmp_path / "ref.txt"), wav_list=str(tmp_path / "wavs.txt"))
    evaluator = Evaluator(corpus)
    first = evaluator.source(0, 200)
    assert len(first["segment"]) == 3200 and all(isinstance(x, int) for x in first["segment"][:5])
    evaluator.hypothesis(0, "one")
    while evaluator.source(0, 200)["segment"] != EOS:
        pass
    evaluator.hypothesis(0, "two three </s>")
    ins = evaluator.instances()[0]
    assert ins["source_length"] == 1000.0 and ins["delays"] == [200.0, 1000.0, 1000.0]
    assert ins["elapsed"][0] >= 200.0


def test_simul_run_cli_embedded_default():
    result = CliRunner().invoke(main, ["simul", "run", "--demo", "--agent-option", "k=2", "-f", "json"])
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)
    assert scores["sentences"] == 200 and scores["without_hypothesis"] == 0 and scores["AL"] > 0
