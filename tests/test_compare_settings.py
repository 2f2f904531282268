"""``evalpipe compare``'s settings of compare-mt 0.2.10's analyses -- sentence buckets, word accuracies by frequency,
case and label, source words with alignments, word counts, case-insensitivity -- against compare-mt's own command
line given the same settings, on real WMT21 en-de outputs (the shipped subset, 300 segments).

Compared as tests/test_compare_many.py compares the defaults: the whole text line for line, an undefined cell
``-`` where compare-mt prints 0, n-gram lists as multisets of their shares.  The label and alignment files are made
here from the texts (a word's label from its characters; a source word aligned to each reference word it equals,
case aside), so that every bucket and every alignment path is exercised on real sentences.
"""
from __future__ import annotations

import json

import pytest
import sacrebleu

from conftest import data_roots
from test_compare_many import assert_same_ngram_list, files, run, sections, theirs

pytest.importorskip("six")
pytest.importorskip("compare_mt")

SYSTEMS = ("Facebook-AI", "ICL", "UEdin")
NAMES = ["--labels", "sys1,sys2,sys3"]


def _label(word):
    return ("NUM" if any(c.isdigit() for c in word) else "PUNCT" if not any(c.isalnum() for c in word) else
            "CAP" if word[:1].isupper() else "W")


def _lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().split("\n")[:-1]


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """The reference, three systems, the source, and files made from them: word labels of each, alignments of the
    source to the reference, word counts of a fourth system's output."""
    tmp = tmp_path_factory.mktemp("settings")
    root = data_roots()[0].values[0]
    ref, outs = files(root, SYSTEMS)
    source = str(root / "wmt21.news" / "sources" / "en-de.txt")
    labels = {}
    for name, path in [("ref", ref)] + [(f"sys{i}", p) for i, p in enumerate(outs)]:
        labels[name] = str(tmp / f"{name}.labels")
        with open(labels[name], "w", encoding="utf-8") as f:
            f.writelines(" ".join(map(_label, line.strip().split(" "))) + "\n" for line in _lines(path))
    aligns = str(tmp / "align.txt")
    with open(aligns, "w") as f:
        for s, r in zip(_lines(source), _lines(ref)):
            s, r = s.strip().split(" "), r.strip().split(" ")
            pairs = [f"{i}-{j}" for i, a in enumerate(s) for j, b in enumerate(r) if a.lower() == b.lower()]
            f.write(" ".join(pairs or ["0-0"]) + "\n")  # compare-mt cannot read an empty alignment line
    segments = str(tmp / "segments.txt")  # a label a segment: which third of the test set it is in
    n = len(_lines(ref))
    with open(segments, "w") as f:
        f.writelines(("first" if i < n / 3 else "second" if i < 2 * n / 3 else "last") + "\n" for i in range(n))
    counts = str(tmp / "counts.tsv")
    words = {}
    for line in _lines(files(root, ["VolcTrans-GLAT"])[1][0]):
        for w in line.strip().split(" "):
            words[w] = words.get(w, 0) + 1
    with open(counts, "w", encoding="utf-8") as f:
        f.writelines(f"{w}\t{c}\n" for w, c in words.items())
    return {"ref": ref, "outs": outs, "source": source, "labels": labels, "aligns": aligns, "counts": counts,
            "segments": segments, "tmp": tmp}


def assert_same_text(mine, their):
    (mine_rest, mine_grams), (their_rest, their_grams) = sections(mine.splitlines()), sections(their)
    assert len(mine_grams) == len(their_grams) and len(mine_rest) == len(their_rest), (mine, their)
    for a, b in zip(mine_rest, their_rest):
        assert a == b or all(x == y or (x == "-" and float(y) == 0) for x, y in zip(a.split("\t"), b.split("\t"))), (
            a, b)
    for a, b in zip(mine_grams, their_grams):
        assert_same_ngram_list(a, b)


