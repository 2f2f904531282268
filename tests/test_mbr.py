"""Minimum Bayes risk decoding against the anchors' own code: sacrebleu's sentence scores (every pair), fastchrf
0.2.1 (``pairwise_chrf``, ``aggregate_chrf``), mbrs 0.1.8 (``DecoderMBR``, ``DecoderAggregateMBR`` with its
BLEU, chrF, chrF++ and TER metrics; run by ``tests/anchors/mbrs_decode.py`` in a subprocess, mbrs installed
from PyPI with ``--no-deps`` now, the script says how it avoids mbrs's eager neural-metric imports).
Candidates: the 14 real WMT21 en-de outputs of ``tests/data`` (10 systems and 3 human references as
candidates too, so exact duplicates give ties) per segment."""
from __future__ import annotations

import json
import logging
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sacrebleu

from conftest import NEWS, child_env, script
from evalpipe import load_metric, mbr
from evalpipe.mbr import candidates as readers, matrix as matrices_file
from evalpipe.evaluators.kernels import pairwise_ngrams as kernel

SYSTEMS = sorted((NEWS / "system-outputs" / "en-de").glob("*.txt"))
ANCHOR = Path(__file__).parent / "anchors" / "mbrs_decode.py"


@pytest.fixture(scope="module")
def pools():
    outs = [p.read_text(encoding="utf-8").splitlines() for p in SYSTEMS]
    return [[o[i] for o in outs] for i in range(len(outs[0]))]


