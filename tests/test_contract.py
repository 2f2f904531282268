"""One contract test suite over every registered metric plugin (built-ins and third parties)."""
from __future__ import annotations

import math

import pytest

from evalpipe import list_metrics, load_metric
from evalpipe.sufficient_stats import OptionError, sum_stats
from evalpipe.sufficient_stats.vectors import format_stats, parse_stats, partial_sum

HYPS = ["the cat sat on the mat .", "a dog barks", "", "Ünïcödé words, ok?", "x y z"]
REFS = [["the cat is on the mat .", "there is a cat on the mat"], ["the dog barks", "a dog is barking"],
        ["nothing here", "empty"], ["Ünïcödé words , ok ?", "unicode words"], ["x y w", "x z y"]]
LABEL_HYPS = ["N V D N", "A B", "X", "P Q R", "S"]
LABEL_REFS = [["N V N N"], ["A B"], ["Y"], ["P Q R"], ["S"]]


def _data(name):
    from evalpipe.registry import load_class

    examples = getattr(load_class(name), "CONTRACT_EXAMPLES", None)
    if examples:
        return [h for h, _ in examples], [r for _, r in examples]
    return (LABEL_HYPS, LABEL_REFS) if name == "accuracy" else (HYPS, REFS)


@pytest.fixture(params=list_metrics())
def metric_name(request):
    return request.param


_MODELS = {}


def load(name, **options):
    """The metric with the options its contract run needs: a metric that runs a model (``CONTRACT_TINY_MODEL``, the
    COMET family) gets a tiny model with random weights, built once (src/evalpipe/tiny_comet.py)."""
    from evalpipe.registry import load_class

    family = getattr(load_class(name), "CONTRACT_TINY_MODEL", None)
    if family is not None:
        pytest.importorskip("torch", reason="COMET models need torch (extra evalpipe[comet])")
        pytest.importorskip("tokenizers", reason="COMET models need tokenizers (extra evalpipe[comet])")
        if family not in _MODELS:
            import tempfile
            from pathlib import Path

            from evalpipe import tiny_comet as tiny, tiny_metricx

            folder = Path(tempfile.mkdtemp(prefix="contract-")) / family
            _MODELS[family] = str(tiny_metricx.build(folder) if family == "metricx" else tiny.build(folder, family))
        options.setdefault("model", _MODELS[family])
        if family == "metricx":
            options.setdefault("version", "24")
    return load_metric(name, **options)


def test_registry_lists_builtins():
    assert {"bleu", "chrf", "ter", "token_f1", "accuracy"} <= set(list_metrics())


def test_fixed_length_and_fields(metric_name):
    metric = load(metric_name)
    hyps, refs = _data(metric_name)
    for h, r in zip(hyps, refs):
        stats = metric.stats(h, r)
        assert len(stats) == metric.num_stats == len(metric.stats_fields)
        assert all(isinstance(v, (int, float)) and math.isfinite(v) for v in stats)


def test_additivity_and_corpus_score(metric_name):
    metric = load(metric_name)
    hyps, refs = _data(metric_name)
    rows = [metric.stats(h, r) for h, r in zip(hyps, refs)]
    streams = [[r[k] for r in refs] for k in range(len(refs[0]))]
    whole = metric.corpus_score(hyps, streams)
    if getattr(metric, "EXACT_ACROSS_BATCHES", True):
        assert metric.score(sum_stats(rows)) == whole
    else:  # a float32 model: a segment scored alone or in a batch differs in the last bits (COMET's own do too)
        assert metric.score(sum_stats(rows)) == pytest.approx(whole, rel=1e-6, abs=1e-6)
    halves = partial_sum(rows[:2]).merge(partial_sum(rows[2:])).finish()
    assert halves == sum_stats(rows)


def test_stats_text_round_trip(metric_name):
    metric = load(metric_name)
    hyps, refs = _data(metric_name)
    for h, r in zip(hyps, refs):
        stats = metric.stats(h, r)
        assert parse_stats(format_stats(stats)) == stats


def test_signature_present(metric_name):
    metric = load(metric_name)
    hyps, refs = _data(metric_name)
    metric.stats(hyps[0], refs[0])
    sig = metric.signature()
    assert isinstance(sig, str) and ":" in sig


def test_unknown_option_names_valid_ones(metric_name):
    with pytest.raises(OptionError, match="valid options"):
        load(metric_name, no_such_option=1)


def test_wrong_length_rejected(metric_name):
    metric = load(metric_name)
    with pytest.raises(ValueError, match=f"expects {metric.num_stats} stats"):
        metric.score([1] * (metric.num_stats + 1))


def test_no_reference_is_an_error(metric_name):
    metric = load(metric_name)
    hyps, refs = _data(metric_name)
    if metric.min_references == 0:  # latency metrics: only those that use the reference need one
        needs = getattr(metric, "uses_reference", True)
        if needs:
            with pytest.raises(ValueError, match="needs a reference"):
                metric.stats(hyps[0], [])
        else:
            assert len(metric.stats(hyps[0], [])) == metric.num_stats
        return
    with pytest.raises(ValueError, match="at least one reference|the source"):
        metric.stats(hyps[0], [])


def test_wrong_hypothesis_kind_is_named(metric_name):
    metric = load(metric_name)
    hyps, refs = _data(metric_name)
    with pytest.raises(ValueError, match="hypothesis"):
        metric.stats(3, refs[0])
