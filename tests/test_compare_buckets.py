"""``evalpipe compare -m METRIC``: any metric in every bucket, an interval per bucket, a paired test per bucket
against the first system, Holm-adjusted over the buckets.  A bucket's score is sacrebleu's own corpus score of
its sentences (sacrebleu run here); its interval and p-value are score-corpus's on those sentences (the same draws
and seed); Holm's adjustment is statsmodels'."""
from __future__ import annotations

import json
import subprocess

import pytest

from conftest import child_env, data_roots, script
from evalpipe.scoring.compare_systems import tokens

SYSTEMS = ("Facebook-AI", "ICL", "UEdin")


def files(names):
    news = data_roots()[0].values[0] / "wmt21.news"
    return (str(news / "references" / "en-de.refA.txt"),
            [str(news / "system-outputs" / "en-de" / f"{name}.txt") for name in names])


def run(*args):
    return subprocess.run([script("evalpipe"), *map(str, args)], capture_output=True, text=True, env=child_env(),
                          timeout=600)


def read(path):
    return open(path, encoding="utf-8").read().splitlines()


@pytest.fixture(scope="module")
def bucketed():
    ref, outs = files(SYSTEMS)
    done = run("compare", "-r", ref, *outs, "-m", "bleu", "chrf", "ter", "-f", "json", "--confidence-n", "300",
               "--seed", "4")
    assert done.returncode == 0, done.stderr
    return ref, outs, json.loads(done.stdout)


def test_each_bucket_is_sacrebleus_corpus_score_of_its_sentences(bucketed):
    import sacrebleu

    ref, outs, doc = bucketed
    ref_lines = read(ref)
    lengths = [len(t) for t in tokens(ref_lines)]
    edges = [0, 10, 20, 30, 40, 50, 60, 10 ** 9]
    anchors = {"BLEU": sacrebleu.BLEU(), "chrF2": sacrebleu.CHRF(), "TER": sacrebleu.TER()}
    for table in doc["metric_buckets"]:
        anchor = anchors[table["metric"]]
        assert table["higher_is_better"] == (table["metric"] != "TER") and table["bucket_by"] == "length"
        for b, (lo, hi) in enumerate(zip(edges, edges[1:])):
            idx = [i for i, n in enumerate(lengths) if lo <= n < hi]
            assert table["sentences"][b] == len(idx)
            for out, column in zip(outs, table["systems"]):
                hyp = read(out)
                expected = anchor.corpus_score([hyp[i] for i in idx], [[ref_lines[i] for i in idx]]).score if idx \
                    else None
                assert column["score"][b] == pytest.approx(expected, abs=1e-9) if idx else column["score"][b] is None


def test_intervals_and_tests_are_score_corpus_on_the_buckets_sentences(bucketed, tmp_path):
    from statsmodels.stats.multitest import multipletests

    ref, outs, doc = bucketed
    table = next(t for t in doc["metric_buckets"] if t["metric"] == "chrF2")
    ref_lines = read(ref)
    lengths = [len(t) for t in tokens(ref_lines)]
    b = 2  # [20,30): the most sentences
    idx = [i for i, n in enumerate(lengths) if 20 <= n < 30]
    (tmp_path / "ref").write_text("\n".join(ref_lines[i] for i in idx) + "\n", encoding="utf-8")
    subset = []
    for k, out in enumerate(outs):
        hyp = read(out)
        (tmp_path / f"s{k}").write_text("\n".join(hyp[i] for i in idx) + "\n", encoding="utf-8")
        subset.append(str(tmp_path / f"s{k}"))
    done = run("score-corpus", "-r", tmp_path / "ref", *subset, "-m", "chrf", "--confidence", "--confidence-n", "300",
               "--paired-bs", "--paired-n", "300", "--seed", "4", "-f", "json")
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)["results"]
    whole = run("score-corpus", "-r", ref, *outs, "-m", "chrf", "--confidence", "--confidence-n", "300", "--paired-bs",
                "--paired-n", "300", "--seed", "4", "-f", "json")
    every = table["all"]
    for k, result in enumerate(json.loads(whole.stdout)["results"]):  # the first row: every sentence
        assert [every["score"][k], every["low"][k], every["high"][k]] == pytest.approx([result["score"], *result["ci"]])
        assert every["p"][k] == (pytest.approx(result["p_value"]) if k else None)
    for k, result in enumerate(results):
        column = table["systems"][k]
        assert column["score"][b] == pytest.approx(result["score"], abs=1e-9)
        assert result["ci"] == pytest.approx([column["low"][b], column["high"][b]], abs=1e-9)
        if k:
            assert column["p"][b] == pytest.approx(result["p_value"], abs=1e-12)
    for column in table["systems"][1:]:
        tested = [i for i, p in enumerate(column["p"]) if p is not None]
        holm = multipletests([column["p"][i] for i in tested], method="holm")[1]
        assert [column["p_holm"][i] for i in tested] == pytest.approx(list(holm))
        assert all(column["verdict"][i] is None for i in range(len(column["p"])) if i not in tested)
        for i in tested:
            lower = table["metric"] == "TER"
            ahead = (column["score"][i] < table["systems"][0]["score"][i]) if lower else \
                (column["score"][i] > table["systems"][0]["score"][i])
            assert column["verdict"][i] == (("better" if ahead else "worse") if column["p_holm"][i] <= 0.05 else "-")


def test_ter_is_better_when_lower_in_every_verdict(bucketed):
    _, _, doc = bucketed
    ter = next(t for t in doc["metric_buckets"] if t["metric"] == "TER")
    for column in ter["systems"][1:]:
        for score, base, verdict in zip(column["score"], ter["systems"][0]["score"], column["verdict"]):
            if verdict in ("better", "worse"):
                assert (verdict == "better") == (score < base)


