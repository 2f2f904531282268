"""Two-system analyses against compare-mt 0.2.10's own code, run here on real WMT21 system outputs (the
shipped subset, and the full 1,002 segments when ../shared/data is there): every number equal."""
from __future__ import annotations

import json
import subprocess

import pytest

from conftest import child_env, data_roots, script
from evalpipe.scoring import compare_systems as C
from test_report import assert_self_contained

pytest.importorskip("six")  # compare-mt imports it without declaring it
bucketers = pytest.importorskip("compare_mt.bucketers")
from compare_mt import corpus_utils, ngram_utils, scorers, stat_utils  # noqa: E402

PAIRS = [("Facebook-AI", "ICL"), ("VolcTrans-GLAT", "UEdin")]


def _load(root, a, b):
    news = root / "wmt21.news"
    ref = str(news / "references" / "en-de.refA.txt")
    outs = [str(news / "system-outputs" / "en-de" / f"{name}.txt") for name in (a, b)]
    return ref, outs, corpus_utils.load_tokens(ref), [corpus_utils.load_tokens(p) for p in outs]


@pytest.mark.parametrize("root", data_roots())
@pytest.mark.parametrize("a, b", PAIRS)
def test_every_analysis_equals_compare_mt(root, a, b):
    _, _, ref, outs = _load(root, a, b)
    bucketer = bucketers.FreqWordBucketer(freq_data=ref)
    theirs = bucketer.calc_statistics(ref, outs)[0]
    mine = C.word_accuracy_by_frequency(ref, outs)
    assert mine["buckets"] == bucketer.bucket_strs
    assert mine["systems"] == [[tuple(row) for row in rows] for rows in theirs]

    lengths, bleu = bucketers.LengthSentenceBucketer(), scorers.BleuScorer()
    mine = C.bleu_by_length(ref, outs)
    assert mine["buckets"] == lengths.bucket_strs
    assert mine["bleu"] == [[bleu.score_corpus(r, o)[0] for o, r, _ in lengths.create_bucketed_corpus(out, ref=ref)]
                            for out in outs]
    assert C.comparemt_bleu([C.comparemt_bleu_stats(r, o) for r, o in zip(ref, outs[0])]) == \
        bleu.score_corpus(ref, outs[0])[0]

    matches = [ngram_utils.compare_ngrams(ref, out)[1] for out in outs]
    salient = stat_utils.extract_salient_features(matches[0], matches[1], alpha=1.0)
    mine = C.characteristic_ngrams(ref, *outs)
    assert {g: v[0] for g, v in mine.items()} == salient
    assert all((v[1], v[2]) == (matches[0][g], matches[1][g]) for g, v in mine.items())

    sentbleu = scorers.SentBleuScorer()
    for out in outs:
        assert [C.sentence_bleu(r, o) for r, o in zip(ref, out)] == [sentbleu.score_sentence(r, o)[0]
                                                                     for r, o in zip(ref, out)]


@pytest.mark.parametrize("root", data_roots())
def test_sentence_differences_are_compare_mts_list(root, capsys, monkeypatch):
    from compare_mt import compare_mt_main, reporters

    monkeypatch.setattr(reporters, "sys_names", ["sys1", "sys2"])  # what compare-mt's main sets

    _, _, ref, outs = _load(root, *PAIRS[0])
    outs[1] = outs[1][:3] + outs[0][3:5] + outs[1][5:]  # two sentences the systems share
    ref, outs = ref + ref[:2], [out + out[:2] for out in outs]  # two repeated (output, output, reference) triples
    reporter = compare_mt_main.generate_sentence_examples(ref, outs)
    capsys.readouterr()
    theirs = [(d, s1, s2, i) for d, s1, s2, _, _, i in reporter.scorediff_lists[0]]
    assert C.sentence_differences(ref, *outs) == theirs and len(theirs) == len(ref) - 2


def test_compare_command_json_and_report(tmp_path):
    pytest.importorskip("matplotlib")
    from evalpipe.report import figures

    ref_path, outs, ref, toks = _load(data_roots()[0].values[0], *PAIRS[0])
    report = tmp_path / "compare.html"
    completed = subprocess.run([script("evalpipe"), "compare", "-r", ref_path, *outs, "-f", "json", "--report",
                                str(report), "--top", "5", "--examples", "3"], capture_output=True, text=True,
                               env=child_env(), timeout=300)
    assert completed.returncode == 0, completed.stderr
    doc = json.loads(completed.stdout)
    assert doc["systems"] == list(PAIRS[0]) and doc["sentences"] == len(ref)
    assert doc["bleu"] == [scorers.BleuScorer().score_corpus(ref, out)[0] for out in toks]
    assert len(doc["ngrams"]["system1"]) == 5 and all(row[1] > 0.5 for row in doc["ngrams"]["system1"])
    assert len(doc["examples"]["system2"]) <= 3 and all(e["sentbleu"][1] > e["sentbleu"][0]
                                                        for e in doc["examples"]["system2"])
    html = report.read_text(encoding="utf-8")
    assert_self_contained(html)
    assert html.count("<svg") == 4 and "compare-mt 0.2.10" in html
    left = figures.bucket_figure(doc).axes[0]
    heights = [p.get_height() for p in left.patches]
    assert heights == doc["length"]["bleu"][0] + doc["length"]["bleu"][1]
    again = tmp_path / "again.html"
    (tmp_path / "c.json").write_text(completed.stdout, encoding="utf-8")
    assert subprocess.run([script("evalpipe"), "report", str(tmp_path / "c.json"), "-o", str(again)],
                          env=child_env(), timeout=300, capture_output=True).returncode == 0
    assert again.read_text(encoding="utf-8") == html


def test_line_counts_must_agree(tmp_path):
    ref_path, outs, _, _ = _load(data_roots()[0].values[0], *PAIRS[0])
    short = tmp_path / "short.txt"
    short.write_text("one line\n", encoding="utf-8")
    completed = subprocess.run([script("evalpipe"), "compare", "-r", ref_path, outs[0], str(short)],
                               capture_output=True, text=True, env=child_env(), timeout=120)
    assert completed.returncode == 1 and "line counts differ" in completed.stderr
    assert str(short) in completed.stderr and "has 1 lines" in completed.stderr  # the file is named
