"""Plugin discovery: a broken third-party plugin is reported by name and does not break the others;
listing imports nothing; metrics load by import path."""
from __future__ import annotations

import sys

import pytest
from click.testing import CliRunner

from evalpipe import registry
from evalpipe.cli import main


@pytest.fixture()
def broken_plugin(tmp_path, monkeypatch):
    dist = tmp_path / "broken_metric_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-metric-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[evalpipe.metrics]\nbroken = no_such_module_anywhere:Metric\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry._entry_points.cache_clear()
    yield
    registry._entry_points.cache_clear()


def test_broken_plugin_is_named_and_others_still_load(broken_plugin):
    assert "broken" in registry.list_metrics()
    with pytest.raises(registry.PluginError, match=r"plugin 'broken' \(no_such_module_anywhere:Metric\) failed to load"):
        registry.load_metric("broken")
    assert registry.load_metric("bleu").name == "bleu"
    result = CliRunner().invoke(main, ["list"])
    assert result.exit_code == 0
    assert "broken  [failed to load:" in result.output and "bleu" in result.output


def test_listing_imports_no_plugin(monkeypatch):
    for module in [m for m in sys.modules if m.startswith("evalpipe.evaluators.")]:
        monkeypatch.delitem(sys.modules, module)  # restored after the test
    registry._entry_points.cache_clear()
    names = registry.list_metrics()
    assert "bleu" in names and not any(m.startswith("evalpipe.evaluators.") for m in sys.modules)


def test_load_by_import_path():
    metric = registry.load_metric("evalpipe.evaluators.accuracy:Accuracy", attachment=True)
    assert metric.options["attachment"] is True
    with pytest.raises(registry.PluginError, match="cannot load"):
        registry.load_metric("evalpipe.evaluators.accuracy:Nope")
