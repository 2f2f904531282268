"""mbrs 0.1.8's packages without their eager ``__init__`` files, for the anchor scripts beside this one.

``mbrs/metrics/__init__.py`` imports every neural metric eagerly (bert_score, comet, bleurt, metricx), and
``mbrs/selectors/__init__.py`` and ``mbrs/decoders/__init__.py`` import modules that need them.  :func:`packages`
registers empty packages ``mbrs.metrics``, ``mbrs.selectors`` and ``mbrs.decoders`` (``types.ModuleType`` with
``__path__`` set to the real folders), copies onto each the names its modules import from it (as the real
``__init__`` files define them), and returns them; the scripts then import the modules they need.
"""
import importlib
import os
import sys
import types

import mbrs

root = os.path.dirname(mbrs.__file__)


def _package(name):
    pkg = types.ModuleType(f"mbrs.{name}")
    pkg.__path__ = [os.path.join(root, name)]
    sys.modules[f"mbrs.{name}"] = pkg
    setattr(mbrs, name, pkg)
    return pkg


def _copy(pkg, module, names):
    loaded = importlib.import_module(module)
    for attr in names:
        setattr(pkg, attr, getattr(loaded, attr))
    return loaded


def metric_enum(metrics, modules=("chrf", "bleu", "ter")):
    """Import these metric modules (each registers itself) and define ``mbrs.metrics.Metrics`` from the registry,
    as ``mbrs/metrics/__init__.py`` does after importing every metric (the diverse selector's config reads it)."""
    import enum

    from mbrs import registry

    for name in modules:
        importlib.import_module(f"mbrs.metrics.{name}")

    class MetricEnum(str, enum.Enum): ...

    metrics.Metrics = MetricEnum("Metrics", {k: k for k in registry.get_registry(
        metrics.Metric | metrics.MetricReferenceless).keys()})
    return metrics.Metrics


def packages():
    """``(metrics, selectors, decoders)``: the three light packages, with the mbr decoder registered."""
    metrics = _package("metrics")
    _copy(metrics, "mbrs.metrics.base", ("Metric", "MetricAggregatable", "MetricAggregatableCache", "MetricBase",
                                         "MetricCacheable", "MetricReferenceless", "get_metric", "register"))
    selectors = _package("selectors")
    _copy(selectors, "mbrs.selectors.base", ("Selector", "register", "get_selector"))
    nbest = importlib.import_module("mbrs.selectors.nbest")
    selectors.SelectorNbest = nbest.SelectorNbest
    selectors.SELECTOR_NBEST = nbest.SelectorNbest(nbest.SelectorNbest.Config())  # as selectors/__init__.py makes it
    decoders = _package("decoders")
    _copy(decoders, "mbrs.decoders.base", ("DecoderBase", "DecoderReferenceBased", "DecoderReferenceless", "register",
                                           "get_decoder"))
    decoders.DecoderMBR = importlib.import_module("mbrs.decoders.mbr").DecoderMBR
    return metrics, selectors, decoders
