"""Bad long-form input gets a clear error naming file, line and talk (where simulstream and OmniSTEval
assert, crash or print NaN); a log talk without references is handled and said; engines agree."""
from __future__ import annotations

import json
import subprocess

import pytest

from conftest import child_env, script
from streamlogs import ted_talks, write_case


def run(case, *extra, log=None):
    return subprocess.run([script("evalpipe"), "stream", "score", "--log-file", log or case["log"], "-a",
                           case["audio"], "-r", case["ref"], "--eval-config", case["config"], "-f", "json", *extra],
                          capture_output=True, text=True, env=child_env(), timeout=300)


@pytest.fixture()
def case(tmp_path):
    talks = [(n, s[:12], r[:12], h[:12], a[:12]) for n, s, r, h, a in ted_talks()]
    return write_case(tmp_path, talks, "word", seed=5)


def records(case):
    return [json.loads(line) for line in open(case["log"], encoding="utf-8")]


def write(case, recs, name="bad.jsonl"):
    path = case["log"].replace("metrics.jsonl", name)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(json.dumps(r, ensure_ascii=False) for r in recs) + "\n")
    return path


def error_of(done):
    assert done.returncode == 1, (done.returncode, done.stdout[-500:], done.stderr[-1500:])
    assert "Traceback" not in done.stderr and done.stdout == ""
    return done.stderr


def first_step(recs, ident):
    return next(i for i, r in enumerate(recs) if r.get("id") == ident and "metadata" not in r)


def test_deletion_that_is_not_the_end_of_the_output(case):
    recs = records(case)
    i = first_step(recs, 0)
    nxt = next(k for k in range(i + 1, len(recs)) if recs[k].get("id") == 0)
    recs[nxt]["deleted_tokens"] = ["Wortsalat"]
    err = error_of(run(case, log=write(case, recs)))
    assert f"line {nxt + 1}" in err and "ted_talk.1" in err and "deleted_tokens" in err and "Wortsalat" in err


def test_deletion_in_the_first_step(case):
    recs = records(case)
    i = first_step(recs, 1)
    recs[i]["deleted_tokens"] = ["x"]
    err = error_of(run(case, log=write(case, recs)))
    assert f"line {i + 1}" in err and "ted_talk.3" in err


def test_step_whose_id_has_no_metadata(case):
    recs = records(case) + [{"id": 7, "total_audio_processed": 1.0, "computation_time": 0.1,
                             "generated_tokens": ["a"], "deleted_tokens": []}]
    err = error_of(run(case, log=write(case, recs)))
    assert f"line {len(recs)}" in err and "id 7" in err and "metadata" in err


def test_line_break_inside_a_token(case):
    recs = records(case)
    i = first_step(recs, 0)
    recs[i]["generated_tokens"] = ["zwei\nZeilen"]
    err = error_of(run(case, log=write(case, recs)))
    assert f"line {i + 1}" in err and "line break" in err and "ted_talk.1" in err


def test_missing_field_and_bad_json(case):
    recs = records(case)
    i = first_step(recs, 0)
    del recs[i]["computation_time"]
    err = error_of(run(case, log=write(case, recs)))
    assert f"line {i + 1}" in err and "computation_time" in err
    path = write(case, records(case), "broken.jsonl")
    with open(path, "a", encoding="utf-8") as f:
        f.write("{not json\n")
    assert "expected a JSON object" in error_of(run(case, log=path))


def test_talk_missing_from_the_log(case):
    recs = [r for r in records(case) if r.get("id") != 1]
    err = error_of(run(case, log=write(case, recs)))
    assert "missing: ted_talk.3" in err


def test_log_talk_without_references_is_kept_for_erasure_and_said(case):
    recs = records(case) + [{"id": 9, "metadata": {"wav_name": "extra.wav"}},
                            {"id": 9, "total_audio_processed": 2.0, "computation_time": 1.0,
                             "generated_tokens": ["a", "b"], "deleted_tokens": []},
                            {"id": 9, "total_audio_processed": 3.0, "computation_time": 1.0,
                             "generated_tokens": ["c"], "deleted_tokens": ["b"]}]
    with_extra = run(case, "-m", "stream_laal", "-m", "real_time_factor", "-m", "normalized_erasure",
                     "--resegmenter", "mweralign", log=write(case, recs))
    plain = run(case, "-m", "stream_laal", "-m", "real_time_factor", "-m", "normalized_erasure",
                "--resegmenter", "mweralign")
    assert with_extra.returncode == 0 and plain.returncode == 0, with_extra.stderr[-1000:]
    assert "1 talk(s) without references" in with_extra.stderr and "extra" in with_extra.stderr
    a = {r["metric"]: r["score"] for r in json.loads(with_extra.stdout)["results"]}
    b = {r["metric"]: r["score"] for r in json.loads(plain.stdout)["results"]}
    assert a["stream_laal"] == b["stream_laal"]
    assert a["real_time_factor"] != b["real_time_factor"] and a["normalized_erasure"] != b["normalized_erasure"]


