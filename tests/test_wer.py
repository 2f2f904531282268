"""WER (issue 36, part 3) against its anchors running here: jiwer 4.0.0's ``wer`` and ``process_words`` (its
default transform) and SimulEval 1.1.4's ``WERScorer`` (editdistance on ``str.split``), on the shipped real WMT21
outputs and on generated text with every kind of whitespace; the edit-distance kernel's C and Python
implementations against each other and against editdistance."""
from __future__ import annotations

import json
import subprocess
from importlib import resources
from pathlib import Path
from types import SimpleNamespace

import editdistance
import jiwer
import numpy as np
import pytest
from hypothesis import given, strategies as st

from conftest import child_env, script
from evalpipe import load_metric
from evalpipe.evaluators.kernels import edit_distance

DEMO = Path(str(resources.files("evalpipe").joinpath("demo", "wmt21-ende")))
REFS = (DEMO / "ref.de").read_text(encoding="utf-8").splitlines()
SYSTEMS = {p.stem: p.read_text(encoding="utf-8").splitlines() for p in sorted((DEMO / "systems").glob("*.de"))}

WORD = st.sampled_from(["a", "b", "c", "Haus", "haus", "über", ",", ".", "a.b", "日本", "x"])
SPACE = st.sampled_from([" ", "  ", "\t", "\xa0", " \t ", "\n", "\u3000"])


@st.composite
def sentences(draw, allow_empty=True):
    words = draw(st.lists(WORD, min_size=0 if allow_empty else 1, max_size=12))
    spaces = draw(st.lists(SPACE, min_size=len(words) + 1, max_size=len(words) + 1))
    text = spaces[0] * draw(st.booleans()) + "".join(w + s for w, s in zip(words, spaces[1:]))
    return text if draw(st.booleans()) else text.strip()


def simuleval_wer(hyps, refs):
    """SimulEval 1.1.4's own WERScorer on instances holding the texts."""
    from simuleval.evaluator.scorers.quality_scorer import WERScorer

    instances = {i: SimpleNamespace(prediction=h, reference=r) for i, (h, r) in enumerate(zip(hyps, refs))}
    return WERScorer(None)(instances)


def kernels():
    return [edit_distance.python_distances] + ([edit_distance.native_distances] if edit_distance.NATIVE else [])


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_real_outputs_equal_jiwer_and_simuleval(name):
    hyps = SYSTEMS[name]
    ours = load_metric("wer")
    assert ours.corpus_score(hyps, [REFS]) == pytest.approx(100 * jiwer.wer(REFS, hyps), rel=1e-12)
    raw = load_metric("wer", normalize="raw")
    assert raw.corpus_score(hyps, [REFS]) == pytest.approx(simuleval_wer(hyps, REFS), rel=1e-12)
    rows = ours.corpus_stats(hyps, [REFS])
    for hyp, ref, row in zip(hyps[:50], REFS[:50], rows):
        out = jiwer.process_words(ref, hyp)
        assert row == [out.substitutions + out.deletions + out.insertions,
                       out.hits + out.substitutions + out.deletions]


@given(st.lists(st.tuples(sentences(), sentences(allow_empty=False)), min_size=1, max_size=8))
def test_generated_text_equals_both_anchors(pairs):
    hyps, refs = [h for h, _ in pairs], [r for _, r in pairs]
    jiwer_refs_ok = all(r.strip() for r in refs)
    rows = load_metric("wer").corpus_stats(hyps, [refs])
    if jiwer_refs_ok and sum(row[1] for row in rows):
        assert load_metric("wer").corpus_score(hyps, [refs]) == pytest.approx(100 * jiwer.wer(refs, hyps), rel=1e-12)
    raw = load_metric("wer", normalize="raw")
    if refs[0].split():  # SimulEval answers 0 when the first reference has no words (its early return)
        assert raw.corpus_score(hyps, [refs]) == pytest.approx(simuleval_wer(hyps, refs), rel=1e-12)
    for (h, r), row in zip(pairs, raw.corpus_stats(hyps, [refs])):
        assert row == [editdistance.eval(h.split(), r.split()), len(r.split())]


@given(st.lists(st.tuples(st.lists(st.integers(0, 4), max_size=15), st.lists(st.integers(0, 4), max_size=15)),
                min_size=0, max_size=10))