def fill(words, made):
    table = {"SEGMENTS": made["segments"], "LREF": made["labels"]["ref"], "SRC": made["source"], "ALIGN": made["aligns"], "COUNTS": made["counts"],
             "LSYS": ";".join(made["labels"][f"sys{i}"] for i in range(3))}
    out = []
    for w in words:
        for key, value in table.items():
            w = w.replace(key, value)
        out.append(w)
    return out


LABEL_FILES = ["--labels-ref", "LREF"] + [x for i in range(3) for x in ("--labels-sys", f"LSYS{i}")]
SETTINGS = [
    (["--sentence-buckets", "bucket_type=score,score_measure=length"],
     ["--compare_sentence_buckets", "bucket_type=score,score_measure=length"]),
    (["--sentence-buckets", "by=lengthdiff,statistic=score,measure=sentbleu,cutoffs=-5:0:5"],
     ["--compare_sentence_buckets", "bucket_type=lengthdiff,statistic_type=score,score_measure=sentbleu,"
                                    "bucket_cutoffs=-5:0:5"]),
    (["--sentence-buckets", "by=score,statistic=score,measure=sentbleu,cutoffs=20:40:60", "--sentence-buckets",
      "by=length,statistic=score,measure=length,cutoffs=5:15:25"],
     ["--compare_sentence_buckets", "bucket_type=score,statistic_type=score,score_measure=sentbleu,"
                                    "bucket_cutoffs=20:40:60",
      "bucket_type=length,statistic_type=score,score_measure=length,bucket_cutoffs=5:15:25"]),
    (["--sentence-buckets", "by=length,statistic=score,measure=bleu,cutoffs=15:30"],
     ["--compare_sentence_buckets", "bucket_type=length,statistic_type=score,score_measure=bleu,bucket_cutoffs=15:30"]),
    (["--word-buckets", "by=case"], ["--compare_word_accuracies", "bucket_type=case"]),
    (["--sentence-buckets", "by=label,statistic=score,measure=bleu,labels=first+last", "--bucket-labels", "SEGMENTS",
      "--sentence-buckets", "by=label,statistic=score,measure=sentbleu,labels=second"],
     ["--compare_sentence_buckets", "bucket_type=label,statistic_type=score,score_measure=bleu,label_set=first+last,"
                                    "ref_labels=SEGMENTS",
      "bucket_type=label,statistic_type=score,score_measure=sentbleu,label_set=second,ref_labels=SEGMENTS"]),
    (["--examples-by", "length", "--pairs", "0-1;2-1"],
     ["--compare_sentence_examples", "score_type=length,compare_directions=0-1;2-1", "--compare_ngrams",
      "compare_directions=0-1;2-1"]),
    (["--word-buckets", "by=freq,cutoffs=2:20:200", "--word-buckets", "by=case"],
     ["--compare_word_accuracies", "bucket_type=freq,bucket_cutoffs=2:20:200", "bucket_type=case"]),
    (["--word-buckets", "bucket_type=label,label_set=CAP+NUM+PUNCT"] + LABEL_FILES,
     ["--compare_word_accuracies", "bucket_type=label,label_set=CAP+NUM+PUNCT,ref_labels=LREF,out_labels=LSYS"]),
    (["--source", "SRC", "--alignments", "ALIGN"],
     ["--src_file", "SRC", "--compare_src_word_accuracies", "ref_align_file=ALIGN"]),
    (["--ngram-labels", "--ngram-type", "under", "--ngram-max", "3"] + LABEL_FILES,
     ["--compare_ngrams", "compare_type=under,max_ngram_length=3,ref_labels=LREF,out_labels=LSYS"]),
    # one pair: compare-mt's later pairs also list label n-grams neither of their systems has (share 1/2, counts 0
    # and 0), left in its dictionaries by the earlier pairs -- with labels, few enough to reach its lists
    (["--ngram-labels", "--pairs", "2-1"] + LABEL_FILES,
     ["--compare_ngrams", "compare_type=match,compare_directions=2-1,ref_labels=LREF,out_labels=LSYS",
      "--compare_sentence_examples", "compare_directions=2-1"]),
    (["--freq-counts", "COUNTS"], ["--compare_word_accuracies", "bucket_type=freq,freq_count_file=COUNTS"]),
    (["--freq-counts", "COUNTS", "-lc", "--word-buckets", "by=freq,cutoffs=3:30"],
     ["--compare_word_accuracies", "bucket_type=freq,freq_count_file=COUNTS,case_insensitive=True,bucket_cutoffs=3:30",
      "--compare_scores", "score_type=bleu,case_insensitive=True", "score_type=length",
      "--compare_sentence_buckets", "bucket_type=length,statistic_type=score,score_measure=bleu,case_insensitive=True",
      "bucket_type=lengthdiff", "bucket_type=score,score_measure=sentbleu,case_insensitive=True",
      "--compare_ngrams", "compare_type=match,case_insensitive=True",
      "--compare_sentence_examples", "score_type=sentbleu,case_insensitive=True"]),
    (["-lc", "--source", "SRC", "--alignments", "ALIGN", "--word-buckets", "by=case"],
     ["--src_file", "SRC", "--compare_src_word_accuracies", "ref_align_file=ALIGN,case_insensitive=True",
      "--compare_word_accuracies", "bucket_type=case,case_insensitive=True",
      "--compare_scores", "score_type=bleu,case_insensitive=True", "score_type=length",
      "--compare_sentence_buckets", "bucket_type=length,statistic_type=score,score_measure=bleu,case_insensitive=True",
      "bucket_type=lengthdiff", "bucket_type=score,score_measure=sentbleu,case_insensitive=True",
      "--compare_ngrams", "compare_type=match,case_insensitive=True",
      "--compare_sentence_examples", "score_type=sentbleu,case_insensitive=True"]),
]


