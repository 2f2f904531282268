"""The long-form driver (``evalpipe stream run``): text and audio runs write simulstream-format logs that
``stream score``, simulstream 1.0.0's own reader and metrics read alike; an agent's mistakes and missing
recordings are named."""
from __future__ import annotations

import json
import subprocess
from importlib import resources
from pathlib import Path

import pytest

from conftest import child_env, script
from test_stream_score import anchor_path, close, run_anchor  # noqa: F401  (anchor_path is a fixture)

DEMO = Path(str(resources.files("evalpipe").joinpath("demo", "longform")))


def evalpipe(*args, timeout=300):
    return subprocess.run([script("evalpipe"), *map(str, args)], capture_output=True, text=True, env=child_env(),
                          timeout=timeout)


def results(done):
    assert done.returncode == 0, done.stderr[-2000:]
    return {r["metric"]: r["score"] for r in json.loads(done.stdout)["results"]}


def demo_options():
    return ["--agent-option", f"hypothesis={DEMO / 'online-w.de'}", "--agent-option", f"drafts={DEMO / 'nemo.de'}", "--agent-option", "retract=0.25"]


def test_demo_scores_the_log_it_wrote(tmp_path):
    log = tmp_path / "metrics.jsonl"
    ran = results(evalpipe("stream", "run", "--demo", "--output", log, "-f", "json"))
    scored = results(evalpipe("stream", "score", "--log-file", log, "-a", DEMO / "audio.json", "-r",
                              DEMO / "reference.de", "-m", "bleu", "-m", "long_yaal", "-m", "normalized_erasure",
                              "-f", "json"))
    assert {k: ran[k] for k in scored} == scored
    steps = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert any(s.get("deleted_tokens") for s in steps), "the demo agent retracts drafts"
    assert ran["normalized_erasure"] > 0


def test_simulstream_reads_the_driver_log(tmp_path, anchor_path):  # noqa: F811
    """simulstream 1.0.0's own reader and StreamLAAL/BLEU/erasure/RTF on a log the driver wrote."""
    log = tmp_path / "metrics.jsonl"
    config = tmp_path / "eval.yaml"
    config.write_text("detokenizer_type: simuleval\nlatency_unit: word\n")
    audio = tmp_path / "audio.yaml"
    audio.write_text("".join(f"- {{wav: {e['wav']}, offset: {e['offset']}, duration: {e['duration']}}}\n"
                             for e in json.loads((DEMO / "audio.json").read_text())))
    done = evalpipe("stream", "run", "--source", DEMO / "source.en", "-a", audio, "--output", log, *demo_options())
    assert done.returncode == 0, done.stderr
    want = run_anchor(anchor_path, "simulstream_scores.py", log, audio, DEMO / "reference.de", config, "word")
    got = results(evalpipe("stream", "score", "--log-file", log, "-a", audio, "-r", DEMO / "reference.de",
                           "--eval-config", config, "--resegmenter", "mweralign", "-f", "json"))
    for metric, value in got.items():
        assert close(value, want[metric]), (metric, value, want[metric])


def synthesized(tmp_path):
    """A copy of the demo's audio definition beside stand-in recordings of its talks."""
    from evalpipe.stream.audio import synthesize
    from evalpipe.stream.files import read_references

    talks = read_references(str(DEMO / "audio.json"), str(DEMO / "source.en"))
    for name, refs in talks.items():
        synthesize(tmp_path / f"{name}.wav", [(r.content, r) for r in refs])
    (tmp_path / "audio.json").write_text((DEMO / "audio.json").read_text())
    return talks


def test_the_replay_agent_hears_every_word_and_sentence_of_a_recording(tmp_path):
    from evalpipe.stream.agent import ReplayAgent
    from evalpipe.stream.audio import AudioChunk, read_wav

    talks = synthesized(tmp_path)
    for name, refs in talks.items():
        samples, rate = read_wav(str(tmp_path / f"{name}.wav"))
        assert rate == 16000 and abs(len(samples) / rate - max(r.offset + r.duration for r in refs)) < 1e-3
        agent = ReplayAgent(str(DEMO / "online-w.de"))
        agent.reset(name, len(refs))
        heard = []
        for start in range(0, len(samples), 7919):  # chunks that cut frames and words anywhere
            end = min(len(samples), start + 7919)
            heard += agent.hear(AudioChunk(samples[start:end], rate, start / rate, end / rate))
        counts = [sum(w.sentence == s for w in heard) for s in range(len(refs))]
        assert counts == [len(r.content.split()) for r in refs]


