"""The SimulEval log reader (``evalpipe.simul.log_columns``): the C reader and its Python reference give the same
columns or both decline, on the real wait-k logs, on every case below and on thousands of damaged lines; what
either takes reads as the json path reads it (:func:`~evalpipe.simul.records.parse_records` and
:func:`~evalpipe.simul.records.records_input`), and what they decline still gets json's error naming the line."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from evalpipe.errors import InputError
from evalpipe.simul import log_columns
from evalpipe.simul.records import bytes_input, parse_records, read_instances, records_input

LOGS = sorted((Path(__file__).parent / "data" / "simul" / "iwslt17-dev2010.de-en" / "derived").glob("*.jsonl"))
SPEECH = ["/data/a.wav", "samplerate: 16000 Hz", "channels: 1", "duration: 3.2 s"]

needs_c = pytest.mark.skipif(not log_columns.AVAILABLE, reason="the C reader was not built (no compiler)")

CASES = {
    "plain": b'{"delays": [1, 2, 2.5], "source_length": 4, "prediction": "a b c", "reference": "r"}\n',
    "escapes": ('{"delays": [1], "source_length": 1, "prediction": '
                '"\\u00e4\\"\\\\\\/\\b\\f\\n\\r\\t \\ud83d\\ude00 ä"}\n').encode(),
    "raw utf-8": '{"delays": [1], "source_length": 1, "prediction": "Straße 😀", "reference": "日本"}'.encode(),
    "escaped keys": b'{"\\u0064elays": [1], "source_\\u006cength": 2}\n',
    "crlf and blanks": b'\r\n  \t\r\n{"delays": [1], "source_length": 2}\r\n\n{"delays": [], "source_length": 0}\r\n',
    "no final newline": b'{"delays": [1], "source_length": 2}\n{"delays": [3], "source_length": 2}',
    "whitespace inside": b' \t{ "delays" : [ 1 , 2 ] ,\r"source_length" : 3 } \t\r\n',
    "other keys": b'{"delays": [1], "source_length": 2, "x": {"a": [1, {"b": null}, true, false, -0.5e-3, "s"]},'
                  b' "y": [], "z": {}, "big": 123456789012345678901234567890}\n',
    "numbers": b'{"delays": [0, -0, 1.0, 1e2, 1E+2, 100.5e-0, 123456789012345678], "source_length": 2.5e1}\n',
    "infinite delay": b'{"delays": [1, 1e999], "source_length": 2}\n',
    "decreasing delays": b'{"delays": [3, 1], "source_length": 2}\n',
    "negative source": b'{"delays": [1], "source_length": -1}\n',
    "index and nulls": b'{"index": 7, "delays": [1], "source_length": 2, "prediction": null, "reference": null,'
                       b' "elapsed": null, "server_delays": null, "durations": null, "source": null}\n',
    "lists": b'{"delays": [1, 2], "source_length": 2, "elapsed": [10.5, 20], "server_delays": [1, 2, 3]}\n',
    "text source": b'{"delays": [1], "source_length": 2, "source": "ein Satz"}\n',
    "speech source": json.dumps({"delays": [1.0], "source_length": 3200.0, "source": SPEECH}).encode(),
    "other source": b'{"delays": [1], "source_length": 2, "source": ["x", 1, ["samplerate: 1"]]}\n'
                    b'{"delays": [1], "source_length": 2, "source": {"samplerate": 1}}\n',
    "mixed sources": b'{"delays": [1], "source_length": 2, "source": "s"}\n{"delays": [1], "source_length": 2}\n',
    "empty": b"",
    "nested 100 deep": b'{"delays": [1], "source_length": 2, "x": ' + b"[" * 100 + b"]" * 100 + b"}\n",
    "blank only": b"\n \n\t\r\n",
    # what the readers decline (json's path then reads or names it)
    "19-digit delay": b'{"delays": [1234567890123456789], "source_length": 2}\n',
    "19-digit index": b'{"index": 1234567890123456789, "delays": [1], "source_length": 2}\n',
    "float index": b'{"index": 1.0, "delays": [1], "source_length": 2}\n',
    "nan": b'{"delays": [NaN], "source_length": 2}\n',
    "infinity": b'{"delays": [1], "source_length": Infinity}\n',
    "bool length": b'{"delays": [1], "source_length": true}\n',
    "list length": b'{"delays": [1], "source_length": [2]}\n',
    "string delay": b'{"delays": ["1"], "source_length": 2}\n',
    "null delays": b'{"delays": null, "source_length": 2}\n',
    "no delays": b'{"source_length": 2}\n',
    "no length": b'{"delays": [1]}\n',
    "empty object": b"{}\n",
    "a list": b"[1, 2]\n",
    "two objects": b'{"delays": [1], "source_length": 2} {"delays": [1], "source_length": 2}\n',
    "trailing comma": b'{"delays": [1], "source_length": 2,}\n',
    "twice": b'{"delays": [1], "source_length": 2, "delays": [2]}\n',
    "number prediction": b'{"delays": [1], "source_length": 2, "prediction": 5}\n',
    "list reference": b'{"delays": [1], "source_length": 2, "reference": ["r"]}\n',
    "string elapsed": b'{"delays": [1], "source_length": 2, "elapsed": "1"}\n',
    "durations": b'{"delays": [1], "source_length": 2, "durations": [1]}\n',
    "lone high surrogate": b'{"delays": [1], "source_length": 2, "prediction": "\\ud800x"}\n',
    "lone low surrogate": b'{"delays": [1], "source_length": 2, "prediction": "\\udc00"}\n',
    "control character": b'{"delays": [1], "source_length": 2, "prediction": "a\tb"}\n',
    "bad escape": b'{"delays": [1], "source_length": 2, "prediction": "\\x41"}\n',
    "invalid utf-8": b'{"delays": [1], "source_length": 2, "x": "\xff"}\n',
    "overlong utf-8": b'{"delays": [1], "source_length": 2, "x": "\xc0\xaf"}\n',
    "encoded surrogate": b'{"delays": [1], "source_length": 2, "x": "\xed\xa0\x80"}\n',
    "bom": b'\xef\xbb\xbf{"delays": [1], "source_length": 2}\n',
    "form feed line": b'\x0c\n{"delays": [1], "source_length": 2}\n',
    "unicode blank line": '\u3000\n{"delays": [1], "source_length": 2}\n'.encode(),
    "leading zero": b'{"delays": [01], "source_length": 2}\n',
    "bare minus": b'{"delays": [-], "source_length": 2}\n',
    "unterminated": b'{"delays": [1], "source_length": 2\n',
}
DECLINED = {name for name in CASES if list(CASES).index(name) >= list(CASES).index("19-digit delay")}


def real_log() -> bytes:
    return b"".join(path.read_bytes() for path in LOGS)


def c_columns(data: bytes, first: int = 1):
    from evalpipe.simul import _log_columns

    return _log_columns.columns(data, first)


@needs_c
@pytest.mark.parametrize("name", CASES)
def test_the_c_reader_equals_its_python_reference(name):
    data = CASES[name]
    found, reference = c_columns(data, 5), log_columns.python_columns(data, 5)
    assert found == reference
    assert (found is None) == (name in DECLINED)
    if found is not None:  # same types too: ints stay ints, floats floats
        assert repr(found) == repr(reference)


@needs_c
def test_the_c_reader_equals_its_python_reference_on_the_real_logs():
    data = real_log()
    found = c_columns(data)
    assert found is not None and len(found[0]) > 100
    assert repr(found) == repr(log_columns.python_columns(data))


@needs_c
def test_the_c_reader_equals_its_python_reference_on_damaged_lines():
    """Every byte of real records damaged at random (deleted, doubled, replaced by JSON's own punctuation and
    escapes, or by a non-ASCII byte): the two readers agree on each of 3,000 lines."""
    rng = random.Random(7)
    lines = [line + b"\n" for line in real_log().splitlines()[:200]] + [CASES[name] for name in CASES]
    alphabet = [b'"', b"\\", b"{", b"}", b"[", b"]", b",", b":", b"-", b".", b"e", b"0", b"9", b" ", b"\r", b"\n",
                b"\\u", b"\\ud83d", b"null", b"\xc3", b"\xa4", b"\xff", b"\x01"]
    agreed = declined = 0
    for _ in range(3000):
        line = bytearray(rng.choice(lines))
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(line) + 1)
            what = rng.random()
            if what < 0.3 and at < len(line):
                del line[at]
            elif what < 0.5 and at < len(line):
                line[at:at] = line[at:at + 1]
            else:
                line[at:at] = rng.choice(alphabet)
        data = bytes(line)
        found = c_columns(data)
        assert repr(found) == repr(log_columns.python_columns(data)), data
        agreed += 1
        declined += found is None
    assert 300 < declined < agreed - 300  # both outcomes were exercised


def json_path(data: bytes, path: str, first: int = 1):
    from evalpipe.corpus import decode_lines

    records, numbers = parse_records(decode_lines(data, path, first), path, first)
    return records_input(records, path, numbers)


def same_pairs(a, b) -> None:
    assert [tuple(h) for h in a.hypotheses] == [tuple(h) for h in b.hypotheses]
    assert [list(map(type, h.delays)) for h in a.hypotheses] == [list(map(type, h.delays)) for h in b.hypotheses]
    assert a.references == b.references and a.lines == b.lines and a.indices == b.indices
    assert a.source_kind == b.source_kind and a.name == b.name


@pytest.mark.parametrize("name", [n for n in CASES if n not in DECLINED and n not in ("empty", "blank only")])
def test_what_the_reader_takes_reads_as_json_reads_it(name):
    data = CASES[name]
    try:
        expected = json_path(data, "x.log", 3)
    except InputError as error:  # a record the checks refuse: the same error
        with pytest.raises(InputError) as found:
            bytes_input(data, "x.log", 3)
        assert str(found.value) == str(error)
        return
    same_pairs(bytes_input(data, "x.log", 3), expected)


def test_the_real_logs_read_as_json_reads_them():
    data = real_log()
    same_pairs(bytes_input(data, "all.log"), json_path(data, "all.log"))


@pytest.mark.parametrize("name", ["nan", "string delay", "no delays", "a list", "two objects", "unterminated",
                                  "durations", "invalid utf-8", "bom"])
def test_what_the_reader_declines_is_named_as_before(tmp_path, name):
    """Declined bytes go to the json path: a log whose third line is bad is refused naming line 3, as before."""
    good = b'{"delays": [1], "source_length": 2}\n'
    path = tmp_path / "instances.log"
    path.write_bytes(good * 2 + CASES[name] + good)
    assert bytes_input(path.read_bytes(), str(path)) is None
    try:
        json_path(path.read_bytes(), str(path))
    except InputError as error:
        expected = str(error)
    else:
        same_pairs(read_instances(str(path)), json_path(path.read_bytes(), str(path)))
        return
    with pytest.raises(InputError) as found:
        read_instances(str(path))
    assert str(found.value) == expected and ", line 3:" in expected


def test_a_bad_delay_taken_by_the_reader_is_named_as_json_names_it(tmp_path):
    path = tmp_path / "instances.log"
    path.write_bytes(CASES["plain"] + CASES["decreasing delays"])
    with pytest.raises(InputError, match=r"instances.log, line 2: expected non-decreasing delays, got 3 then 1"):
        read_instances(str(path))


@needs_c
def test_values_nested_past_512_levels_go_to_the_json_path(tmp_path):
    """The C reader does not follow nesting past 512 levels: such a log is read by json (which reads some hundreds
    of levels, as Python's recursion limit allows) or refused in one line naming the line."""
    path = tmp_path / "instances.log"
    refused = []
    for depth in (600, 5000):
        line = b'{"delays": [1], "source_length": 2, "x": ' + b"[" * depth + b"]" * depth + b"}\n"
        assert c_columns(line) is None
        path.write_bytes(b'{"delays": [1], "source_length": 2}\n' + line)
        try:
            expected = json_path(path.read_bytes(), str(path))
        except InputError as error:
            assert str(error).endswith("line 2: expected a JSON object, got values nested deeper than Python's json "
                                       "reads")
            with pytest.raises(InputError, match="nested deeper"):
                read_instances(str(path))
            refused.append(depth)
        else:
            same_pairs(read_instances(str(path)), expected)
    assert 5000 in refused


def test_both_readers_give_score_corpus_the_same_output(tmp_path):
    """The one switch (``EVALPIPE_IMPLEMENTATION=python``, as on a machine without a compiler) changes nothing that
    score-corpus prints for a real log, with a pool of two workers."""
    import subprocess

    from conftest import child_env, script

    log = tmp_path / "instances.log"
    log.write_bytes(real_log())
    out = {}
    for implementation in ("c", "python"):
        done = subprocess.run([script("evalpipe"), "score-corpus", "-q", "--instances", str(log), "-m", "bleu", "al",
                                                     "laal", "num_chunks", "-f", "json", "--engine", "pool",
                                                     "--workers", "2"],
                              env={**child_env(), "EVALPIPE_IMPLEMENTATION": implementation}, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        out[implementation] = done.stdout
    assert out["c"] == out["python"] and '"laal"' in out["c"]