@pytest.mark.parametrize("mine_flags, their_flags", SETTINGS, ids=[" ".join(m[:2])[:60] for m, _ in SETTINGS])
def test_settings_equal_compare_mts(made, mine_flags, their_flags):
    mine_flags = [made["labels"][f"sys{w[-1]}"] if w.startswith("LSYS") else w for w in mine_flags]
    mine = run("compare", "-r", made["ref"], *made["outs"], *NAMES, *fill(mine_flags, made))
    assert mine.returncode == 0, mine.stderr
    their = [line for line in theirs(made["ref"], made["outs"], *fill(their_flags, made))
             if not line.startswith("Reading frequency from")]
    assert_same_text(mine.stdout, their)


def test_precision_and_recall_are_what_they_say(made):
    """compare-mt 0.2.10 prints recall under ``prec`` and precision under ``rec`` (its report indexes its rows so);
    evalpipe prints each under its name: its prec table is compare-mt's rec table, and the other way round."""
    mine = run("compare", "-r", made["ref"], *made["outs"], *NAMES, "--word-buckets", "by=case,accuracy=prec+rec")
    their = theirs(made["ref"], made["outs"], "--compare_word_accuracies", "bucket_type=case,acc_type=prec+rec")

    def tables(lines):
        start = lines.index("--- word prec+rec by case bucket")
        return lines[start + 2:start + 6], lines[start + 9:start + 13]

    (prec, rec), (their_prec, their_rec) = tables(mine.stdout.splitlines()), tables(their)
    assert prec == their_rec and rec == their_prec and prec != rec
    doc = json.loads(run("compare", "-r", made["ref"], *made["outs"], "--word-buckets", "by=case", "-f",
                         "json").stdout)
    matched, ref_words, out_words, recall, precision, _ = doc["word_buckets"][0]["systems"][0][0]
    assert recall == matched / ref_words and precision == matched / out_words


