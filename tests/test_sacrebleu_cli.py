"""``evalpipe sacrebleu ARGS`` against the real ``sacrebleu`` 2.6 console script, same argv, same folder.

Every case runs both commands as subprocesses on real WMT21 data (the subset in tests/data; the full 23
en-de systems too when ../shared/data is there) and requires the same exit status and byte-identical
stdout.  Where sacrebleu itself fails, the exit status must be the same (sacrebleu shows some failures
as a traceback; evalpipe shows one line instead, so stderr is compared only for that line).

The Chinese, Japanese and Korean cases need target-language text: Chinese is the real zh-en source side
(references) against a copy with every seventh character dropped and every eleventh line shortened
(hypotheses); Japanese and Korean are a few sentences written for this test.  ja-mecab and ko-mecab
come from sacrebleu's own ``ja`` and ``ko`` extras, installed by evalpipe's test extra.
"""
from __future__ import annotations

import subprocess

import pytest

from conftest import NEWS, SHARED, child_env, lines, script

ENDE = "system-outputs/en-de"
REF_A, REF_C, REF_D = (f"references/en-de.ref{r}.txt" for r in "ACD")
ONE = [f"{ENDE}/Online-W.txt"]
THREE = [f"{ENDE}/{name}.txt" for name in ("ICL", "UEdin", "Facebook-AI")]
ALL_SUBSET = sorted(f"{ENDE}/{p.name}" for p in (NEWS / ENDE).glob("*.txt") if not p.name.startswith("ref"))

JA = ["今日は天気がとても良いので、公園を散歩しました。", "東京駅までの行き方を教えてください。",
      "この本は私の友達が書いたものです。", "明日の会議は午後三時から始まります。"]
JA_HYP = ["今日は天気が良いので、公園を散歩した。", "東京駅への行き方を教えて下さい。",
          "この本は友達が書きました。", "明日の会議は三時に始まります。"]
KO = ["오늘은 날씨가 아주 좋아서 공원을 산책했습니다.", "서울역까지 가는 방법을 알려 주세요.",
      "이 책은 제 친구가 쓴 것입니다.", "내일 회의는 오후 세 시에 시작합니다."]
KO_HYP = ["오늘 날씨가 좋아서 공원을 걸었습니다.", "서울역에 가는 길을 알려 주세요.",
          "이 책은 친구가 썼습니다.", "내일 회의는 세 시에 시작합니다."]

