"""The sentence-evaluator API (sequential, pool, Spark) and the predict-only translation Env."""
from __future__ import annotations

import json
import logging

import numpy as np
import pytest
from click.testing import CliRunner

from evalpipe.cli import main
from evalpipe.env import CopySourceAgent, Env
from evalpipe.evaluators.token_f1 import TokenF1
from evalpipe.sentence_evaluator import LabelAccuracyEvaluator, SentenceEvaluator


def tagger(tokens):
    return ["N" if t[0].isupper() else "V" for t in tokens]


DATA = [(s.split(), g.split()) for s, g in [("Dogs bark loudly", "N V V"), ("Cats sleep", "N N"),
                                             ("The Big Dog runs", "N V N V"), ("x", "V")]] * 50


def test_sequential_and_pool_agree_and_log(caplog):
    evaluator = LabelAccuracyEvaluator(tagger)
    with caplog.at_level(logging.INFO, logger="evalpipe.sentence_evaluator"):
        seq = evaluator.sequential_evaluate(DATA)
    par = evaluator.parallel_evaluate(DATA, engine="pool", workers=2)
    assert seq == par
    correct, gold, sentences = seq["stats"]
    assert (gold, sentences) == (10 * 50, 4 * 50)
    assert f"Unlabelled accuracy: {correct / gold:.4f} ({correct}, {gold})" in caplog.text
    assert f"Unlabelled attachment: {(correct + sentences) / (gold + sentences):.4f}" in caplog.text


def test_wrong_length_prediction_is_an_error():
    with pytest.raises(ValueError, match="expected 2 predicted labels"):
        LabelAccuracyEvaluator(lambda t: ["N"]).sequential_evaluate([(["a", "b"], ["N", "N"])])


def test_abstract_method_raises():
    class Incomplete(SentenceEvaluator):
        pass

    with pytest.raises(TypeError):
        Incomplete()


@pytest.mark.spark
def test_spark_agrees():
    pytest.importorskip("pyspark")
    evaluator = LabelAccuracyEvaluator(tagger)
    assert evaluator.parallel_evaluate(DATA, engine="spark", spark_master="local[2]") == \
        evaluator.sequential_evaluate(DATA)


def test_env_episodes_are_deterministic_and_cover_the_data():
    env = Env(number_episodes=7, seed=3)
    seen = []
    while not env.is_complete():
        task = env.get_next_task()
        assert isinstance(task["X_test"], np.ndarray) and len(task["X_test"]) == len(task["y_test"])
        seen += list(task["X_test"])
    assert len(seen) == 200
    with pytest.raises(RuntimeError, match="reset"):
        env.get_next_task()
    env.reset()
    again = Env(number_episodes=7, seed=3)
    assert list(env.get_next_task()["X_test"]) == list(again.get_next_task()["X_test"])


def test_env_evaluate_is_token_f1():
    env = Env(number_episodes=2)
    task = env.get_next_task()
    preds = CopySourceAgent().predict(task["X_test"])
    metric = TokenF1()
    expected = sum(metric.stats(p, [r])[0] for p, r in zip(preds, task["y_test"])) / len(preds)
    assert env.evaluate(preds, task["y_test"]) == pytest.approx(expected)
    assert env.evaluate(list(task["y_test"]), task["y_test"]) == 1.0
    with pytest.raises(ValueError, match="expected 100 predictions"):
        env.evaluate(preds[:-1], task["y_test"])


def test_env_dataset_validation(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"pairs": [{"en": "a"}]}))
    with pytest.raises(ValueError, match="lacks a string 'en' or 'de'"):
        Env(number_episodes=1, dataset=str(bad))
    good = tmp_path / "fr.json"
    good.write_text(json.dumps({"description": "x", "num_pairs": 2, "pairs": [{"en": "a b", "fr": "a b"},
                                                                              {"en": "c", "fr": "d"}]}))
    env = Env(number_episodes=1, dataset=str(good), target="fr")
    task = env.get_next_task()
    assert env.evaluate(task["X_test"], task["y_test"]) == 0.5


def test_env_run_cli():
    result = CliRunner().invoke(main, ["env", "run", "--demo", "--episodes", "4", "-m", "bleu", "-f", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert len(doc["episodes"]) == 4 and 0 <= doc["mean"]["token_f1"] <= 1 and "bleu" in doc["mean"]
