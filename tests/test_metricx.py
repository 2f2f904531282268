"""MetricX-23 and -24 (``-m metricx``) from a local checkpoint: equal to the anchor's model class on tiny random mT5
models, in score-corpus, serve, mbr and meta-eval add-metric, with one line for each bad model folder.

The anchor is transformers' ``MT5ForConditionalGeneration`` read as google-research/metricx's ``MT5ForRegression``
reads it (``metricx24/models.py``: one decoder step from token 0, the logit of token 250089, clipped to [0, 25]), fed
as metricx's ``predict.py`` feeds it (``AutoTokenizer`` on the tokenizer folder, ``max_length`` truncation, the last
token removed), one input at a time as its README runs it.  The models are built here (src/evalpipe/tiny_metricx.py:
mT5's vocabulary size, random weights); the spiece.model variant's tokenizer is trained by sentencepiece on the
shipped demo text.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="MetricX needs torch (extra evalpipe[metricx])")
pytest.importorskip("tokenizers", reason="MetricX needs tokenizers (extra evalpipe[metricx])")

from conftest import child_env, comet_anchor, script  # noqa: E402

from evalpipe import load_metric  # noqa: E402
from evalpipe.errors import InputError, OptionError  # noqa: E402

DEMO = Path(__file__).resolve().parents[1] / "src" / "evalpipe" / "demo" / "wmt21-ende"
SRC, REF = DEMO / "src.en", DEMO / "ref.de"
SYSTEMS = sorted((DEMO / "systems").glob("*.de"))[:2]


def lines(path: Path, n: int = 300) -> list:
    return path.read_text(encoding="utf-8").splitlines()[:n]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """tokenizer.json and spiece.model folders of one tiny MetricX, and a second checkpoint (another seed)."""
    from evalpipe import tiny_metricx

    root = tmp_path_factory.mktemp("metricx")
    fast = tiny_metricx.build(root / "tiny-metricx-24")
    other = tiny_metricx.build(root / "other" / "tiny-metricx-24", seed=2)
    spiece = root / "spiece-model"
    spiece.mkdir()
    for name in ("config.json", "model.safetensors"):
        shutil.copy(fast / name, spiece / name)
    sentencepiece = pytest.importorskip("sentencepiece", reason="the spiece.model variant trains with sentencepiece")
    text = root / "train.txt"
    text.write_text("\n".join(lines(SRC) + lines(REF)), encoding="utf-8")
    sentencepiece.SentencePieceTrainer.train(input=str(text), model_prefix=str(spiece / "spiece"), vocab_size=700,
                                             model_type="unigram", pad_id=0, eos_id=1, unk_id=2, bos_id=-1,
                                             character_coverage=0.9995, minloglevel=2)
    (spiece / "spiece.vocab").unlink()
    (spiece / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "T5Tokenizer", "extra_ids": 0}))
    return {"json": fast, "spiece": spiece, "other": other}


ANCHOR = {}


def anchor_scores(folder: Path, texts: list, max_length: int) -> tuple:
    """(scores, input ids) as metricx's predict.py and MT5ForRegression compute them, one input at a time."""
    transformers = pytest.importorskip("transformers", reason="the anchor is transformers' mT5 (test extra)")
    if folder not in ANCHOR:
        model = transformers.MT5ForConditionalGeneration.from_pretrained(str(folder), dtype=torch.float32).eval()
        ANCHOR[folder] = (model, transformers.AutoTokenizer.from_pretrained(str(folder)))
    model, tokenizer = ANCHOR[folder]
    scores, inputs = [], []
    for text in texts:
        encoded = tokenizer(text, max_length=max_length, truncation=True, padding=False)
        ids = encoded["input_ids"][:-1]
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([ids]), attention_mask=torch.tensor([encoded["attention_mask"][:-1]]),
                           decoder_input_ids=torch.zeros((1, 1), dtype=torch.long)).logits
        scores.append(float(torch.clamp(logits[:, 0, 250089], 0, 25)[0]))
        inputs.append(ids)
    return scores, inputs


ROWS = 40