def test_definition_and_reference_problems(case, tmp_path):
    lines = open(case["ref"], encoding="utf-8").read().splitlines()
    short = tmp_path / "short.txt"
    short.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    err = error_of(run({**case, "ref": str(short)}))
    assert "short.txt" in err and f"{len(lines)} in" in err and f"got {len(lines) - 1}" in err
    empty = tmp_path / "empty.txt"
    empty.write_text("\n".join(lines[:3] + [""] + lines[4:]) + "\n", encoding="utf-8")
    err = error_of(run({**case, "ref": str(empty)}))
    assert "empty.txt, line 4" in err and "empty line" in err and "ted_talk.1" in err
    entries = open(case["audio"], encoding="utf-8").read().splitlines()
    zero = tmp_path / "zero.yaml"
    zero.write_text("\n".join(entries[:1] + [entries[1].replace("duration: ", "duration: 0*")
                                             .replace("0*", "0.0, old: ")] + entries[2:]) + "\n", encoding="utf-8")
    err = error_of(run({**case, "audio": str(zero)}))
    assert "zero.yaml" in err and "entry 2" in err and "positive duration" in err


def test_all_output_empty_is_an_error_not_a_number(case):
    recs = records(case)
    for r in recs:
        if "generated_tokens" in r:
            r["generated_tokens"], r["deleted_tokens"] = [], []
    err = error_of(run(case, "-m", "long_yaal", log=write(case, recs)))
    assert "long_yaal" in err and "no sentence could be scored" in err


def test_engines_agree_to_the_last_bit(case):
    local = run(case, "--resegmenter", "omnisteval", "--workers", "1")
    pool = run(case, "--resegmenter", "omnisteval", "--workers", "2")
    assert local.returncode == 0 and pool.returncode == 0, pool.stderr[-1000:]
    assert json.loads(local.stdout)["results"] == json.loads(pool.stdout)["results"]
    doc = json.loads(local.stdout)
    assert doc["talks"] == 2 and doc["test"]["unit"] == "talk"
    assert all(r["signature"].count("reseg:omnisteval") == 1 for r in doc["results"])


def talk_requests(case):
    """One ``SCORE ||| talk ||| JSON`` line per talk of a case, from its log and audio definition."""
    import yaml

    from evalpipe.stream.files import log_steps, stem

    entries = yaml.safe_load(open(case["audio"], encoding="utf-8"))
    refs = open(case["ref"], encoding="utf-8").read().splitlines()
    talks = {}
    for e, r in zip(entries, refs):
        talks.setdefault(stem(e["wav"]), {"name": stem(e["wav"]), "references": [], "steps": []})["references"].append(
            {"content": r, "offset": e["offset"], "duration": e["duration"]})
    for name, step in log_steps(case["log"]):
        talks[name]["steps"].append({"generated_tokens": step.generated, "deleted_tokens": step.deleted,
                                     "total_audio_processed": step.audio, "computation_time": step.computation})
    return [f"SCORE ||| talk ||| {json.dumps(t, ensure_ascii=False)}\n" for t in talks.values()]


def test_the_protocol_carries_whole_talks_through_a_pipe(case):
    from test_protocol_pipe import read_line, start

    proc = start("long_yaal", "--talks")
    try:
        vectors = []
        bad = 'SCORE ||| talk ||| {"references": [], "steps": [{"generated_tokens": ["a"]}]}\n'
        for i, line in enumerate(talk_requests(case)):
            if i == 1:
                proc.stdin.write(bad.encode())
                proc.stdin.flush()
                reply = read_line(proc)
                assert reply.startswith("ERROR ||| talk") and "deleted_tokens" in reply
            proc.stdin.write(line.encode())
            proc.stdin.flush()
            vectors.append([float(x) for x in read_line(proc).split()])
        total = [sum(col) for col in zip(*vectors)]
        proc.stdin.write(("EVAL ||| " + " ".join(map(repr, total)) + "\n").encode())
        proc.stdin.flush()
        served = float(read_line(proc))
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    scored = json.loads(run(case, "-m", "long_yaal").stdout)["results"][0]["score"]
    assert abs(served - scored) <= 1e-9 * abs(scored)