def test_the_kernels_agree_with_each_other_and_editdistance(pairs):
    def flat(side):
        ids = np.array([x for seq in side for x in seq], dtype=np.int64)
        return ids, np.concatenate([[0], np.cumsum([len(s) for s in side])]).astype(np.int64)

    (h, ho), (r, ro) = flat([a for a, _ in pairs]), flat([b for _, b in pairs])
    expected = [editdistance.eval(a, b) for a, b in pairs]
    for kernel in kernels():
        assert kernel(h, ho, r, ro).tolist() == expected


def test_several_references_count_against_the_closest():
    wer = load_metric("wer")
    assert wer.corpus_stats(["a b c", "x y"], [["a b d e", "x"], ["a b c", "p q r"]]) == [[0, 3], [1, 1]]
    assert wer.stats("a b", ["c d", "e f g"]) == [2, 2]  # tied edits: the first reference


@pytest.mark.parametrize("hyps,refs", [(["a b"], [" "]), (["", "a b c"], ["", ""]), (["x y", "a b"], ["", "a b"]),
                                       ([""], [""])])
def test_empty_references_score_as_jiwer_scores_them(hyps, refs):
    """jiwer 4.0 counts a denominator of at least 1: an empty reference's WER is the inserted words (an empty
    hypothesis 0), sentence by sentence and over a corpus."""
    import jiwer

    wer = load_metric("wer")
    assert wer.corpus_score(hyps, [refs]) == pytest.approx(100 * jiwer.wer(refs, hyps), abs=1e-12)
    for h, r in zip(hyps, refs):
        assert wer.score(wer.stats(h, [r])) == pytest.approx(100 * jiwer.wer(r, h), abs=1e-12)


def test_bad_input():
    if edit_distance.NATIVE:
        with pytest.raises(ValueError, match="out of order or out of range"):
            edit_distance.native_distances(np.zeros(1, np.int64), np.array([0, 2]), np.zeros(1, np.int64),
                                           np.array([0, 1]))


def test_through_the_console_script_equals_jiwer(tmp_path):
    name = sorted(SYSTEMS)[0]
    done = subprocess.run([script("evalpipe"), "score-corpus", "-r", str(DEMO / "ref.de"), "-m", "wer", "-f", "json",
                           str(DEMO / "systems" / f"{name}.de")], capture_output=True, text=True, env=child_env(),
                          timeout=120)
    assert done.returncode == 0, done.stderr
    (result,) = json.loads(done.stdout)["results"]
    assert result["score"] == pytest.approx(100 * jiwer.wer(REFS, SYSTEMS[name]), rel=1e-12)
    assert result["signature"] == "wer|norm:jiwer|evalpipe"


@given(st.lists(sentences(), min_size=0, max_size=8))
def test_word_ids_c_equals_the_reference_equals_the_anchors_split(lines):
    expected_words = {"jiwer": [jiwer.ReduceToListOfListOfWords()(jiwer.Strip()(jiwer.RemoveMultipleSpaces()(line)))[0]
                                for line in lines],
                      "raw": [line.split() for line in lines]}
    for mode, words in expected_words.items():
        vocab: dict = {}
        ids = [vocab.setdefault(w, len(vocab)) for ws in words for w in ws]
        implementations = [edit_distance.python_word_ids] + ([edit_distance.native_word_ids] if edit_distance.NATIVE
                                                            else [])
        for word_ids in implementations:
            got_ids, counts = word_ids(lines, mode)
            assert got_ids.tolist() == ids and counts.tolist() == [len(ws) for ws in words], (word_ids, mode)


def test_word_ids_on_every_kind_of_line():
    lines = ["", " ", "a", "a\tb", "a \tb", "\ta\t", "a\xa0b c\u3000\u3000d", "日本語 テキスト", "x" * 5000, "é e\u0301"]
    for mode in edit_distance.MODES:
        reference = edit_distance.python_word_ids(lines, mode)
        if edit_distance.NATIVE:
            native = edit_distance.native_word_ids(lines, mode)
            assert all(a.tolist() == b.tolist() for a, b in zip(native, reference)), mode


@pytest.mark.parametrize("log", ["wait1", "wait10"])
def test_simuleval_logs_through_score_corpus_equal_simulevals_scorer(log):
    from conftest import DATA

    path = DATA / "simul" / "iwslt17-dev2010.de-en" / "derived" / f"{log}.instances.jsonl"
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    expected = simuleval_wer([r["prediction"] for r in records], [r["reference"] for r in records])
    done = subprocess.run([script("evalpipe"), "score-corpus", "--instances", str(path), "-m", "wer", "-o",
                           "wer.normalize=raw", "-f", "json"], capture_output=True, text=True, env=child_env(), timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["results"][0]["score"] == pytest.approx(expected, rel=1e-12)
