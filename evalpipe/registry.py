"""Plugin discovery through the ``evalpipe.metrics`` entry-point group.

Built-in metrics are declared in ``setup.cfg`` exactly as a third party declares one.  Listing
reads package metadata only; a plugin is imported when it is loaded.  A plugin that fails to import
raises :class:`PluginError` naming it, and never prevents the others from loading.
A metric can also be loaded by import path, ``package.module:Class``.
"""
from __future__ import annotations

import importlib
from functools import lru_cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Dict, List

METRICS_GROUP = "evalpipe.metrics"
AGENTS_GROUP = "evalpipe.agents"


class PluginError(LookupError):
    """A plugin that is unknown or failed to load."""


@lru_cache(maxsize=None)
def _entry_points(group: str) -> Dict[str, EntryPoint]:
    """The group's entry points, read from package metadata once per process."""
    try:
        eps = entry_points(group=group)
    except TypeError:  # Python < 3.10
        eps = entry_points().get(group, [])
    return {ep.name: ep for ep in eps}


def list_metrics() -> List[str]:
    """Names of the installed metric plugins (nothing is imported)."""
    return sorted(_entry_points(METRICS_GROUP))


def load_class(name: str, group: str = METRICS_GROUP) -> Any:
    """The plugin class registered as ``name`` in ``group``, or at import path ``module:Class``."""
    if ":" in name:
        module, _, attr = name.partition(":")
        try:
            obj = importlib.import_module(module)
            for part in attr.split("."):
                obj = getattr(obj, part)
        except (ImportError, AttributeError) as exc:
            raise PluginError(f"cannot load {name!r}: {type(exc).__name__}: {exc}") from exc
        return obj
    eps = _entry_points(group)
    if name not in eps:
        known = ", ".join(sorted(eps)) or "(none installed)"
        raise PluginError(f"unknown plugin {name!r} in {group}; installed: {known}")
    try:
        return eps[name].load()
    except Exception as exc:  # a broken third-party plugin must not take the others down
        raise PluginError(f"plugin {name!r} ({eps[name].value}) failed to load: {type(exc).__name__}: {exc}") from exc


def load_metric(name: str, **options: Any) -> Any:
    """An instance of the metric called ``name`` (entry point or ``module:Class``) with ``options``.

    ``name`` may also be a combination such as ``bleu-ter`` or ``0.7*bleu+0.3*chrf``
    (see :mod:`evalpipe.sufficient_stats.combine`).
    """
    from evalpipe.sufficient_stats.combine import is_combination, load_combination

    if is_combination(name):
        return load_combination(name, **options)
    cls = load_class(name, METRICS_GROUP)
    return cls(**options)