CASES = {
    # one system, every output format and reporting switch
    "json": [REF_A, "-i", *ONE],
    "text": [REF_A, "-i", *ONE, "-f", "text"],
    "score-only": [REF_A, "-i", *ONE, "-b"],
    "width-3": [REF_A, "-i", *ONE, "-w", "3"],
    "short-text": [REF_A, "-i", *ONE, "--short", "-f", "text"],
    "three-metrics": [REF_A, "-i", *ONE, "-m", "bleu", "chrf", "ter"],
    "three-metrics-text": [REF_A, "-i", *ONE, "-m", "bleu", "chrf", "ter", "-f", "text"],
    "two-refs": [REF_A, REF_C, "-i", *ONE, "-m", "bleu", "chrf", "ter"],
    "three-refs": [REF_A, REF_C, REF_D, "-i", *ONE, "-m", "bleu", "chrf"],
    # BLEU's tokenizers, case, languages, smoothing
    "tok-13a": [REF_A, "-i", *ONE, "-tok", "13a"],
    "tok-intl": [REF_A, "-i", *ONE, "-tok", "intl"],
    "tok-zh": [REF_A, "-i", *ONE, "-tok", "zh"],
    "tok-char": [REF_A, "-i", *ONE, "-tok", "char"],
    "tok-none": [REF_A, "-i", *ONE, "-tok", "none"],
    "lowercase": [REF_A, "-i", *ONE, "-lc"],
    "lang-en-de": [REF_A, "-i", *ONE, "-l", "en-de"],
    "lang-en-zh": ["zh.ref", "-i", "zh.hyp", "-l", "en-zh"],
    "lang-en-zh-tok-13a": ["zh.ref", "-i", "zh.hyp", "-l", "en-zh", "-tok", "13a"],
    "lang-en-ja": ["ja.ref", "-i", "ja.hyp", "-l", "en-ja"],
    "lang-en-ko": ["ko.ref", "-i", "ko.hyp", "-l", "en-ko", "-m", "bleu", "chrf"],
    "smooth-floor": [REF_A, "-i", *ONE, "-s", "floor"],
    "smooth-floor-value": [REF_A, "-i", *ONE, "-s", "floor", "-sv", "0.2"],
    "smooth-add-k": [REF_A, "-i", *ONE, "-s", "add-k", "-sv", "2"],
    "smooth-none": [REF_A, "-i", *ONE, "-s", "none", "-f", "text"],
    # chrF and TER options
    "chrf++": [REF_A, "-i", *ONE, "-m", "chrf", "--chrf-word-order", "2"],
    "chrf-options": [REF_A, "-i", *ONE, "-m", "chrf", "-cc", "4", "--chrf-beta", "3", "--chrf-lowercase",
                     "--chrf-whitespace", "-f", "text"],
    "chrf-eps": [REF_A, REF_C, "-i", *ONE, "-m", "chrf", "--chrf-eps-smoothing", "-cw", "2"],
    "ter-options": [REF_A, "-i", *ONE, "-m", "ter", "--ter-case-sensitive", "--ter-no-punct", "--ter-normalized"],
    "ter-asian": ["zh.ref", "-i", "zh.hyp", "-m", "ter", "--ter-asian-support", "--ter-normalized"],
    # confidence intervals
    "confidence": [REF_A, "-i", *ONE, "--confidence", "-cin", "200"],
    "confidence-three-metrics": [REF_A, "-i", *ONE, "-m", "bleu", "chrf", "ter", "--confidence", "-cin", "100",
                                 "-f", "text"],
    # many systems: tables, paired tests
    "systems-json": [REF_A, "-i", *ALL_SUBSET],
    "systems-text": [REF_A, "-i", *THREE, "-f", "text", "-m", "bleu", "chrf", "ter"],
    "systems-latex": [REF_A, "-i", *THREE, "-f", "latex", "-m", "bleu", "chrf"],
    "systems-width-short": [REF_A, REF_C, "-i", *THREE, "-w", "2", "--short", "-f", "text"],
    "paired-bs": [REF_A, "-i", *THREE, "--paired-bs", "-pbsn", "200"],
    "paired-bs-text": [REF_A, "-i", *THREE, "--paired-bs", "-pbsn", "100", "-m", "bleu", "chrf", "-f", "text"],
    "paired-ar": [REF_A, "-i", *THREE, "--paired-ar", "-parn", "300", "-m", "bleu", "chrf"],
    "paired-ar-latex": [REF_A, "-i", *THREE, "--paired-ar", "-parn", "200", "-f", "latex"],
    "paired-bs-jobs": [REF_A, "-i", *THREE, "--paired-bs", "-pbsn", "100", "-j", "2"],
    "paired-baseline-repeated": [REF_A, "-i", THREE[0], *THREE, "--paired-bs", "-pbsn", "100"],
    # sentence level
    "sentence-bleu": [REF_A, "-i", *ONE, "--sentence-level"],
    "sentence-bleu-text-short": [REF_A, "-i", *ONE, "-sl", "-f", "text", "--short"],
    "sentence-chrf": [REF_A, REF_C, "-i", *ONE, "--sentence-level", "-m", "chrf", "-cw", "2"],
    "sentence-ter-score-only": [REF_A, "-i", *ONE, "--sentence-level", "-m", "ter", "-b"],
    "sentence-lowercase-intl": [REF_A, "-i", *ONE, "-sl", "-lc", "-tok", "intl", "-w", "2"],
    # what sacrebleu refuses (same exit status)
    "refuse-sentence-two-metrics": [REF_A, "-i", *ONE, "-sl", "-m", "bleu", "chrf"],
    "refuse-sentence-two-systems": [REF_A, "-i", *THREE[:2], "-sl"],
    "refuse-confidence-many": [REF_A, "-i", *THREE, "--confidence"],
    "refuse-paired-one": [REF_A, "-i", *ONE, "--paired-bs"],
    "refuse-unknown-metric": [REF_A, "-i", *ONE, "-m", "meteor"],
    "refuse-no-reference": ["-i", *ONE],
    "refuse-duplicate-system": [REF_A, "-i", THREE[0], THREE[0]],
    "refuse-both-paired": [REF_A, "-i", *THREE, "--paired-bs", "--paired-ar"],
    "refuse-missing-file": [REF_A, "-i", "no-such-file.txt"],
    "refuse-paired-json-chrf": [REF_A, "-i", *THREE, "--paired-bs", "-pbsn", "50", "-m", "chrf"],  # sacrebleu's bug
    "refuse-length-mismatch": [REF_A, "-i", "short.hyp"],
}

