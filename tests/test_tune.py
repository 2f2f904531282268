"""`evalpipe tune`: the n-best reader, Och's exact line search against brute force, MERT, the shipped demo."""
from __future__ import annotations

import itertools
import json
import random
import subprocess

import numpy as np
import pytest

from conftest import child_env, script
from evalpipe import load_metric
from evalpipe.errors import InputError
from evalpipe.protocol import Client
from evalpipe.tune.linesearch import envelope, line_search, select
from evalpipe.tune.mert import mert, nbest_stats
from evalpipe.tune.nbest import format_line, parse_features, parse_nbest

WORDS = "the a cat dog sat on mat rug quickly slowly".split()


def tiny(seed, segments=4, hypotheses=3, dims=2):
    """Random tiny n-best data: integer features, real BLEU stats of random sentences."""
    rng = random.Random(seed)
    bleu = load_metric("bleu")
    features, stats, refs = [], [], []
    for _ in range(segments):
        ref = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 8)))
        hyps = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9))) for _ in range(hypotheses)]
        features.append(np.array([[rng.randint(-3, 3) for _ in range(dims)] for _ in hyps], dtype=np.float64))
        stats.append(np.array([bleu.stats(h, [ref]) for h in hyps], dtype=np.float64))
        refs.append(ref)
    return features, stats, bleu


def brute_force(features, stats, w, d, score):
    """The best score along w + gamma d, trying a point inside every interval between *all* pairwise
    crossings of hypothesis lines (no envelope)."""
    crossings = set()
    for f in features:
        a, b = f @ w, f @ d
        for i, j in itertools.combinations(range(len(a)), 2):
            if b[i] != b[j]:
                crossings.add((a[i] - a[j]) / (b[j] - b[i]))
    points = sorted(crossings)
    trials = [0.0] if not points else [points[0] - 1] + [(p + q) / 2 for p, q in zip(points, points[1:])] + [points[-1] + 1]
    best = None
    for g in trials:
        chosen = select(features, w + g * d)
        value = score(np.sum([s[k] for s, k in zip(stats, chosen)], axis=0))
        best = value if best is None else max(best, value)
    return best


@pytest.mark.parametrize("seed", range(40))
def test_line_search_equals_brute_force(seed):
    features, stats, bleu = tiny(seed)
    rng = np.random.default_rng(seed)
    w, d = rng.integers(-2, 3, 2).astype(float), rng.integers(-2, 3, 2).astype(float)
    score = lambda v: bleu.score(v.tolist())  # noqa: E731
    best, gamma = line_search(features, stats, w, d, lambda rows: np.array([score(r) for r in rows]))
    assert best == brute_force(features, stats, w, d, score)
    chosen = select(features, w + gamma * d)
    assert score(np.sum([s[k] for s, k in zip(stats, chosen)], axis=0)) == best


def test_envelope_of_known_lines():
    # y = 0, y = x, y = -x, y = 1 (flat, above 0): envelope -x until -1, then 1 until 1, then x
    starts, best = envelope(np.array([0.0, 0.0, 0.0, 1.0]), np.array([0.0, 1.0, -1.0, 0.0]))
    assert best == [2, 3, 1] and starts == [-np.inf, -1.0, 1.0]
    starts, best = envelope(np.array([2.0, 2.0]), np.array([1.0, 1.0]))  # identical lines: the first wins
    assert best == [0] and starts == [-np.inf]


