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


def test_entry_points_are_importlib_metadatas(broken_plugin, tmp_path, monkeypatch):
    """evalpipe's reader of entry_points.txt files finds what importlib.metadata finds, for every group of
    this environment, a plugin on PYTHONPATH included; with a zip archive on sys.path it asks importlib."""
    import importlib.metadata as standard
    import zipfile

    from evalpipe import entry_points

    groups = {ep.group for dist in standard.distributions() for ep in dist.entry_points}
    assert {"evalpipe.metrics", "evalpipe.engines", "console_scripts"} <= groups
    for group in groups:
        found = [(ep.name, ep.value) for ep in standard.entry_points(group=group)]
        names = [name for name, _ in found]
        twice = {name for name in names if names.count(name) > 1}  # declared by two distributions (mecab-py by
        assert not (twice and group.startswith("evalpipe.")), twice  # mecab-python3 and mecab-ko): no order to agree on
        want = {name: value for name, value in found if name not in twice}
        ours = {name: ep.value for name, ep in entry_points.entry_points(group).items() if name not in twice}
        assert ours == want, group
    assert entry_points.entry_points("evalpipe.metrics")["broken"].value == "no_such_module_anywhere:Metric"
    assert entry_points.entry_points("evalpipe.metrics")["bleu"].load() is registry.load_class("bleu")
    archive = tmp_path / "plugins.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("zipped_plugin-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: zipped-plugin\nVersion: 1.0\n")
        zipped.writestr("zipped_plugin-1.0.dist-info/entry_points.txt", "[evalpipe.metrics]\nzipped = zipped:Metric\n")
    monkeypatch.syspath_prepend(str(archive))
    assert entry_points.entry_points("evalpipe.metrics")["zipped"].value == "zipped:Metric"