def test_an_evalpipe_metric_is_a_measure(made):
    """``measure=chrf``: a bucket's score is sacrebleu's corpus chrF of its sentences; bucketing by chrF puts each
    sentence where sacrebleu's sentence chrF says."""
    ref, outs = made["ref"], made["outs"]
    doc = json.loads(run("compare", "-r", ref, *outs, "-f", "json", "--sentence-buckets",
                         "by=length,statistic=score,measure=chrf,cutoffs=15:30", "--sentence-buckets",
                         "by=score,measure=chrf,cutoffs=40:60").stdout)
    refs = _lines(ref)
    lengths = [len(r.strip().split(" ")) for r in refs]
    by_length, by_chrf = doc["compare_mt"]["sentence_buckets"] if "compare_mt" in doc else doc["sentence_buckets"]
    assert by_length["buckets"] == ["<15", "[15,30)", ">=30"] and by_length["title"] == (
        "bucket type: length, statistic type: chrf")
    for k, out in enumerate(outs):
        hyps = _lines(out)
        for b, (lo, hi) in enumerate([(0, 15), (15, 30), (30, 10 ** 9)]):
            idx = [i for i, n in enumerate(lengths) if lo <= n < hi]
            expected = sacrebleu.corpus_chrf([hyps[i] for i in idx], [[refs[i] for i in idx]]).score
            assert by_length["values"][k][b] == pytest.approx(expected, abs=1e-9)
        scores = [sacrebleu.sentence_chrf(h, [r]).score for h, r in zip(hyps, refs)]
        assert by_chrf["values"][k] == [sum(s < 40 for s in scores), sum(40 <= s < 60 for s in scores),
                                        sum(s >= 60 for s in scores)]
    text = run("compare", "-r", ref, *outs, *NAMES, "--sentence-buckets", "by=score,measure=chrf,cutoffs=40:60").stdout
    assert "--- bucket type: chrf, statistic type: count\nchrf\tsys1\tsys2\tsys3\n<40\t" in text


def test_by_length_count_counts_reference_lengths(made):
    """compare-mt 0.2.10 fails on ``bucket_type=length,statistic_type=count``; evalpipe counts the sentences of each
    reference length (the same for every system)."""
    doc = json.loads(run("compare", "-r", made["ref"], *made["outs"], "-f", "json", "--sentence-buckets",
                         "by=length,statistic=count").stdout)
    table = doc["compare_mt"]["sentence_buckets"][0] if "compare_mt" in doc else doc["sentence_buckets"][0]
    assert table["values"][0] == table["values"][1] == doc["length"]["sentences"]


BAD = [
    (["--sentence-buckets", "by=length,cutoffs=10:5"], "--sentence-buckets: expected increasing cutoffs, got '10:5'"),
    (["--sentence-buckets", "by=length,cutoffs=1:x"], "expected cutoffs A:B:C (numbers), got '1:x'"),
    (["--sentence-buckets", "by=words"], "expected by=length, lengthdiff, score or label, got by=words"),
    (["--sentence-buckets", "colour=red"], "expected KEY=VALUE with KEY one of by, statistic, measure, cutoffs"),
    (["--sentence-buckets", "by=score,measure=bleu"], "bleu has no sentence score to bucket by"),
    (["--sentence-buckets", "by=lengthdiff,measure=chrf"], "measure=chrf acts only with by=score or statistic=score"),
    (["--sentence-buckets", "by=score,measure=chrf"], "bucketing by chrf needs cutoffs=A:B:..."),
    (["--sentence-buckets", "by=score,measure=nosuchmetric,cutoffs=1:2"], "nosuchmetric"),
    (["--sentence-buckets", "by=label,labels=a+b"], "--sentence-buckets by=label reads a label a segment from"),
    (["--sentence-buckets", "by=label,labels=a,cutoffs=1:2", "--bucket-labels", "SEGMENTS"],
     "cutoffs act with by=length, lengthdiff or score, not by=label"),
    (["--sentence-buckets", "by=label"], "by=label takes labels=A+B+..."),
    (["--sentence-buckets", "by=length", "--bucket-labels", "SEGMENTS"],
     "--bucket-labels labels the segments for -m, --segment-scores or --sentence-buckets by=label"),
    (["--word-buckets", "by=freq,cutoffs=5:5"], "--word-buckets: expected increasing cutoffs, got '5:5'"),
    (["--word-buckets", "by=case,accuracy=f1"], "expected accuracy=fmeas, prec or rec (joined by +), got 'f1'"),
    (["--word-buckets", "by=case,cutoffs=1:2"], "cutoffs act only with by=freq"),
    (["--word-buckets", "by=label"], "by=label takes labels=A+B+..."),
    (["--word-buckets", "by=label,labels=NUM"], "--word-buckets by=label reads the words' labels: give --labels-ref"),
    (["--word-buckets", "by=case", "--labels-ref", "LREF"], "--labels-ref labels words for --word-buckets by=label or"),
    (["--word-buckets", "by=label,labels=NUM", "--labels-ref", "LREF", "--labels-sys", "LSYS0"],
     "expected one label file a system (3), got 1"),
    (["--word-buckets", "by=case", "--freq-counts", "COUNTS"], "--freq-counts gives word frequencies; no analysis"),
]