def test_audio_run_emits_the_same_output_on_the_recordings_clock(tmp_path):
    talks = synthesized(tmp_path)
    log, text_log = tmp_path / "audio.jsonl", tmp_path / "text.jsonl"
    done = evalpipe("stream", "run", "--audio", "-a", tmp_path / "audio.json", "--output", log,
                    "--agent-option", f"hypothesis={DEMO / 'online-w.de'}", "--chunk", "0.5")
    assert done.returncode == 0, done.stderr
    assert "(audio)" in done.stderr
    assert evalpipe("stream", "run", "--source", DEMO / "source.en", "-a", tmp_path / "audio.json", "--output",
                    text_log, "--agent-option", f"hypothesis={DEMO / 'online-w.de'}", "--chunk", "0.5").returncode == 0
    from evalpipe.stream.files import iter_talks, read_references

    refs = read_references(str(tmp_path / "audio.json"), str(DEMO / "reference.de"))
    heard = {t.name: t for _, t in iter_talks(str(log), refs)}
    read = {t.name: t for _, t in iter_talks(str(text_log), refs)}
    for name, spans in talks.items():
        assert heard[name].text == read[name].text  # every word of every sentence was replayed
        assert heard[name].audio_end == pytest.approx(max(s.offset + s.duration for s in spans), abs=1e-3)
        # a word starts its sound before it ends in the text run, so no output comes later from audio
        assert all(a <= b for a, b in zip(heard[name].delays, read[name].delays))
    scored = results(evalpipe("stream", "score", "--log-file", log, "-a", tmp_path / "audio.json", "-r",
                              DEMO / "reference.de", "-m", "bleu", "-m", "long_al", "-f", "json"))
    assert scored["long_al"] > 0


def test_demo_audio_run():
    ran = results(evalpipe("stream", "run", "--demo", "--audio", "-f", "json"))
    assert ran["bleu"] > 20 and ran["long_yaal"] > 0


def test_refusals_are_named(tmp_path):
    synthesized(tmp_path)
    (tmp_path / "textonly.py").write_text(
        "from evalpipe.stream.agent import LongformAgent\n"
        "class TextOnly(LongformAgent):\n    def step(self, new, finished):\n        return 0, []\n"
        "class Greedy(LongformAgent):\n    SOURCES = ('text', 'audio')\n"
        "    def step(self, new, finished):\n        return 5, []\n")
    env = child_env()
    env["PYTHONPATH"] = str(tmp_path)

    def run(*args):
        return subprocess.run([script("evalpipe"), "stream", "run", *map(str, args)], capture_output=True, text=True,
                              env=env, timeout=120)

    audio = tmp_path / "audio.json"
    done = run("--audio", "-a", audio, "--agent", "textonly:TextOnly", "--output", tmp_path / "x.jsonl")
    assert done.returncode == 2 and "reads text" in done.stderr and "gives it audio" in done.stderr
    done = run("--audio", "-a", audio, "--agent", "textonly:Greedy", "--output", tmp_path / "x.jsonl")
    assert done.returncode == 1 and "retracted 5 tokens with 0 written" in done.stderr
    (tmp_path / "ted_talk.1.wav").unlink()
    done = run("--audio", "-a", audio, "--agent-option", f"hypothesis={DEMO / 'online-w.de'}", "--output", tmp_path / "x.jsonl")
    assert done.returncode == 1 and "ted_talk.1.wav" in done.stderr and "found no file" in done.stderr
    done = run("--audio", "--source", DEMO / "source.en", "-a", audio, "--agent-option", f"hypothesis={DEMO / 'online-w.de'}")
    assert done.returncode == 2 and "either --source" in done.stderr
    assert not (tmp_path / "x.jsonl").exists()  # nothing half-written