def test_mert_through_the_protocol_improves_and_reports_what_its_weights_select():
    """Scored by `evalpipe serve bleu` (multi-vector EVAL): the tuned weights select exactly the reported
    score, which is at least every start point's; the curve never goes down within a start."""
    features, stats, bleu = tiny(11, segments=5, hypotheses=4)
    lines = [format_line(s, f"h{s}_{k}", ["f1", "f2"], f[k]) for s, f in enumerate(features) for k in range(len(f))]
    nbest = parse_nbest(lines)
    table = {s: stats[s] for s in range(len(stats))}
    with Client("bleu", timeout=60) as client:
        result = mert(nbest, table, client, restarts=3, seed=1)
        w = np.array([result.weights["f1"], result.weights["f2"]])
        chosen = np.sum([stats[s][k] for s, k in enumerate(select(features, w))], axis=0)
        assert client.evaluate_many([chosen.tolist()])[1] == result.score
    starts = [p["score"] for p in result.curve if p["iteration"] == 0]
    assert result.score >= max(starts) and len(starts) == 4
    for run in range(4):
        scores = [p["score"] for p in result.curve if p["start"] == run]
        assert scores == sorted(scores)


def test_nbest_reader_and_its_errors():
    names, values = parse_features("LM0= -1.5 TM0= 0.1 0.2 w=3")
    assert names == ["LM0", "TM0_1", "TM0_2", "w"] and values == [-1.5, 0.1, 0.2, 3.0]
    nbest = parse_nbest(["0 ||| a b ||| F= 1 2 ||| 0", "1 ||| x ||| F= 3 3 ||| 1", "0|||a c|||F= 0 1|||0"])
    assert nbest.ids == [0, 1] and nbest.hypotheses[0] == ["a b", "a c"] and nbest.features[1].tolist() == [[3, 3]]
    for lines, message in ((["x ||| a ||| F= 1"], "integer segment id"), (["0 ||| a"], "got 2 field"),
                           (["0 ||| a ||| F= 1", "2 ||| b ||| F= 1"], "segment id 1 has no lines"),
                           (["0 ||| a ||| F= 1", "0 ||| b ||| G= 1"], "line 2: expected the features F"),
                           (["0 ||| a ||| F= one"], "a number for feature F"), (["0 ||| a ||| 1 F= 2"], "before any name")):
        with pytest.raises(InputError, match=message):
            parse_nbest(lines, "list.nbest")


def test_missing_reference_is_named():
    nbest = parse_nbest(["0 ||| a ||| F= 1", "1 ||| b ||| F= 1", "2 ||| c ||| F= 1"])
    with Client("bleu", timeout=60) as client, pytest.raises(InputError, match="segment id 2 has no reference"):
        nbest_stats(nbest, [["a", "b"]], client)


def test_demo_improves_held_out_bleu_over_uniform_weights(tmp_path):
    out = tmp_path / "weights.json"
    done = subprocess.run([script("evalpipe"), "tune", "--demo", "--restarts", "2", "--output", str(out)],
                          capture_output=True, text=True, env=child_env(), timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    held = report["held_out"]
    assert held["tuned"] > held["uniform weights"]
    assert f"held-out tuned\t{held['tuned']!r}" in done.stdout and "lines/s" in done.stderr


def test_tune_cli_with_a_scorer_command_equals_the_default_scorer(tmp_path):
    """`--scorer-cmd` drives any METEOR-style command; here `evalpipe serve bleu` given as a command line,
    which must tune exactly as the built-in default does."""
    import shlex
    import sys

    features, stats, _ = tiny(5, segments=6, hypotheses=3)
    rng = random.Random(5)
    refs = [" ".join(rng.choice(WORDS) for _ in range(6)) for _ in range(6)]
    lines = [format_line(s, " ".join(rng.choice(WORDS) for _ in range(5)), ["f1", "f2"], f[k])
             for s, f in enumerate(features) for k in range(len(f))]
    (tmp_path / "nbest.txt").write_text("\n".join(lines) + "\n")
    (tmp_path / "ref.txt").write_text("\n".join(refs) + "\n")
    outputs = []
    for extra in ([], ["--scorer-cmd", shlex.join([sys.executable, "-m", "evalpipe", "serve", "bleu"])]):
        done = subprocess.run([script("evalpipe"), "tune", str(tmp_path / "nbest.txt"), "-r", str(tmp_path / "ref.txt"),
                               "--restarts", "2", *extra], capture_output=True, text=True, env=child_env(), timeout=120)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1] and "tuning score\t" in outputs[0]