@pytest.mark.parametrize("flags, says", BAD, ids=[" ".join(f)[:50] for f, _ in BAD])
def test_settings_that_cannot_be_are_one_line(made, flags, says):
    flags = [made["labels"][f"sys{w[-1]}"] if w.startswith("LSYS") else w for w in flags]
    done = run("compare", "-r", made["ref"], *made["outs"], *fill(flags, made))
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and "Traceback" not in done.stderr and says in lines[-1], done.stderr


def test_bad_label_alignment_and_count_files_name_their_line(made):
    tmp = made["tmp"]
    labels = _lines(made["labels"]["sys1"])
    short = tmp / "short.labels"
    short.write_text("\n".join(labels[:4] + [labels[4].rsplit(" ", 1)[0]] + labels[5:]) + "\n", encoding="utf-8")
    aligns = _lines(made["aligns"])
    wide = tmp / "wide.align"
    wide.write_text("\n".join(aligns[:2] + ["0-999"] + aligns[3:]) + "\n")
    odd = tmp / "odd.align"
    odd.write_text("\n".join(["0:1"] + aligns[1:]) + "\n")
    counts = tmp / "bad.tsv"
    counts.write_text("der\t5\ndie\tmany\n", encoding="utf-8")
    label_flags = ["--word-buckets", "by=label,labels=NUM", "--labels-ref", made["labels"]["ref"],
                   "--labels-sys", made["labels"]["sys0"], "--labels-sys", str(short), "--labels-sys",
                   made["labels"]["sys2"]]
    for flags, says in (
            (label_flags, f"{short}, line 5: expected a label a word"),
            (["--source", made["source"], "--alignments", str(wide)],
             f"{wide}, line 3: expected source positions below"),
            (["--source", made["source"], "--alignments", str(odd)],
             f"{odd}, line 1: expected I-J pairs of word positions, got '0:1'"),
            (["--freq-counts", str(counts)], f"{counts}, line 2: expected WORD<TAB>COUNT, got 'die\\tmany'")):
        done = run("compare", "-r", made["ref"], *made["outs"], *flags)
        assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
        assert says in done.stderr.strip().splitlines()[-1], done.stderr