@pytest.mark.parametrize("tokenizer", ["json", "spiece"])
@pytest.mark.parametrize("version", ["23", "24"])
@pytest.mark.parametrize("qe", [False, True])
@pytest.mark.parametrize("max_length", [0, 48])
def test_scores_equal_the_anchor_model_class(models, tokenizer, version, qe, max_length):
    """MetricX-23 and -24, with a reference and without, at the README's input lengths and at 48 tokens (most inputs
    past it, cut; some near it): the same input ids and scores within 1e-5 (fp32), in batches of 8."""
    from evalpipe.evaluators.metricx import MAX_LENGTH, input_text

    folder = models[tokenizer]
    metric = load_metric("metricx", model=str(folder), version=version, qe=qe, max_input_length=max_length,
                         batch_size=8, threads=1)
    src, ref, hyp = lines(SRC, ROWS), lines(REF, ROWS), lines(SYSTEMS[0], ROWS)
    limit = max_length or MAX_LENGTH[version]
    texts = [input_text(version, s, h, None if qe else r) for s, h, r in zip(src, hyp, ref)]
    expected, ids = anchor_scores(folder, texts, limit)
    found = metric.score_rows(src, hyp, None if qe else ref)
    assert metric.model.inputs(texts, limit)[0] == ids
    assert max(abs(a - b) for a, b in zip(found.tolist(), expected)) <= 1e-5
    assert (sum(metric.last_cut) > ROWS // 2) == (max_length == 48) and all(len(i) <= limit - 1 for i in ids)
    assert len(set(round(x, 3) for x in expected)) > ROWS // 2  # the scores vary (not clipped to one value)


def test_the_unigram_scores_are_the_file_numbers(models):
    """tokenizer.json's scores as written (Python's json, as transformers 5 reads them), not the tokenizers library's
    own parse, which can land a unit in the last place away and flip a tie between "0" "00" and "00" "0"."""
    from tokenizers import Tokenizer

    from evalpipe.evaluators.neural.metricx_model import Pieces

    path = models["json"] / "tokenizer.json"
    written = json.loads(path.read_text(encoding="utf-8"))["model"]["vocab"]
    read = json.loads(Pieces(models["json"])._fast.to_str())["model"]["vocab"]
    assert read == written
    library = json.loads(Tokenizer.from_file(str(path)).to_str())["model"]["vocab"]
    print(f"{sum(a != b for a, b in zip(library, written))} of {len(written)} scores the library reads otherwise")


def test_the_input_texts_are_metricx_own():
    from evalpipe.evaluators.metricx import input_text

    assert input_text("24", "S", "H", "R") == "source: S candidate: H reference: R"
    assert input_text("24", "S", "H", None) == "source: S candidate: H"
    assert input_text("23", "S", "H", "R") == "candidate: H reference: R"
    assert input_text("23", "S", "H", None) == "candidate: H source: S"


def run(*args, timeout=300, **kw):
    return subprocess.run([script("evalpipe"), *map(str, args)], capture_output=True, text=True, env=child_env(),
                          timeout=timeout, **kw)


def test_score_corpus_with_and_without_a_reference(models):
    """Through the console script: with -r the mean of the anchor's scores; without -r the QE scores; lower is
    better in the JSON; the signature names the checkpoint by content, so another checkpoint in a folder of the
    same name signs differently."""
    folder = models["json"]
    common = ["-m", "metricx", "-o", f"metricx.model={folder}", "--source", SRC, "-f", "json"]
    with_ref = run("score-corpus", *common, "-r", REF, *SYSTEMS)
    assert with_ref.returncode == 0, with_ref.stderr
    results = json.loads(with_ref.stdout)["results"]
    from evalpipe.evaluators.metricx import input_text

    for system, result in zip(SYSTEMS, results):
        texts = [input_text("24", s, h, r) for s, h, r in zip(lines(SRC), lines(system), lines(REF))]
        expected, _ = anchor_scores(folder, texts, 1536)
        assert abs(result["score"] - sum(expected) / len(expected)) <= 1e-5
        assert result["higher_is_better"] is False and result["note"] is None
        assert "|v24|ref:yes|fp32|maxlen:1536|" in result["signature"]
    qe = run("score-corpus", *common, *SYSTEMS)
    assert qe.returncode == 0, qe.stderr
    qe_results = json.loads(qe.stdout)["results"]
    assert "|ref:no|" in qe_results[0]["signature"] and qe_results[0]["score"] != results[0]["score"]
    other = run("score-corpus", "-m", "metricx", "-o", f"metricx.model={models['other']}", "--source", SRC, "-r", REF,
                "-f", "json", SYSTEMS[0])
    signatures = {results[0]["signature"], json.loads(other.stdout)["results"][0]["signature"]}
    assert len(signatures) == 2 and all("model:tiny-metricx-24@" in s for s in signatures)


def test_score_corpus_counts_what_it_cuts(models):
    done = run("score-corpus", "-m", "metricx", "-o", f"metricx.model={models['json']}", "-o",
               "metricx.max_input_length=48", "--source", SRC, "-r", REF, SYSTEMS[0])
    assert done.returncode == 0, done.stderr
    assert f"Note: metricx of {SYSTEMS[0]}: " in done.stdout and "segments cut at the model's 48-token input limit" \
        in done.stdout
    refused = run("score-corpus", "-m", "metricx", "-o", f"metricx.model={models['json']}", "-o",
                  "metricx.max_input_length=48", "-o", "metricx.on_long=error", "--source", SRC, "-r", REF, SYSTEMS[0])
    assert refused.returncode != 0 and refused.stderr.strip().splitlines()[-1].startswith("Error: metricx: segment ")
    assert "Traceback" not in refused.stderr


def test_serve_scores_with_and_without_a_reference_through_a_pipe(models):
    """``serve metricx``: the model loaded once; a line with the reference and one without; a bad line answered
    with ERROR and the server goes on."""
    src, ref, hyp = lines(SRC, 2), lines(REF, 2), lines(SYSTEMS[0], 2)
    requests = (f"SCORE ||| {src[0]} ||| {ref[0]} ||| {hyp[0]}\nSCORE ||| only\nSCORE ||| {src[1]} ||| {hyp[1]}\n")
    env = {k: v for k, v in child_env().items() if k != "PYTHONUNBUFFERED"}
    done = subprocess.run([script("evalpipe"), "serve", "metricx", "-o", f"model={models['json']}", "-o",
                           "version=24"], input=requests, capture_output=True, text=True, env=env, timeout=300)
    replies = done.stdout.splitlines()
    assert len(replies) == 3 and replies[1].startswith("ERROR ||| ")
    from evalpipe.evaluators.metricx import input_text

    with_ref, _ = anchor_scores(models["json"], [input_text("24", src[0], hyp[0], ref[0])], 1536)
    without, _ = anchor_scores(models["json"], [input_text("24", src[1], hyp[1], None)], 1536)
    assert abs(float(replies[0].split()[0]) - with_ref[0]) <= 1e-5
    assert abs(float(replies[2].split()[0]) - without[0]) <= 1e-5


def test_mbr_chooses_the_lowest_expected_score(models, tmp_path):
    systems = sorted((DEMO / "systems").glob("*.de"))[:4]
    sources = tmp_path / "src.en"
    sources.write_text("\n".join(lines(SRC, 6)) + "\n", encoding="utf-8")
    for path in systems:
        (tmp_path / path.name).write_text("\n".join(lines(path, 6)) + "\n", encoding="utf-8")
    done = run("mbr", "-m", "metricx", "-o", f"metricx.model={models['json']}", "--source", sources, "-f", "json",
               *[tmp_path / p.name for p in systems])
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    for segment in out["segments"]:
        utilities = segment["utilities"]
        assert segment["choice"] == utilities.index(min(utilities))
    from evalpipe.evaluators.metricx import input_text

    cands = [lines(tmp_path / p.name, 6)[0] for p in systems]
    matrix, _ = anchor_scores(models["json"], [input_text("24", lines(SRC, 1)[0], c, r) for c in cands for r in cands],
                              1536)
    means = [sum(matrix[i * 4:(i + 1) * 4]) / 4 for i in range(4)]
    assert max(abs(a - b) for a, b in zip(out["segments"][0]["utilities"], means)) <= 1e-5


def _in_hub_cache(cache: Path, folder: Path, repo: str, tokenizer_repo: str = "google/mt5-xl") -> None:
    """``folder`` (the spiece.model variant) laid out in a Hugging Face cache as ``repo``, and its tokenizer as
    ``tokenizer_repo`` (mbrs 0.1.8 loads google/mt5-xl's tokenizer by hub id, whatever the model)."""
    for name, files in ((repo, ("config.json", "model.safetensors", "spiece.model", "tokenizer_config.json")),
                        (tokenizer_repo, ("config.json", "spiece.model", "tokenizer_config.json"))):
        repo_dir = cache / ("models--" + name.replace("/", "--"))
        (repo_dir / "snapshots" / "0123abcd").mkdir(parents=True)
        (repo_dir / "refs").mkdir()
        (repo_dir / "refs" / "main").write_text("0123abcd")
        for file in files:
            shutil.copy(folder / file, repo_dir / "snapshots" / "0123abcd" / file)


@pytest.mark.parametrize("repo,limit", [("google/metricx-24-hybrid-large-v2p6", 1536),
                                        ("google/metricx-23-large-v2p0", 1024)])
def test_mbr_equals_mbrs(comet_python, models, tmp_path, repo, limit):
    """``evalpipe mbr -m metricx -o metricx.inputs=mbrs`` against mbrs 0.1.8's ``DecoderMBR`` with
    ``MetricMetricX``, run unchanged (tests/anchors/mbrs_metricx.py) on the tiny model laid out in a Hugging Face
    cache under the hub ids mbrs knows (evalpipe reads the same hub id there): the same input ids, expected scores
    within 1e-5 and the same choices (``--ties mbrs``: torch.topk's pick among equal utilities), on 8 real segments
    of 6 candidates and a ninth past the length limit (those 8 rows joined, three times).  The ninth is not other
    real rows: the anchor's environment pins sentencepiece 0.2.0 (unbabel-comet needs it), evalpipe's has 0.2.3, and
    the two break some exact ties between two segmentations differently (``$1,000`` in row 11: ``0|00``, ``00|0``).

    mbrs builds its inputs otherwise than metricx's predict.py (evalpipe's default, the metric's authors'): each part
    tokenized on its own, no EOS, ``limit`` tokens kept where predict.py keeps ``limit - 1``; and where sentencepiece
    meets an exact tie, what came before can decide it, so a part tokenized alone can differ from the same words in
    the whole text.  mbrs after 0.1.8 sets ``is_encoder_decoder`` in its decoder's config as metricx does; in
    transformers that flag only picks the decoder's cache container, so both give these numbers."""
    cache = tmp_path / "hub"
    _in_hub_cache(cache, models["spiece"], repo)
    systems = sorted((DEMO / "systems").glob("*.de"))[:6]
    outputs = [lines(p, 8) + [" ".join(lines(p, 8) * 3)] for p in systems]
    src = lines(SRC, 8) + [" ".join(lines(SRC, 8) * 3)]
    files = []
    for k, out in enumerate(outputs):
        files.append(tmp_path / f"cand{k}.de")
        files[-1].write_text("\n".join(out) + "\n", encoding="utf-8")
    (tmp_path / "src.en").write_text("\n".join(src) + "\n", encoding="utf-8")
    segments = tmp_path / "segments.json"
    segments.write_text(json.dumps([{"source": s, "candidates": [o[g] for o in outputs]} for g, s in enumerate(src)]))
    want = comet_anchor(comet_python, str(Path(__file__).parent / "anchors" / "mbrs_metricx.py"), repo, str(segments),
                        mbrs=True, HF_HUB_CACHE=str(cache))["segments"]
    env = dict(child_env(), HF_HUB_CACHE=str(cache), HF_HUB_OFFLINE="1")
    done = subprocess.run([script("evalpipe"), "mbr", "-m", "metricx", "-o", f"metricx.model={repo}", "-o",
                           "metricx.inputs=mbrs", "--ties", "mbrs", "--source", tmp_path / "src.en", "-f", "json",
                           *files],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)["segments"]
    from evalpipe.evaluators.metricx import input_parts, input_text

    folder = str(cache / ("models--" + repo.replace("/", "--")) / "snapshots" / "0123abcd")
    metric = load_metric("metricx", model=folder, inputs="mbrs")
    assert len(got) == len(want) == 9
    for g, (mine, theirs) in enumerate(zip(got, want)):
        cands = [o[g] for o in outputs]
        ids, cut = metric.model.part_inputs([input_parts(metric.version, src[g], cands[0], r) for r in cands[:2]],
                                            limit)
        assert ids == theirs["ids"] and cut == [g == 8] * 2, g
        assert max(abs(a - b) for a, b in zip(mine["utilities"], theirs["utilities"])) <= 1e-5, g
        assert mine["choice"] == theirs["choice"], g
    assert len({s["choice"] for s in want}) > 1  # the choices vary
    predict_ids, _ = metric.model.inputs([input_text(metric.version, src[8], outputs[0][8], outputs[1][8])], limit)
    assert len(predict_ids[0]) == limit - 1 and len(want[8]["ids"][1]) == limit


def test_add_metric_writes_mtme_files_negated(models, tmp_path):
    root = tmp_path / "mtme"
    shutil.copytree(Path(__file__).parent / "data" / "wmt21.news", root / "wmt21.news")
    done = run("meta-eval", "add-metric", "metricx", "--root", root, "--test-set", "wmt21.news", "-l", "en-de", "-o",
               f"model={models['json']}")
    assert done.returncode == 0, done.stderr
    assert "lower-is-better: its scores are written negated" in done.stderr
    sys_lines = (root / "wmt21.news" / "metric-scores" / "en-de" / "metricx-refA.sys.score").read_text().splitlines()
    assert sys_lines and all(float(line.split("\t")[1]) <= 0 for line in sys_lines)


def broken(folder: Path, tmp_path: Path, drop=(), config=None) -> Path:
    out = tmp_path / "broken"
    shutil.copytree(folder, out)
    for name in drop:
        (out / name).unlink()
    if config:
        data = json.loads((out / "config.json").read_text())
        (out / "config.json").write_text(json.dumps({**data, **config}))
    return out


@pytest.mark.parametrize("case,expected", [
    ({"drop": ["model.safetensors"]}, "expected the model's weights, one of model.safetensors"),
    ({"drop": ["tokenizer.json"]}, "expected the mT5 tokenizer, tokenizer.json or spiece.model"),
    ({"config": {"model_type": "bert"}}, "expected an mT5 model (model_type mt5"),
    ({"config": {"vocab_size": 1000}}, "has no token 250089 (<extra_id_10>)"),
    ({"config": {"d_model": 32}}, "config.json makes"),
    ({"drop": ["config.json"]}, "expected a Hugging Face model folder"),
])
def test_a_bad_model_folder_is_one_line(models, tmp_path, case, expected):
    folder = broken(models["json"], tmp_path, **case)
    done = run("score-corpus", "-m", "metricx", "-o", f"metricx.model={folder}", "-o", "metricx.version=24",
               "--source", SRC, "-r", REF, SYSTEMS[0])
    assert done.returncode != 0 and "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("Error: ") and expected in last, last


@pytest.mark.parametrize("args,expected", [
    (["-o", "metricx.qe=true", "--source", SRC, "-r", REF], "give no -r"),
    (["-r", REF], "--source"),
    (["--source", SRC, "-r", REF, "-o", "metricx.version=25"], "version"),
    (["--source", SRC, "-r", REF, "-o", "metricx.model=nosuch/model-here"], "not in the Hugging Face cache"),
])
def test_bad_usage_is_one_line(models, args, expected):
    model = [] if any("metricx.model=" in str(a) for a in args) else ["-o", f"metricx.model={models['json']}"]
    done = run("score-corpus", "-m", "metricx", *model, *args, SYSTEMS[0])
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert expected in done.stderr.strip().splitlines()[-1], done.stderr


def test_the_version_comes_from_the_name_or_is_asked_for(models, tmp_path):
    unnamed = tmp_path / "some-model"
    shutil.copytree(models["json"], unnamed)
    with pytest.raises(OptionError, match="which MetricX is .*give -o metricx.version=23 or 24"):
        load_metric("metricx", model=str(unnamed))
    assert load_metric("metricx", model=str(unnamed), version="23").max_length == 1024
    assert load_metric("metricx", model=str(models["json"])).version == "24"


def test_a_hub_id_is_found_in_the_local_cache_only(models, tmp_path, monkeypatch):
    """A model named by hub id is the snapshot huggingface_hub left in the cache (refs/main), never a download."""
    snapshot = tmp_path / "hub" / "models--google--metricx-24-tiny" / "snapshots" / "abc123"
    shutil.copytree(models["json"], snapshot)
    (snapshot.parents[1] / "refs").mkdir()
    (snapshot.parents[1] / "refs" / "main").write_text("abc123")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    metric = load_metric("metricx", model="google/metricx-24-tiny")
    assert metric.model.folder == snapshot and metric.version == "24"
    with pytest.raises(InputError, match=r"not in the Hugging Face cache either \(looked in .*models--google--nothing"):
        load_metric("metricx", model="google/nothing")


def test_rankings_put_the_lowest_first(models):
    """score-corpus's clusters over MetricX (lower is better): the system with the lowest mean first."""
    systems = sorted((DEMO / "systems").glob("*.de"))[:3]
    done = run("score-corpus", "-m", "metricx", "-o", f"metricx.model={models['json']}", "--source", SRC, "-r", REF,
               "--all-pairs", "--paired-bs", "-f", "json", *systems)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    means = {r["system"]: r["score"] for r in out["results"]}
    pair = out["pairwise"]["metricx"]
    first = [s for s, c in zip(pair["systems"], pair["clusters"]) if c == min(pair["clusters"])]
    assert min(means, key=means.get) in first
    assert pair["systems"][0] == min(means, key=means.get)


def test_the_tokenizer_of_another_folder_and_bf16(models, tmp_path):
    """``tokenizer=DIR`` (a model folder without one, as MetricX's own checkpoints are) gives the same scores; bf16
    is another computation, so its signature says bf16 and its scores are near the fp32 ones."""
    bare = broken(models["json"], tmp_path, drop=["tokenizer.json", "tokenizer_config.json"])
    src, ref, hyp = lines(SRC, 12), lines(REF, 12), lines(SYSTEMS[0], 12)
    fp32 = load_metric("metricx", model=str(models["json"]), threads=1)
    given = load_metric("metricx", model=str(bare), tokenizer=str(models["json"]), version="24", threads=1)
    assert given.score_rows(src, hyp, ref).tolist() == fp32.score_rows(src, hyp, ref).tolist()
    half = load_metric("metricx", model=str(models["json"]), dtype="bf16", threads=1)
    assert "|bf16|" in half.signature(1) and "|fp32|" in fp32.signature(1)
    assert max(abs(a - b) for a, b in zip(half.score_rows(src, hyp, ref), fp32.score_rows(src, hyp, ref))) < 0.5


def test_the_table_prints_a_model_metric_with_its_own_decimals(models):
    """COMET and MetricX declare 4 decimals (comet-score prints 4): the table shows them so beside BLEU's 2; -w, when
    given, decides for every column."""
    common = ["score-corpus", "-m", "metricx", "bleu", "-o", f"metricx.model={models['json']}", "--source", SRC,
              "-r", REF, SYSTEMS[0]]
    row = run(*common).stdout.splitlines()[1].split()
    assert len(row[1].split(".")[1]) == 4 and len(row[2].split(".")[1]) == 2
    row = run(*common, "-w", "1").stdout.splitlines()[1].split()
    assert len(row[1].split(".")[1]) == 1 and len(row[2].split(".")[1]) == 1


def test_on_long_window_scores_long_segments_in_sentence_windows(models, tmp_path):
    """``-o metricx.on_long=window`` (evaluators/neural/windows.py) on real three-sentence segments past a 140-token
    limit: where source, hypothesis and reference split into as many sentences, the windows are those sentences in
    order, each fits (or is one sentence, cut and counted), none could take its next sentence, and the segment's
    score is the mean of the windows' own scores weighted by hypothesis characters; a segment whose fields do not pair up is cut as ``truncate`` cuts it
    (and counted); a segment that fits scores as without windows.  score-corpus's note counts both."""
    from evalpipe.evaluators.metricx import input_text
    from evalpipe.evaluators.neural.windows import sentences, windows

    src, ref, hyp = (lines(p, 60) for p in (SRC, REF, SYSTEMS[0]))
    rows = [tuple(" ".join(f[i:i + 3]) for f in (src, hyp, ref)) for i in range(0, 60, 3)]
    rows.append((src[0], hyp[0], ref[0]))  # one that fits
    S, H, R = (list(f) for f in zip(*rows))
    common = dict(model=str(models["json"]), max_input_length=140, threads=1)
    window = load_metric("metricx", on_long="window", **common)
    plain = load_metric("metricx", **common)
    got, base = window.score_rows(S, H, R), plain.score_rows(S, H, R)
    long = list(plain.last_cut)

    def fits(row):
        return not plain.model.inputs([input_text("24", *row)], 140)[1][0]

    split = 0
    for i, row in enumerate(rows):
        counts = {len(sentences(f)) for f in row}
        if not long[i]:
            assert not window.last_windowed[i] and abs(got[i] - base[i]) <= 1e-6
        elif len(counts) != 1 or counts == {1}:
            assert not window.last_windowed[i] and window.last_cut[i] and abs(got[i] - base[i]) <= 1e-6, i
        else:
            split += 1
            parts = windows(row, (0, 1, 2), fits)
            assert window.last_windowed[i] and len(parts) > 1
            for k in range(3):
                assert " ".join(p[k] for p in parts).split() == row[k].split()
            assert all(fits(p) for p in parts if len(sentences(p[1])) > 1)  # one sentence alone may not fit: cut
            assert window.last_cut[i] == any(not fits(p) for p in parts)
            n = len(sentences(row[1]))
            starts = [0]
            for p in parts:
                starts.append(starts[-1] + len(sentences(p[1])))
            for p, lo, hi in zip(parts, starts, starts[1:]):
                if hi < n:  # the next sentence would not fit
                    bigger = tuple(" ".join(sentences(row[k])[lo:hi + 1]) for k in range(3))
                    assert not fits(bigger)
            own = plain.score_rows(*(list(f) for f in zip(*parts)))
            weights = [len(p[1]) for p in parts]
            assert abs(got[i] - sum(s * w for s, w in zip(own, weights)) / sum(weights)) <= 1e-5
    assert split >= 5 and sum(long) > split  # both kinds of long segment occur
    for name, field in (("src.en", S), ("hyp.de", H), ("ref.de", R)):
        (tmp_path / name).write_text("\n".join(field) + "\n", encoding="utf-8")
    done = run("score-corpus", "-m", "metricx", "-o", f"metricx.model={models['json']}", "-o",
               "metricx.max_input_length=140", "-o", "metricx.on_long=window", "--source", tmp_path / "src.en", "-r",
               tmp_path / "ref.de", tmp_path / "hyp.de", "-f", "json")
    assert done.returncode == 0, done.stderr
    note = json.dumps(json.loads(done.stdout))
    assert f"{split} of {len(rows)} segments scored in sentence windows" in note, note
    assert "|long:window|" in note


def test_batch_tokens_packs_short_inputs_many_to_a_batch(models, monkeypatch):
    """``-o metricx.batch_tokens=N``: inputs sorted by length, each batch at most N padded tokens (inputs x the
    longest) unless one input alone is longer, at most batch_size inputs; the scores are those of plain batches."""
    src, ref, hyp = lines(SRC, 60), lines(REF, 60), lines(SYSTEMS[0], 60)
    plain = load_metric("metricx", model=str(models["json"]), threads=1)
    packed = load_metric("metricx", model=str(models["json"]), threads=1, batch_tokens=3000, batch_size=64)
    seen = []
    real = packed.model._batch

    def record(batch, replica=0):
        seen.append((len(batch), max(map(len, batch))))
        return real(batch, replica)

    monkeypatch.setattr(packed.model, "_batch", record)
    got, want = packed.score_rows(src, hyp, ref), plain.score_rows(src, hyp, ref)
    assert max(abs(a - b) for a, b in zip(got.tolist(), want.tolist())) <= 1e-5
    assert sum(n for n, _ in seen) == 60 and all(n * width <= 3000 or n == 1 for n, width in seen)
    assert max(n for n, _ in seen) > 16 > min(n for n, _ in seen)  # short inputs many to a batch, long ones few


def test_a_device_list_splits_the_inputs_over_copies_of_the_model(models, monkeypatch):
    """``-o metricx.device=cpu,cpu`` (as ``cuda:0,cuda:1`` with GPUs): a copy of the model on each device, each
    scoring a share of the inputs, the scores those of one device; a device torch does not see is one line."""
    from evalpipe.errors import MissingDependency

    src, ref, hyp = lines(SRC, 40), lines(REF, 40), lines(SYSTEMS[0], 40)
    one = load_metric("metricx", model=str(models["json"]), threads=1, batch_size=4)
    two = load_metric("metricx", model=str(models["json"]), threads=1, batch_size=4, device="cpu,cpu")
    used = []
    real = two.model._batch

    def spy(batch, replica=0):
        used.append(replica)
        return real(batch, replica)

    monkeypatch.setattr(two.model, "_batch", spy)
    got, want = two.score_rows(src, hyp, ref), one.score_rows(src, hyp, ref)
    assert max(abs(a - b) for a, b in zip(got.tolist(), want.tolist())) <= 1e-5
    assert used.count(0) == used.count(1) == 5 and len(two.model.models) == 2
    if not torch.cuda.is_available():
        with pytest.raises(MissingDependency, match="device=cuda:1: torch sees no GPUs here"):
            load_metric("metricx", model=str(models["json"]), device="cpu,cuda:1")


@pytest.mark.parametrize("flags", [["--decoder", "pruning", "--sampling-scheduler", "2,4", "--alpha", "0.9"],
                                   ["--decoder", "probabilistic", "--reduction-factor", "2"]])
def test_efficient_decoders_read_the_cells_of_the_exact_matrix(models, tmp_path, flags):
    """MetricX as the utility of pruning and probabilistic MBR (lower is better): the cells they compute are the
    exact matrix's (decoding the exact matrix saved by ``--save-utilities`` gives the same choices and expected
    utilities: within 1e-4, since the model's scores move by ~1e-6 with the batch they are computed in and the
    low-rank completion magnifies that), and they compute fewer of them."""
    systems = sorted((DEMO / "systems").glob("*.de"))[:4]
    sources = tmp_path / "src.en"
    sources.write_text("\n".join(lines(SRC, 6)) + "\n", encoding="utf-8")
    for path in systems:
        (tmp_path / path.name).write_text("\n".join(lines(path, 6)) + "\n", encoding="utf-8")
    files = [tmp_path / p.name for p in systems]
    model = ["-m", "metricx", "-o", f"metricx.model={models['json']}", "--source", sources]
    saved = tmp_path / "exact.npz"
    assert run("mbr", *model, *files, "--save-utilities", saved).returncode == 0
    computed = run("mbr", *model, *files, "-f", "json", *flags)
    read = run("mbr", *files, "--utilities", saved, "-f", "json", *flags)
    assert computed.returncode == 0 and read.returncode == 0, computed.stderr + read.stderr
    mine, again = json.loads(computed.stdout), json.loads(read.stdout)
    for a, b in zip(mine["segments"], again["segments"]):
        assert [u is None for u in a["utilities"]] == [u is None for u in b["utilities"]]
        assert [u for u in a["utilities"] if u is not None] == \
            pytest.approx([u for u in b["utilities"] if u is not None], abs=1e-4)
    assert [s["choice"] for s in mine["segments"]] == [s["choice"] for s in again["segments"]]
    assert mine["cells"]["computed"] < mine["cells"]["exact"] == 6 * 16