STDIN_CASES = {
    "stdin-one": ([REF_A], "one"),
    "stdin-two-systems-text": ([REF_A, "-f", "text"], "two"),
    "stdin-two-systems-paired": ([REF_A, "--paired-bs", "-pbsn", "100"], "two"),
    "stdin-num-refs": (["refs.tsv", "-nr", "2", "-m", "bleu", "chrf"], "one"),
    "stdin-num-refs-wrong": (["refs.tsv", "-nr", "3"], "one"),
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A copy of the subset's en-de files and the CJK files, as relative paths both commands read."""
    root = tmp_path_factory.mktemp("sacrebleu-cli")
    for sub in ("references", ENDE):
        (root / sub).mkdir(parents=True, exist_ok=True)
    for path in [REF_A, REF_C, REF_D, *ALL_SUBSET]:
        (root / path).write_bytes((NEWS / path).read_bytes())
    zh = lines(NEWS / "sources" / "zh-en.txt")
    hyp = ["".join(c for i, c in enumerate(line) if i % 7 != 3)[: (len(line) * 2 // 3 if n % 11 == 0 else None)]
           for n, line in enumerate(zh)]
    for name, text in (("zh.ref", zh), ("zh.hyp", hyp), ("ja.ref", JA), ("ja.hyp", JA_HYP), ("ko.ref", KO),
                       ("ko.hyp", KO_HYP), ("short.hyp", lines(NEWS / ONE[0])[:20])):
        (root / name).write_text("\n".join(text) + "\n", encoding="utf-8")
    a, c = lines(NEWS / REF_A), lines(NEWS / REF_C)
    (root / "refs.tsv").write_text("".join(f"{x}\t{y}\n" for x, y in zip(a, c)), encoding="utf-8")
    return root


def both(folder, argv, stdin=None):
    runs = []
    for command in ([script("sacrebleu")], [script("evalpipe"), "sacrebleu"]):
        runs.append(subprocess.run(command + argv, cwd=folder, input=stdin, capture_output=True, timeout=300,
                                   env=child_env()))
    return runs


def assert_same(theirs, ours):
    assert ours.returncode == theirs.returncode, (theirs.stderr.decode()[-1500:], ours.stderr.decode()[-1500:])
    assert ours.stdout == theirs.stdout
    if ours.returncode != 0:
        assert b"Traceback" not in ours.stderr, ours.stderr.decode()


@pytest.mark.parametrize("case", sorted(CASES))
def test_byte_identical_to_sacrebleu(folder, case):
    theirs, ours = both(folder, CASES[case])
    assert_same(theirs, ours)
    if not case.startswith("refuse"):
        assert theirs.returncode == 0 and theirs.stdout, theirs.stderr.decode()[-1500:]


@pytest.mark.parametrize("case", sorted(STDIN_CASES))
def test_byte_identical_on_stdin(folder, case):
    argv, systems = STDIN_CASES[case]
    first = lines(folder / ONE[0])
    columns = [first] if systems == "one" else [first, lines(folder / THREE[0])]
    stdin = "".join("\t".join(row) + "\n" for row in zip(*columns)).encode()
    theirs, ours = both(folder, argv, stdin)
    assert_same(theirs, ours)


def test_format_from_the_environment(folder, monkeypatch):
    monkeypatch.setenv("SACREBLEU_FORMAT", "text")
    theirs, ours = both(folder, [REF_A, "-i", *THREE, "-m", "bleu", "chrf"])
    assert_same(theirs, ours)
    assert theirs.stdout.lstrip().startswith(b"\xe2\x95\x92")  # a fancy_grid table, not JSON


def test_missing_file_is_one_line(folder):
    ours = both(folder, [REF_A, "-i", "no-such-file.txt"])[1]
    assert ours.returncode == 1
    assert ours.stderr.decode().strip().count("\n") == 0 and "no-such-file.txt" in ours.stderr.decode()


@pytest.mark.fullcorpus
@pytest.mark.skipif(not SHARED.is_dir(), reason=f"full data not found at {SHARED}")
@pytest.mark.parametrize("extra", [["-m", "bleu", "chrf"], ["-m", "bleu", "-f", "text", "-w", "2"],
                                   ["-m", "chrf", "-cw", "2", "--paired-bs", "-pbsn", "100"]])
def test_full_wmt21_systems(extra):
    news = SHARED / "wmt21.news"
    systems = sorted(f"{ENDE}/{p.name}" for p in (news / ENDE).glob("*.txt"))
    theirs, ours = both(news, [REF_A, "-i", *systems, *extra])
    assert_same(theirs, ours)
