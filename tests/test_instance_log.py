"""A SimulEval log scored by a pool reads its records where the work runs (evalpipe.simul.instance_log): the
numbers equal one process's to the bit, errors name the first bad line whichever worker found it, and records
that differ from the first (references, the kind of source) are refused wherever they are."""
from __future__ import annotations

import json
import subprocess

import pytest

from conftest import DATA, child_env, script

WAITK = DATA / "simul" / "iwslt17-dev2010.de-en" / "derived"
METRICS = ["-m", "bleu", "al", "laal", "ap", "dal", "num_chunks", "rtf", "start_offset", "end_offset"]


def _records(n):
    base = [json.loads(line) for path in sorted(WAITK.glob("wait*.instances.jsonl")) for line in open(path)]
    return [dict(base[i % len(base)], index=i) for i in range(n)]


def _write(path, records, blank_every=0):
    lines = []
    for i, r in enumerate(records):
        lines.append(json.dumps(r))
        if blank_every and i % blank_every == 0:
            lines.append("   ")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _score(log, *extra):
    return subprocess.run([script("evalpipe"), "score-corpus", "-q", "--instances", str(log), *METRICS, "-f", "json",
                           *extra], capture_output=True, text=True, env=child_env(), timeout=300)


@pytest.mark.parametrize("extra", [[], ["--sentence-level"], ["--confidence", "--confidence-n", "50"]])
def test_a_pool_gives_one_process_numbers(tmp_path, extra):
    log = _write(tmp_path / "big.jsonl", _records(9000), blank_every=1000)
    pooled, alone = _score(log, "--workers", "2", *extra), _score(log, "--workers", "1", *extra)
    assert pooled.returncode == 0 and alone.returncode == 0, pooled.stderr + alone.stderr
    assert pooled.stdout == alone.stdout


def test_the_first_bad_line_is_named_whichever_worker_finds_it(tmp_path):
    records = _records(9000)
    records[8500]["delays"] = [3, 2, 1]  # in the last chunk
    records[1200]["delays"] = [5, 4]  # in an early one
    log = _write(tmp_path / "bad.jsonl", records)
    for _ in range(3):
        done = _score(log, "--workers", "2")
        errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
        assert done.returncode == 1 and len(errors) == 1 and "line 1201:" in errors[0], done.stderr


@pytest.mark.parametrize("change,needle", [
    (lambda r: r.pop("reference"), "expected a 'reference' string in every instance"),
    (lambda r: r.__setitem__("source", ["x.wav", "samplerate: 16000 Hz"]), "expected every instance's 'source'"),
])
def test_a_record_unlike_the_first_is_refused_in_any_chunk(tmp_path, change, needle):
    records = [dict(r, source=" ".join(["w"] * int(r["source_length"]))) for r in _records(9000)]
    change(records[7000])
    done = _score(_write(tmp_path / "mixed.jsonl", records), "--workers", "2")
    errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert done.returncode == 1 and len(errors) == 1 and needle in errors[0] and "line 7001" in errors[0], done.stderr


@pytest.mark.parametrize("layout", ["plain", "crlf", "no-final-newline", "blank-lines", "unicode-blank"])
def test_the_records_a_pool_reads_are_the_logs(tmp_path, layout):
    """Chunks of evalpipe.simul.instance_log cover exactly the records read_instances reads, whatever the line ends
    and blank lines."""
    from evalpipe.simul.instance_log import InstanceLog
    from evalpipe.simul.records import read_instances

    lines = [json.dumps(r, ensure_ascii=False) for r in _records(50)]
    end = "\r\n" if layout == "crlf" else "\n"
    if layout == "blank-lines":
        lines = ["", " \t"] + lines[:20] + ["", "  "] + lines[20:] + [""]
    if layout == "unicode-blank":
        lines = lines[:10] + ["\u3000 \u00a0"] + lines[10:]
    text = end.join(lines) + ("" if layout == "no-final-newline" else end)
    path = tmp_path / "log.jsonl"
    path.write_bytes(text.encode("utf-8"))
    whole = read_instances(str(path))
    log = InstanceLog.open(str(path))
    assert len(log) == len(whole) == 50
    for parts in (1, 3, 7):
        chunks = [c.read() for c in log.split(parts)]
        assert [h for c in chunks for h in c.hypotheses] == list(whole.hypotheses)
        assert [r for c in chunks for r in c.references[0]] == whole.references[0]
        assert [n for c in chunks for n in c.lines] == whole.lines