def test_buckets_by_a_label_file_and_what_it_must_be(tmp_path):
    ref, outs = files(SYSTEMS[:2])
    n = len(read(ref))
    labels = tmp_path / "domains.txt"
    labels.write_text("".join(("news\n" if i % 3 else "sport\n") for i in range(n)), encoding="utf-8")
    done = run("compare", "-r", ref, *outs, "-m", "chrf", "--bucket-labels", labels, "-f", "json", "--confidence-n",
               "100")
    assert done.returncode == 0, done.stderr
    table = json.loads(done.stdout)["metric_buckets"][0]
    assert table["buckets"] == ["sport", "news"] and table["sentences"] == [(n + 2) // 3, n - (n + 2) // 3]
    text = run("compare", "-r", ref, *outs, "-m", "chrf", "--bucket-labels", labels, "--confidence-n", "100").stdout
    assert f"label\t# sents\t{SYSTEMS[0]}\t{SYSTEMS[1]}" in text and "\nsport\t" in text
    short = tmp_path / "short.txt"
    short.write_text("news\n", encoding="utf-8")
    blank = tmp_path / "blank.txt"
    blank.write_text("news\n\n" + "news\n" * (n - 2), encoding="utf-8")
    for path, says in ((short, f"expected one label a segment, {n} lines as the reference has, got 1"),
                       (blank, "line 2: expected a label, got an empty line")):
        refused = run("compare", "-r", ref, *outs, "-m", "chrf", "--bucket-labels", path)
        last = refused.stderr.strip().splitlines()[-1]
        assert refused.returncode != 0 and str(path) in last and says in last and "Traceback" not in refused.stderr
    alone = run("compare", "-r", ref, *outs, "--bucket-labels", labels)
    assert alone.returncode == 2 and "--bucket-labels acts only with -m" in alone.stderr


def test_the_report_shows_each_metrics_buckets(tmp_path):
    ref, outs = files(SYSTEMS[:2])
    report = tmp_path / "c.html"
    done = run("compare", "-r", ref, *outs, "-m", "ter", "--confidence-n", "200", "-f", "json", "--report", report)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    html = report.read_text(encoding="utf-8")
    table = doc["metric_buckets"][0]
    assert "<h2>TER by length</h2>" in html and "(lower is better)" in html
    marked = sum(v in ("better", "worse") for v in table["systems"][1]["verdict"] + table["all"]["verdict"][1:])
    assert html.count('<td class="better">') + html.count('<td class="worse">') == marked
    (tmp_path / "c.json").write_text(done.stdout, encoding="utf-8")
    again = run("report", tmp_path / "c.json", "-o", tmp_path / "again.html")
    assert again.returncode == 0 and (tmp_path / "again.html").read_text(encoding="utf-8") == html


def _json(*args):
    done = run("compare", *args, "-f", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_buckets_by_a_metrics_own_score_averaged_over_the_systems(tmp_path):
    """``--bucket-by chrf --bucket-cutoffs 40:60``: a segment's bucket is by sacrebleu's sentence chrF averaged over
    the systems, the same bucket for every system; each bucket's TER is sacrebleu's corpus TER of its sentences."""
    import sacrebleu

    ref, outs = files(SYSTEMS)
    doc = _json("-r", ref, *outs, "-m", "ter", "--bucket-by", "chrf", "--bucket-cutoffs", "40:60")
    table = doc["metric_buckets"][0]
    refs, hyps = read(ref), [read(o) for o in outs]
    means = [sum(sacrebleu.sentence_chrf(h[i], [refs[i]]).score for h in hyps) / 3 for i in range(len(refs))]
    which = [0 if m < 40 else 1 if m < 60 else 2 for m in means]
    assert table["buckets"] == ["<40", "[40,60)", ">=60"] and table["bucket_by"] == "chrf (mean over the systems)"
    assert table["sentences"] == [which.count(b) for b in range(3)]
    for k, h in enumerate(hyps):
        for b in range(3):
            idx = [i for i, w in enumerate(which) if w == b]
            expected = sacrebleu.corpus_ter([h[i] for i in idx], [[refs[i] for i in idx]]).score
            assert table["systems"][k]["score"][b] == pytest.approx(expected, abs=1e-9)
    by_length = _json("-r", ref, *outs, "-m", "ter", "--bucket-cutoffs", "15:30")["metric_buckets"][0]
    assert by_length["buckets"] == ["<15", "[15,30)", ">=30"] and by_length["bucket_by"] == "length"


def test_the_pool_engine_gives_the_same_document():
    """The -m metrics' and the evalpipe measures' statistics on a pool of two processes: the same JSON."""
    ref, outs = files(SYSTEMS)
    args = ["-r", ref, *outs, "-m", "chrf", "ter", "--bucket-by", "chrf", "--bucket-cutoffs", "40:60",
            "--sentence-buckets", "by=length,statistic=score,measure=ter", "--examples-by", "chrf", "--seed", "3"]
    assert _json(*args, "--engine", "pool", "--workers", "2") == _json(*args)


def test_what_cannot_bucket_is_refused():
    ref, outs = files(SYSTEMS[:2])
    for args, says in ((["-m", "ter", "--bucket-by", "chrf"], "--bucket-by chrf needs --bucket-cutoffs A:B:..."),
                       (["-m", "ter", "--bucket-cutoffs", "30:10"], "--bucket-cutoffs: expected increasing cutoffs"),
                       (["--engine", "pool"], "--engine and --workers compute the statistics of the -m metrics"),
                       (["-m", "ter", "--bucket-by", "nosuch", "--bucket-cutoffs", "1:2"], "nosuch")):
        done = run("compare", "-r", ref, *outs, *args)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert says in done.stderr.strip().splitlines()[-1], done.stderr