def test_the_report_shows_the_analyses_asked(made, tmp_path):
    page = tmp_path / "compare.html"
    done = run("compare", "-r", made["ref"], *made["outs"], "--source", made["source"], "--alignments",
               made["aligns"], "--word-buckets", "by=case,accuracy=fmeas+prec", "--sentence-buckets",
               "by=length,statistic=score,measure=sentbleu", "--report", page, "-f", "json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    html = page.read_text(encoding="utf-8")
    for heading in ("bucket type: length, statistic type: sentence-level BLEU", "F-measure of words by case",
                    "precision of words by case", "recall of source words by frequency"):
        assert f"<h3>{heading}</h3>" in html
    table = doc["sentence_buckets"][0]
    assert f"<td>{table['values'][2][0]:.4f} ({table['sentences'][2][0]})</td>" in html
    example = doc["pairs"][0]["examples"]["left"][0]
    assert example["source"] == _lines(made["source"])[example["index"]]


@pytest.mark.parametrize("metric", ["chrf", "ter"])
def test_examples_by_an_evalpipe_metric_in_its_direction(made, metric):
    """``--examples-by chrf|ter``: each example's scores are sacrebleu's sentence scores, and the first list holds
    the sentences where the first system is furthest ahead in the metric's direction (lower TER)."""
    ref, outs = made["ref"], made["outs"]
    doc = json.loads(run("compare", "-r", ref, *outs[:2], "-f", "json", "--examples-by", metric, "--examples", "5")
                     .stdout)
    pair = doc["compare_mt"]["pairs"][0]
    score = {"chrf": sacrebleu.sentence_chrf, "ter": sacrebleu.sentence_ter}[metric]
    refs, hyps = _lines(ref), [_lines(out) for out in outs[:2]]
    sign = 1 if metric == "chrf" else -1
    ahead = sorted(sign * (score(b, [r]).score - score(a, [r]).score) for r, a, b in zip(refs, *hyps))
    assert pair["examples_by"] == {"measure": metric, "higher_is_better": metric == "chrf"}
    for e in pair["examples"]["left"] + pair["examples"]["right"]:
        i = e["index"]
        assert e["scores"] == pytest.approx([score(h[i], [refs[i]]).score for h in hyps], abs=1e-9)
    first = [sign * (e["scores"][1] - e["scores"][0]) for e in pair["examples"]["left"]]
    assert first == pytest.approx(ahead[:5], abs=1e-9) and first[0] < 0
    text = run("compare", "-r", ref, *outs[:2], "--labels", "a,b", "--examples-by", metric, "--examples", "1").stdout
    direction = "higher" if metric == "chrf" else "lower"
    assert f"--- 1 sentences where a>b at {metric} ({direction} is better)" in text


def test_examples_by_what_has_no_sentence_score_is_refused(made):
    done = run("compare", "-r", made["ref"], *made["outs"], "--examples-by", "bleu")
    assert done.returncode == 2 and "bleu has none (compare-mt's neither): use sentbleu" in done.stderr
    done = run("compare", "-r", made["ref"], made["outs"][0], "--examples-by", "chrf")
    assert done.returncode == 2 and "--examples-by compares pairs of systems; one system is given" in done.stderr


def test_the_bootstrap_of_any_ratio_and_any_metric_is_compare_mts_in_process(made):
    """``--paired-ratio 0.8`` resamples as compare-mt's ``eval_with_paired_bootstrap(sample_ratio=0.8)``; each ``-m``
    metric's intervals and wins are compare-mt's function run with that metric as its scorer (sacrebleu's corpus
    score of the resampled sentences) -- a lower TER counted as a win."""
    import numpy as np
    from compare_mt import corpus_utils, scorers, sign_utils

    class Sacrebleu(scorers.Scorer):  # compare-mt's scorer interface around sacrebleu, for its bootstrap
        def __init__(self, metric, sign):
            self.metric, self.sign = metric, sign

        def cache_stats(self, ref, out, src=None):
            return None

        def score_corpus(self, ref, out, src=None):
            hyps, refs = [" ".join(o) for o in out], [[" ".join(r) for r in ref]]
            return self.sign * self.metric.corpus_score(hyps, refs).score, None

    ref_path, outs = made["ref"], made["outs"]
    doc = json.loads(run("compare", "-r", ref_path, *outs, "-f", "json", "-m", "chrf", "ter", "--paired-bs",
                         "--paired-n", "20", "--paired-ratio", "0.8", "--seed", "9").stdout)
    ref, toks = corpus_utils.load_tokens(ref_path), [corpus_utils.load_tokens(p) for p in outs]
    direcs = [(0, 1), (0, 2), (1, 2)]
    np.random.seed(9)
    wins, stats = sign_utils.eval_with_paired_bootstrap(ref, toks, None, scorers.BleuScorer(), direcs, num_samples=20,
                                                        sample_ratio=0.8)
    boot = doc["bleu_bootstrap"]
    assert boot["lower"] == [s["lower_bound"] for s in stats] and boot["sample_ratio"] == 0.8
    assert [[p["wins"], p["losses"], p["not_lower"]] for p in boot["pairs"]] == wins
    for found, metric, sign in zip(doc["metric_bootstrap"], (sacrebleu.CHRF(), sacrebleu.TER()), (1, -1)):
        np.random.seed(9)
        wins, stats = sign_utils.eval_with_paired_bootstrap(ref, toks, [None] * len(ref), Sacrebleu(metric, sign),
                                                            direcs, num_samples=20, sample_ratio=0.8)
        lower, upper = ("lower_bound", "upper_bound")[::sign]  # TER's scorer is negated: its bounds swap
        assert found["lower"] + found["upper"] == pytest.approx(
            [sign * s[lower] for s in stats] + [sign * s[upper] for s in stats], abs=1e-9)
        assert [[p["wins"], p["losses"]] for p in found["pairs"]] == [w[:2] for w in wins]
    text = run("compare", "-r", ref_path, *outs, *NAMES, "-m", "ter", "--paired-bs", "--paired-n", "50").stdout
    assert "TER (lower is better; s1>s2: s1 is better):\n\tsys1\tsys2\tsys3\nTER\t" in text


@pytest.mark.parametrize("root", data_roots()[1:])
def test_settings_on_all_1002_segments(root):
    """Settings without files of their own, on the full WMT21 en-de test set (when ../shared/data is there)."""
    ref, outs = files(root, SYSTEMS)
    mine = run("compare", "-r", ref, *outs, *NAMES, "-lc", "--word-buckets", "by=freq,cutoffs=2:20:200,accuracy=fmeas",
               "--sentence-buckets", "by=lengthdiff,statistic=score,measure=sentbleu,cutoffs=-5:0:5",
               "--examples-by", "length")
    assert mine.returncode == 0, mine.stderr
    their = theirs(ref, outs, "--compare_word_accuracies",
                   "bucket_type=freq,bucket_cutoffs=2:20:200,case_insensitive=True",
                   "--compare_scores", "score_type=bleu,case_insensitive=True", "score_type=length",
                   "--compare_sentence_buckets", "bucket_type=lengthdiff,statistic_type=score,score_measure=sentbleu,"
                   "bucket_cutoffs=-5:0:5,case_insensitive=True",
                   "--compare_ngrams", "compare_type=match,case_insensitive=True",
                   "--compare_sentence_examples", "score_type=length,case_insensitive=True")
    assert_same_text(mine.stdout, [line for line in their if not line.startswith("Reading frequency from")])


def test_every_analysis_asked_has_its_figure(made, tmp_path):
    """The report draws each table asked as bars whose heights are the JSON's numbers (None: no bar), and each -m
    metric's buckets with its intervals as whiskers."""
    pytest.importorskip("matplotlib")
    import math

    from evalpipe.report import figures

    page = tmp_path / "r.html"
    done = run("compare", "-r", made["ref"], *made["outs"], "--word-buckets", "by=case,accuracy=prec",
               "--sentence-buckets", "by=length,statistic=score,measure=chrf", "-m", "ter", "--confidence-n", "50",
               "--report", page, "-f", "json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert page.read_text(encoding="utf-8").count("<svg") == 3 + 3  # compare-mt's three figures, and one each
    names = doc["systems"]
    table = doc["sentence_buckets"][0]
    ax = figures.grouped_bar_figure(table["buckets"], table["values"], names, "chrf", "length").axes[0]
    heights = [p.get_height() for p in ax.patches]
    assert [None if math.isnan(h) else h for h in heights] == [v for column in table["values"] for v in column]
    bucketed = doc["metric_buckets"][0]
    fig = figures.grouped_bar_figure(bucketed["buckets"], [c["score"] for c in bucketed["systems"]], names, "TER",
                                     "length", [c["low"] for c in bucketed["systems"]],
                                     [c["high"] for c in bucketed["systems"]])
    whiskers = [line.reshape(-1, 2) for collection in fig.axes[0].collections for line in collection.get_segments()]
    tops = sorted(round(max(seg[:, 1]), 9) for seg in whiskers if len(seg) and not math.isnan(seg[0, 1]))
    assert tops == sorted(round(h, 9) for c in bucketed["systems"] for h in c["high"] if h is not None)