def test_kernel_c_equals_python_reference(monkeypatch):
    rng = random.Random(5)
    for _ in range(200):
        lens = [rng.randint(0, 12) for _ in range(rng.randint(1, 10))]
        alphabet = rng.choice([(0, 1, 2, 3), (0, 7, 2 ** 31, 2 ** 32 - 1)])  # the largest ids pack exactly too
        units = [rng.choice(alphabet) for _ in range(sum(lens))]
        starts = np.r_[0, np.cumsum(lens)]
        bounds = [sorted(rng.randint(0, len(lens)) for _ in range(2)) for _ in range(2 * rng.randint(0, 3))]
        hyps, refs = [v for b in bounds[0::2] for v in b], [v for b in bounds[1::2] for v in b]
        order = rng.randint(1, 6)
        got = (kernel.pairwise(units, starts, hyps, refs, order), kernel.aggregate(units, starts, hyps, refs, order))
        monkeypatch.setenv("EVALPIPE_IMPLEMENTATION", "python")
        want = (kernel.pairwise(units, starts, hyps, refs, order), kernel.aggregate(units, starts, hyps, refs, order))
        monkeypatch.delenv("EVALPIPE_IMPLEMENTATION")
        assert all((a == b).all() and a.shape == b.shape for a, b in zip(got, want))
        pairs, at = [], [0]  # some of each segment's pairs, in any order: the rows of those pairs
        everything, rows_at = [], 0
        for g in range(len(hyps) // 2):
            grid = [(h, r) for h in range(hyps[2 * g], hyps[2 * g + 1]) for r in range(refs[2 * g], refs[2 * g + 1])]
            picked = rng.sample(range(len(grid)), rng.randint(0, len(grid)))
            pairs += [v for k in picked for v in grid[k]]
            everything += [rows_at + k for k in picked]
            rows_at += len(grid)
            at.append(len(pairs) // 2)
        native = kernel.profiles(units, starts, refs, order)
        monkeypatch.setenv("EVALPIPE_IMPLEMENTATION", "python")
        reference = kernel.profiles(units, starts, refs, order)
        monkeypatch.delenv("EVALPIPE_IMPLEMENTATION")
        assert [m.shape for m in native] == [m.shape for m in reference]
        assert all((a == b).all() for a, b in zip(native, reference))
        chosen = kernel.selected(units, starts, hyps, refs, order, pairs, at)
        assert (chosen == got[0][everything]).all() and chosen.shape == (len(everything), order)
        monkeypatch.setenv("EVALPIPE_IMPLEMENTATION", "python")
        assert (kernel.selected(units, starts, hyps, refs, order, pairs, at) == chosen).all()
        monkeypatch.delenv("EVALPIPE_IMPLEMENTATION")
    for implementation in ("c", "python"):  # a pair outside its segment, offsets that do not add up: refused
        monkeypatch.setenv("EVALPIPE_IMPLEMENTATION", implementation)
        for pairs, at in (([0, 2], [0, 1]), ([0, 0], [0, 2]), ([0, 0, 1], [0, 1])):
            with pytest.raises(ValueError, match="pairs of \\(candidate, pseudo-reference\\) sentence numbers"):
                kernel.selected([1, 2, 3], [0, 1, 2, 3], [0, 2], [0, 2], 2, pairs, at)
        monkeypatch.delenv("EVALPIPE_IMPLEMENTATION")
    for bad in (-1, 2 ** 32):  # both refuse a unit the key cannot hold
        for implementation in ("c", "python"):
            monkeypatch.setenv("EVALPIPE_IMPLEMENTATION", implementation)
            with pytest.raises(ValueError, match=r"units must be ids in 0 \.\. 2\^32 - 1"):
                kernel.aggregate([1, bad], [0, 2], [0, 1], [0, 1], 2)
            monkeypatch.delenv("EVALPIPE_IMPLEMENTATION")
    rows = np.array([[n, r] + c + t for n, r, c, t in
                     ((rng.randint(0, 30), rng.randint(0, 30), [rng.randint(0, 5) for _ in range(4)],
                       [rng.randint(0, 30) for _ in range(4)]) for _ in range(500))], dtype=np.int64)
    for smooth in ("exp", "floor", "add-k", "none"):
        for effective in (False, True):
            c = kernel.bleu(rows, 4, smooth, 0.1, effective)
            monkeypatch.setenv("EVALPIPE_IMPLEMENTATION", "python")
            assert (c == kernel.bleu(rows, 4, smooth, 0.1, effective)).all()
            monkeypatch.delenv("EVALPIPE_IMPLEMENTATION")


@pytest.mark.parametrize("name, options", [("chrf", {}), ("chrf", {"word_order": 2}), ("bleu", {}),
                                           ("bleu", {"tokenize": "intl"})])
def test_rows_of_the_cells_asked_are_those_of_every_pair(pools, name, options):
    """Probabilistic MBR asks for scattered cells: each segment's n-grams counted once and only those pairs
    matched give the rows of every-pair counting, for the pairs asked, in the order asked."""
    metric = load_metric(name, **options)
    rng = random.Random(7)
    segments = pools[:20]
    full = metric.pairwise_rows(segments, segments)
    cells, want, at = [], [], 0
    for cands in segments:
        n = len(cands)
        picked = rng.sample(range(n * n), rng.randint(0, n * n // 4))
        cells.append(([k // n for k in picked], [k % n for k in picked]))
        want += [at + k for k in picked]
        at += n * n
    assert (metric.pairwise_rows(segments, segments, cells=cells) == full[want]).all()


def test_statistic_vectors_count_every_ngram_of_each_pseudo_reference(pools):
    """Centroid MBR's vectors for chrF: a row a pseudo-reference, its count of each of the segment's distinct
    character n-grams (whitespace removed, orders 1-6), one column each n-gram met in any of them."""
    from collections import Counter

    segments = pools[:10]
    for rows, refs in zip(load_metric("chrf").profile_rows(segments), segments):
        grams = [Counter(t[p:p + n] for n in range(1, 7) for p in range(len(t) - n + 1))
                 for t in ("".join(r.split()) for r in refs)]
        assert rows.shape == (len(refs), len(set().union(*grams)))
        for row, counted in zip(rows, grams):
            assert sorted(row[row > 0].tolist()) == sorted(counted.values())


def test_kernel_threads_change_no_bit(pools):
    """An automatic pool whose workers would idle (less work than it pays to send) computes here, its n-gram
    kernels on as many threads as it has workers, chunks of segments at once: every expected utility is the one
    computed on one thread, for exact and aggregate MBR with chrF, chrF++ and BLEU."""
    from evalpipe.engines import make_engine
    from evalpipe.engines.base import kernel_threads
    from evalpipe.mbr import Decoder

    seen = []
    for name, options in (("chrf", {}), ("chrf", {"word_order": 2}), ("bleu", {})):
        metric = load_metric(name, **options)
        rows = metric.pairwise_rows

        def counted(*args, **kwargs):
            seen.append(kernel_threads())
            return rows(*args, **kwargs)

        metric.pairwise_rows = counted
        for decoder in ("mbr", "aggregate"):
            alone = mbr.decode(metric, pools, decoder=Decoder(decoder))
            with make_engine("pool", workers=2, min_work=10 ** 9) as engine:
                threaded = mbr.decode(metric, pools, decoder=Decoder(decoder), engine=engine)
            assert [c.utilities for c in threaded] == [c.utilities for c in alone]
            assert [c.index for c in threaded] == [c.index for c in alone]
    assert set(seen) == {1, 2}


@pytest.mark.parametrize("name, options", [
    ("chrf", {}), ("chrf", {"word_order": 2}), ("chrf", {"lowercase": True, "beta": 1, "char_order": 4}),
    ("bleu", {}), ("bleu", {"effective_order": True}), ("bleu", {"tokenize": "intl", "smooth_method": "floor"}),
    ("bleu", {"smooth_method": "add-k", "max_ngram_order": 3}), ("ter", {})])
def test_every_pair_is_sacrebleus_sentence_score(pools, name, options):
    logging.disable(logging.WARNING)  # sacrebleu's advice on effective_order, once per sentence
    try:
        segments = pools[:12] if name != "ter" else [p[:6] for p in pools[:4]]
        theirs = {"chrf": sacrebleu.CHRF, "bleu": sacrebleu.BLEU, "ter": sacrebleu.TER}[name](**options)
        matrices = mbr.pairwise_batch(load_metric(name, **options), segments)
        for seg, m in zip(segments, matrices):
            want = np.array([[theirs.sentence_score(h, [r]).score for r in seg] for h in seg])
            assert (m == want).all(), np.abs(m - want).max()
        other = [list(reversed(p)) + ["", "x"] for p in segments]  # separate pseudo-references, empty ones too
        for seg, refs, m in zip(segments, other, mbr.pairwise_batch(load_metric(name, **options), segments, other)):
            assert (m == np.array([[theirs.sentence_score(h, [r]).score for r in refs] for h in seg])).all()
    finally:
        logging.disable(logging.NOTSET)


def test_chrf_equals_fastchrf(pools):
    fastchrf = pytest.importorskip("fastchrf")
    chrf = load_metric("chrf")
    assert np.array_equal(np.array(mbr.pairwise_batch(chrf, pools)), np.array(fastchrf.pairwise_chrf(pools, pools)))
    got = np.array(mbr.aggregate_utilities(chrf, pools))
    assert got == pytest.approx(np.array(fastchrf.aggregate_chrf(pools, pools)), rel=1e-12, abs=1e-12)


def run_mbrs(mbrs_path, tmp_path, metric, decoder, segments, lprobs=None):
    path = tmp_path / "candidates.json"
    path.write_text(json.dumps(segments), encoding="utf-8")
    extra = []
    if lprobs is not None:
        extra = [str(tmp_path / "lprobs.json")]
        Path(extra[0]).write_text(json.dumps(lprobs), encoding="utf-8")
    env = child_env()
    env["PYTHONPATH"] = mbrs_path
    done = subprocess.run([sys.executable, str(ANCHOR), metric, decoder, str(path), *extra], capture_output=True,
                          text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)["segments"]


@pytest.mark.parametrize("metric, decoder, name, options", [
    ("chrf", "mbr", "chrf", {}), ("chrf++", "mbr", "chrf", {"word_order": 2}),
    ("bleu", "mbr", "bleu", {"effective_order": True}), ("ter", "mbr", "ter", {}),
    ("chrf", "aggregate_mbr", "chrf", {}), ("chrf++", "aggregate_mbr", "chrf", {"word_order": 2}),
    ("bleu", "aggregate_mbr", "bleu", {"effective_order": True})])
def test_choices_and_expected_utilities_equal_mbrs(pools, mbrs_path, tmp_path, metric, decoder, name, options):
    """mbrs computes in float32 (its expected utilities are float32 means); evalpipe in float64: the utilities
    agree to float32 precision and the choices are the same."""
    # mbrs scores pair by pair with sacrebleu: a part of the pool keeps this test short (ties included)
    segments = pools[:{"chrf": 40, "chrf++": 30, "bleu": 60, "ter": 6}[metric] if decoder == "mbr" else 60]
    want = run_mbrs(mbrs_path, tmp_path, metric, decoder, segments)
    metric = load_metric(name, **options)
    got = mbr.decode(metric, segments, aggregate=decoder == "aggregate_mbr")
    same = mbr.decode(metric, segments, aggregate=decoder == "aggregate_mbr", ties="mbrs")
    for g, (mine, exact, theirs) in enumerate(zip(got, same, want)):
        assert mine.utilities == pytest.approx(theirs["utilities"], rel=2e-6, abs=2e-5), g
        assert exact.index == theirs["choice"], g  # mbrs's own tie rule: torch.topk of float32 utilities
        # the default rule differs only among exact ties, where it takes the first
        assert mine.index == theirs["choice"] or \
            np.float32(mine.utilities[mine.index]) == np.float32(mine.utilities[theirs["choice"]]), g


def test_command_line_forms_agree(tmp_path, pools):
    """System files, an n-best list and JSON samples give the same choices; -f json adds the utilities and how
    often each system was chosen; --output writes the file."""
    systems = [str(p) for p in SYSTEMS]
    nbest = tmp_path / "nbest.txt"
    nbest.write_text("".join(f"{g} ||| {c} ||| f=1 ||| -1.5\n" for g, seg in enumerate(pools) for c in seg), "utf-8")
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps(seg) + "\n" for seg in pools), "utf-8")
    outputs = []
    for given in (systems, ["--nbest", str(nbest)], ["--samples", str(samples)]):
        done = subprocess.run([script("evalpipe"), "mbr", *given], capture_output=True, text=True, env=child_env(),
                              timeout=120)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1] == outputs[2]
    chrf = load_metric("chrf")
    assert outputs[0].splitlines() == [c.text for c in mbr.decode(chrf, pools)]
    done = subprocess.run([script("evalpipe"), "mbr", *systems, "-m", "bleu", "-o", "effective_order=true", "-f",
                           "json", "--output", str(tmp_path / "deep" / "mbr.json")], capture_output=True, text=True,
                          env=child_env(), timeout=120)
    assert done.returncode == 0 and done.stdout == "", done.stderr
    doc = json.loads((tmp_path / "deep" / "mbr.json").read_text("utf-8"))
    assert sum(doc["chosen_per_system"].values()) == len(pools) == len(doc["segments"])
    first = doc["segments"][0]
    assert first["utilities"] == mbr.expected_utilities(
        mbr.pairwise(load_metric("bleu", effective_order=True), pools[0])).tolist()


def test_weights_and_pseudo_references(tmp_path, pools):
    refs = tmp_path / "refs.jsonl"
    refs.write_text("".join(json.dumps(seg[:3]) + "\n" for seg in pools), "utf-8")
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps({"candidates": seg, "weights": [3, 1, 0]}) + "\n" for seg in pools), "utf-8")
    done = subprocess.run([script("evalpipe"), "mbr", "--samples", str(samples), "--pseudo-references", str(refs),
                           "-f", "json"], capture_output=True, text=True, env=child_env(), timeout=120)
    assert done.returncode == 0, done.stderr
    chrf = load_metric("chrf")
    for seg, row in zip(pools, json.loads(done.stdout)["segments"]):
        want = mbr.pairwise(chrf, seg, seg[:3]) @ np.array([0.75, 0.25, 0.0])
        assert row["utilities"] == pytest.approx(want.tolist(), rel=1e-15) and row["choice"] == int(np.argmax(want))


@pytest.mark.parametrize("args, expected", [
    ([], "give the candidates one way"),
    (["--nbest", "NBEST", "--samples", "SAMPLES"], "give the candidates one way"),
    (["--nbest", "BAD_NBEST"], "BAD_NBEST: segment id 1 has no lines"),
    (["--samples", "BAD_SAMPLES"], 'BAD_SAMPLES, line 1: expected "candidates" as a non-empty list of strings'),
    (["--samples", "SAMPLES", "--pseudo-references", "SHORT"], "has 1 segments, the candidates 2"),
    (["--samples", "WEIGHTED"], "segment 1: 1 weights for 2 pseudo-references"),
    (["--samples", "SAMPLES", "-m", "ter", "--aggregate"], "reference aggregation needs n-gram statistics"),
    (["--demo", "--samples", "SAMPLES"], "--demo chooses among the shipped systems"),
])
def test_bad_input_is_one_line(tmp_path, args, expected):
    files = {"NBEST": "0 ||| a b ||| x ||| 1\n1 ||| c ||| x ||| 1\n", "BAD_NBEST": "0 ||| a ||| x\n2 ||| b ||| x\n",
             "SAMPLES": '["a b", "a c"]\n["x", "y"]\n', "BAD_SAMPLES": '{"candidates": []}\n', "SHORT": '["a"]\n',
             "WEIGHTED": '{"candidates": ["a", "b"], "weights": [1]}\n'}
    for name, text in files.items():
        (tmp_path / name).write_text(text, "utf-8")
    argv = [str(tmp_path / a) if a in files else a for a in args]
    done = subprocess.run([script("evalpipe"), "mbr", *argv], capture_output=True, text=True, env=child_env(),
                          timeout=120)
    assert done.returncode in (1, 2) and expected in done.stderr.replace(str(tmp_path) + "/", ""), done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_demo_runs_on_the_shipped_systems():
    done = subprocess.run([script("evalpipe"), "mbr", "--demo"], capture_output=True, text=True, env=child_env(),
                          timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("300 segments x 10 WMT21 en-de systems") and lines[2].startswith("MBR (chrf)")
    assert any(line.startswith("oracle") for line in lines)


def test_mbr_request_through_a_real_pipe(pools):
    """``evalpipe serve chrf`` answers MBR requests one by one (each reply flushed before the next request is
    written), survives a bad one, and equals the library."""
    proc = subprocess.Popen([script("evalpipe"), "serve", "chrf"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=child_env())
    try:
        chrf = load_metric("chrf")
        for seg in pools[:5]:
            proc.stdin.write("MBR ||| " + " ||| ".join(seg) + "\n")
            proc.stdin.flush()
            index, utilities = proc.stdout.readline().rstrip("\n").split(" ||| ")
            want = mbr.decode(chrf, [seg])[0]
            assert int(index) == want.index and [float(u) for u in utilities.split()] == want.utilities
        proc.stdin.write('MBR ||| {"candidates": "not a list"}\n')
        proc.stdin.flush()
        assert proc.stdout.readline().startswith('ERROR ||| MBR: expected "candidates" as a non-empty list')
        request = {"candidates": pools[0][:4], "pseudo_references": pools[0][4:], "aggregate": True}
        proc.stdin.write("MBR ||| " + json.dumps(request) + "\n")
        proc.stdin.flush()
        index, utilities = proc.stdout.readline().rstrip("\n").split(" ||| ")
        want = mbr.aggregate_utilities(chrf, [pools[0][:4]], [pools[0][4:]])[0]
        assert [float(u) for u in utilities.split()] == want.tolist() and int(index) == int(np.argmax(want))
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)


def test_report_is_one_self_contained_page(tmp_path):
    pytest.importorskip("matplotlib")
    page = tmp_path / "out" / "mbr.html"
    done = subprocess.run([script("evalpipe"), "mbr", *map(str, SYSTEMS), "--report", str(page)], capture_output=True,
                          text=True, env=child_env(), timeout=120)
    assert done.returncode == 0, done.stderr
    from test_report import assert_self_contained

    html = page.read_text("utf-8")
    assert assert_self_contained(html).tags.count("svg") == 1
    assert "How often each system was chosen" in html and ">Facebook-AI</td>" in html


def test_ties_mbrs_without_torch_says_so(monkeypatch):
    """Found on a core install: --ties mbrs without torch was an internal error; it is one line naming torch (a
    missing package: exit 1, as every environment problem)."""
    from evalpipe.errors import MissingDependency

    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    for aggregate in (False, True):
        with pytest.raises(MissingDependency, match="it needs torch: pip install torch"):
            mbr.decode(load_metric("chrf"), [["a b", "a c"]], aggregate=aggregate, ties="mbrs")


def _mbr(*args, cwd=None):
    return subprocess.run([script("evalpipe"), "mbr", *map(str, args)], capture_output=True, text=True,
                          env=child_env(), timeout=600, cwd=cwd)


@pytest.mark.parametrize("extra", [[], ["--aggregate"], ["-m", "ter"], ["-m", "bleu", "--ties", "mbrs"]])
def test_saved_utilities_decode_as_computed_ones(tmp_path, extra):
    """``--save-utilities FILE.npz`` then ``--utilities FILE.npz``: the same choices, expected utilities, metric and
    signature, computing nothing (the second run takes no -m); the file holds every segment's matrix (one column
    under --aggregate), all cells computed, and the texts' hashes."""
    if "--ties" in extra:
        pytest.importorskip("torch")
    saved = tmp_path / "u.npz"
    first = _mbr(*SYSTEMS, *extra, "--save-utilities", saved, "-f", "json")
    assert first.returncode == 0, first.stderr
    ties = ["--ties", "mbrs"] if "--ties" in extra else []
    second = _mbr(*SYSTEMS, "--utilities", saved, "-f", "json", *ties)
    assert second.returncode == 0, second.stderr
    a, b = json.loads(first.stdout), json.loads(second.stdout)
    assert a["segments"] == b["segments"] and a["signature"] == b["signature"] and a["metric"] == b["metric"]
    assert b["aggregate"] == ("--aggregate" in extra) and b["utilities_from"] == str(saved)
    matrices, meta = matrices_file.load(str(saved))
    assert len(matrices) == len(a["segments"]) and all(m.computed.all() for m in matrices)
    assert {m.values.shape[1] for m in matrices} == {1 if "--aggregate" in extra else len(SYSTEMS)}
    metric = load_metric(extra[extra.index("-m") + 1] if "-m" in extra else "chrf")
    assert meta["higher_is_better"] == metric.higher_is_better
    if not extra:
        cands = readers.from_systems([str(p) for p in SYSTEMS])
        assert np.array_equal(matrices[3].values, mbr.pairwise(metric, cands[3]))


def test_saved_utilities_with_weights_and_a_model_metric(tmp_path):
    """Weights over pseudo-references apply to saved matrices as to computed ones (--samples with weights); a model
    metric (a tiny COMET) saves its float32 matrices and decodes them to the same choices."""
    pytest.importorskip("torch")
    pytest.importorskip("tokenizers")
    cands = readers.from_systems([str(p) for p in SYSTEMS[:5]])[:12]
    weights = [[1, 2, 3, 4, 5][g % 5:] + [1, 2, 3, 4, 5][:g % 5] for g in range(12)]
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps({"candidates": c, "weights": w}) + "\n" for c, w in zip(cands, weights)))
    plain = tmp_path / "plain.jsonl"
    plain.write_text("".join(json.dumps(c) + "\n" for c in cands))
    assert _mbr("--samples", plain, "--save-utilities", tmp_path / "u.npz").returncode == 0
    weighted = _mbr("--samples", samples, "-f", "json")
    from_file = _mbr("--samples", samples, "--utilities", tmp_path / "u.npz", "-f", "json")
    assert from_file.returncode == 0, from_file.stderr
    got, want = json.loads(from_file.stdout)["segments"], json.loads(weighted.stdout)["segments"]
    assert [s["choice"] for s in got] == [s["choice"] for s in want]
    assert np.allclose([s["utilities"] for s in got], [s["utilities"] for s in want], rtol=0, atol=1e-12)
    from evalpipe import tiny_comet

    model = tiny_comet.build(tmp_path / "comet", "regression")
    src = tmp_path / "src.en"
    src.write_text("\n".join(f"Source sentence {g}." for g in range(12)) + "\n")
    files = []
    for k in range(5):
        files.append(tmp_path / f"c{k}.de")
        files[-1].write_text("\n".join(c[k] for c in cands) + "\n", encoding="utf-8")
    common = ["-m", "comet", "-o", f"comet.model={model}", "--source", src]
    computed = _mbr(*files, *common, "--save-utilities", tmp_path / "c.npz", "-f", "json")
    assert computed.returncode == 0, computed.stderr
    again = _mbr(*files, "--utilities", tmp_path / "c.npz", "-f", "json")
    assert json.loads(again.stdout)["segments"] == json.loads(computed.stdout)["segments"]


def test_a_utilities_file_of_other_texts_or_no_file_is_one_line(tmp_path):
    saved = tmp_path / "u.npz"
    assert _mbr(*SYSTEMS[:4], "--save-utilities", saved).returncode == 0
    changed = tmp_path / "changed.txt"
    lines = SYSTEMS[3].read_text(encoding="utf-8").splitlines()
    lines[5] = lines[5] + " (edited)"
    changed.write_text("\n".join(lines) + "\n", encoding="utf-8")
    not_npz = tmp_path / "u.json"
    not_npz.write_text("{}")
    broken = tmp_path / "broken.npz"
    broken.write_bytes(saved.read_bytes()[:200])
    pseudo = tmp_path / "pseudo.jsonl"
    pseudo.write_text("".join(json.dumps(list(seg[:3])) + "\n"
                              for seg in readers.from_systems([str(p) for p in SYSTEMS[:4]])))
    for args, message in (
            ([*SYSTEMS[:3], "--utilities", saved], "segment 1 has 4 candidates in the file, 3 given"),
            ([*SYSTEMS[:3], changed, "--utilities", saved], "segment 6's candidates are not the texts"),
            ([*SYSTEMS[:4], "--pseudo-references", pseudo, "--utilities", saved], "segment 1's pseudo-references"),
            ([*SYSTEMS[:4], "--utilities", not_npz], "not an npz archive"),
            ([*SYSTEMS[:4], "--utilities", broken], "not a utilities file"),
            ([*SYSTEMS[:4], "--utilities", saved, "-m", "bleu"], "-m and --utilities cannot go together"),
            ([*SYSTEMS[:4], "--utilities", saved, "--aggregate"], "--aggregate and --utilities cannot go together"),
            ([*SYSTEMS[:4], "--utilities", saved, "--save-utilities", tmp_path / "x.npz"], "cannot go together")):
        done = _mbr(*args)
        errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
        assert done.returncode != 0 and len(errors) == 1 and message in errors[0], (args, done.stderr)
        assert "Traceback" not in done.stderr and done.stdout == ""
    assert not (tmp_path / "x.npz").exists()


def test_reference_lprobs_equal_mbrs(pools, mbrs_path, tmp_path):
    """``--reference-lprobs FILE.jsonl`` (a JSON list a segment): each pseudo-reference weighted by the softmax of
    its log-probability, against mbrs 0.1.8's ``DecoderMBR.decode(..., reference_lprobs=...)`` with chrF: the
    expected utilities to float32 precision, the same choices with ``--ties mbrs``; through the console script and
    from saved utilities alike.  A file of the wrong shape or with a non-finite value is one line."""
    rng = random.Random(7)
    segments = pools[:30]
    lprobs = [[round(rng.uniform(-12.0, -0.5), 3) for _ in seg] for seg in segments]
    want = run_mbrs(mbrs_path, tmp_path, "chrf", "mbr", segments, lprobs)
    samples, lp_file = tmp_path / "samples.jsonl", tmp_path / "lprobs.jsonl"
    samples.write_text("".join(json.dumps(seg) + "\n" for seg in segments), encoding="utf-8")
    lp_file.write_text("".join(json.dumps(lp) + "\n" for lp in lprobs), encoding="utf-8")
    base = ["--samples", samples, "--reference-lprobs", lp_file, "-f", "json", "--ties", "mbrs"]
    done = _mbr(*base, "--save-utilities", tmp_path / "u.npz")
    again = _mbr("--samples", samples, "--reference-lprobs", lp_file, "-f", "json", "--ties", "mbrs", "--utilities",
                 tmp_path / "u.npz")
    assert done.returncode == 0 and again.returncode == 0, done.stderr + again.stderr
    got = json.loads(done.stdout)["segments"]
    assert got == json.loads(again.stdout)["segments"]
    for g, (mine, theirs) in enumerate(zip(got, want)):
        assert mine["utilities"] == pytest.approx(theirs["utilities"], rel=2e-6, abs=2e-5), g
        assert mine["choice"] == theirs["choice"], g
    uniform = json.loads(_mbr("--samples", samples, "-f", "json").stdout)["segments"]
    assert sum(a["choice"] != b["choice"] for a, b in zip(got, uniform)) > 0  # the weights matter here
    for body, message in (("[1, 2]\n", "has 1 lines, the candidates 30 segments"),
                          ("".join(json.dumps(lp[:-1]) + "\n" for lp in lprobs),
                           f"expected {len(segments[0])} log-probabilities"),
                          ("".join((json.dumps(lp) if g else "[" + ", ".join(["NaN"] * len(lp)) + "]") + "\n"
                                   for g, lp in enumerate(lprobs)), "expected finite log-probabilities"),
                          ("".join('"x"\n' for _ in lprobs), "expected a JSON list of numbers")):
        bad = tmp_path / "bad.jsonl"
        bad.write_text(body, encoding="utf-8")
        done = _mbr("--samples", samples, "--reference-lprobs", bad)
        errors = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
        assert done.returncode != 0 and len(errors) == 1 and message in errors[0], (message, done.stderr)
    done = _mbr("--samples", samples, "--reference-lprobs", lp_file, "--aggregate")
    assert done.returncode != 0 and "not --aggregate" in done.stderr
