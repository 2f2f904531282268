"""Plugins and metric specs: the one path from a name and ``KEY=VALUE`` options to a metric.

Plugins register in entry-point groups -- ``evalpipe.metrics``, ``evalpipe.agents``,
``evalpipe.engines`` -- and the built-ins are declared in ``setup.cfg`` exactly as a third party
declares one.  Listing reads package metadata only; a plugin is imported when it is loaded, and one
that fails to import raises :class:`~evalpipe.errors.PluginError` naming it, never taking the others
down.  A plugin can also be loaded by import path, ``package.module:Class``.

A :class:`MetricSpec` is a metric's name (an entry point, ``module:Class`` or a combination such as
``bleu-ter``) with its options: it pickles, and :meth:`MetricSpec.build` rebuilds the metric in any
process (once per process).  :func:`metric_specs` routes ``[METRIC.]KEY=VALUE`` options among several
selected metrics; every front end (``serve``, ``score-corpus``, ``meta-eval add-metric``, ``simul``)
loads metrics through it.
"""
from __future__ import annotations

import importlib
import os
import sys
from functools import lru_cache
from typing import Any, Dict, List, Mapping, NamedTuple, Sequence, Tuple

from evalpipe.entry_points import EntryPoint, entry_points
from evalpipe.errors import OptionError, PluginError

METRICS_GROUP = "evalpipe.metrics"
AGENTS_GROUP = "evalpipe.agents"
ENGINES_GROUP = "evalpipe.engines"


@lru_cache(maxsize=None)
def _entry_points(group: str) -> Dict[str, EntryPoint]:
    """The group's entry points, read from package metadata once per process."""
    return entry_points(group)


def list_plugins(group: str = METRICS_GROUP) -> List[str]:
    """Names of the installed plugins of a group (nothing is imported)."""
    return sorted(_entry_points(group))


def list_metrics() -> List[str]:
    """Names of the installed metric plugins (nothing is imported)."""
    return list_plugins(METRICS_GROUP)


def load_class(name: str, group: str = METRICS_GROUP) -> Any:
    """The plugin registered as ``name`` in ``group``, or the object at import path ``module:Class`` (a
    module in the current folder is found too, as ``python -m`` finds it; installed modules come first)."""
    if ":" in name:
        module, _, attr = name.partition(":")
        if os.getcwd() not in sys.path and "" not in sys.path:
            sys.path.append(os.getcwd())
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


def is_combination(name: str) -> bool:
    """True when ``name`` is a combination spec rather than one metric's name."""
    return any(c in name for c in "+-*") and ":" not in name and name not in _entry_points(METRICS_GROUP)


def _members(name: str) -> List[Tuple[float, str]]:
    if not is_combination(name):
        return [(1.0, name)]
    from evalpipe.sufficient_stats.combine import parse_spec  # only combinations need it (import time)

    return parse_spec(name)


def _accepts(name: str, key: str) -> bool:
    """Whether the metric ``name`` (or a member of it) takes option ``[MEMBER.]KEY``."""
    target, dot, opt = key.rpartition(".")
    members = [member for _, member in _members(name)]
    if dot:
        return target == name or target in members
    return any(opt in load_class(member).OPTIONS for member in members)


def route_options(names: Sequence[str], options: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """One options dict per metric: ``NAME.KEY`` goes to the metric (or combination member) called
    NAME, a bare ``KEY`` to every metric that (or a member of which) has that option.  An option that
    reaches no metric is an :class:`OptionError` naming the metrics."""
    routed: List[Dict[str, Any]] = [{} for _ in names]
    for key, value in options.items():
        hits = [i for i, name in enumerate(names) if _accepts(name, key)]
        if not hits:
            members = list(dict.fromkeys(m for n in names for _, m in _members(n)))
            valid = "; ".join(f"{m}: {', '.join(sorted(load_class(m).OPTIONS)) or '(none)'}" for m in members)
            raise OptionError(f"option {key!r} matches no metric of {', '.join(names)}; valid options: {valid}"
                              + (" (METRIC.KEY for one metric)" if len(members) > 1 else ""))
        for i in hits:
            target, dot, opt = key.rpartition(".")
            routed[i][opt if dot and target == names[i] else key] = value
    return routed


def load_metric(name: str, **options: Any) -> Any:
    """An instance of the metric called ``name`` (entry point, ``module:Class`` or combination such as
    ``bleu-ter`` or ``0.7*bleu+0.3*chrf``, see :mod:`evalpipe.sufficient_stats.combine`)."""
    if not is_combination(name):
        return load_class(name, METRICS_GROUP)(**options)
    from evalpipe.sufficient_stats.combine import Combination, parse_spec

    terms = parse_spec(name)
    members = [member for _, member in terms]
    routed = route_options(members, options)
    return Combination([(w, member, load_class(member)(**opts)) for (w, member), opts in zip(terms, routed)])


_BUILT: Dict[Any, Any] = {}


class MetricSpec(NamedTuple):
    """A metric as data: ``name`` plus ``options`` (sorted ``(key, value)`` pairs); picklable."""

    name: str
    options: Tuple[Tuple[str, Any], ...] = ()

    @classmethod
    def of(cls, name: str, options: Mapping[str, Any] = ()) -> "MetricSpec":
        return cls(name, tuple(sorted(dict(options).items())))

    def build(self) -> Any:
        """The metric, built once per process (engines' workers and executors call this)."""
        metric = _BUILT.get(self)
        if metric is None:
            metric = _BUILT[self] = load_metric(self.name, **dict(self.options))
        return metric


class ScoresSpec(NamedTuple):
    """Segment scores computed elsewhere as a metric called ``name`` (the ``segment_scores`` plugin with that label);
    an input of their numbers goes with each system (:mod:`evalpipe.score_files`).  Picklable."""

    name: str
    options: Tuple[Tuple[str, Any], ...] = ()

    @classmethod
    def of(cls, name: str, given: Mapping[str, Any] = (), origin: str = "") -> "ScoresSpec":
        """The spec of scores ``name`` with the metric options among ``given`` (its ``-o NAME.KEY`` values: the
        direction; the reading options format and field are not the metric's), built once so a bad value fails now.
        ``origin``: the signature of the model that computed them here (``-m comet``)."""
        spec = cls(name, (("direction", dict(given).get("direction", "auto")),) + ((("origin", origin),) if origin else ()))
        spec.build()
        return spec

    def build(self) -> Any:
        metric = _BUILT.get(self)
        if metric is None:
            metric = _BUILT[self] = load_metric("segment_scores", label=self.name, **dict(self.options))
        return metric


def metric_specs(names: Sequence[str], options: Mapping[str, Any] = ()) -> List[MetricSpec]:
    """Specs of several selected metrics with ``[METRIC.]KEY=VALUE`` options routed among them; each is
    built once here, so an unknown name or a bad option fails now, naming itself."""
    names = list(dict.fromkeys(names))
    specs = [MetricSpec.of(n, opts) for n, opts in zip(names, route_options(names, dict(options)))]
    for spec in specs:
        spec.build()
    return specs


_KINDS = {int: "an integer", float: "a number", bool: "true or false", str: "text"}


def _convert(value: Any, kind: Any) -> Any:
    if kind is bool and isinstance(value, str):
        if value.lower() in ("true", "yes", "1", "on"):
            return True
        if value.lower() in ("false", "no", "0", "off"):
            return False
        raise ValueError(value)
    return kind(value) if kind in _KINDS and isinstance(value, str) else value


def build_with_settings(cls: Any, settings: Dict[str, Any], what: str, flag: str = "--agent-option") -> Any:
    """``cls(**settings)`` with the settings checked against its constructor first: an unknown key (naming the
    ones it takes), a missing required one, or a value not of the parameter's type (from its annotation or
    default: int, float, bool, str) is an :class:`OptionError` naming it -- never a ``TypeError`` from Python."""
    import inspect
    import typing

    try:
        params = [p for p in inspect.signature(cls).parameters.values() if p.kind not in (p.VAR_POSITIONAL,)]
    except (TypeError, ValueError):  # no signature to read: the constructor judges
        params = []
    takes_any = any(p.kind == p.VAR_KEYWORD for p in params)
    named = {p.name: p for p in params if p.kind != p.VAR_KEYWORD}
    try:
        hints = typing.get_type_hints(cls.__init__)
    except Exception:  # noqa: BLE001 - annotations that do not resolve: the defaults' types only
        hints = {}
    if params and not takes_any:
        unknown = sorted(set(settings) - set(named))
        if unknown:
            raise OptionError(f"{what}: unknown setting {', '.join(map(repr, unknown))}; it takes "
                              f"{', '.join(named) or 'none'}")
    missing = [n for n, p in named.items() if p.default is p.empty and n not in settings]
    if missing:
        raise OptionError(f"{what}: needs {', '.join(f'{flag} {n}=...' for n in missing)}")
    values = {}
    for key, value in settings.items():
        p = named.get(key)
        kind = hints.get(key)
        if typing.get_origin(kind) is typing.Union:  # Optional[int] -> int
            kind = next((a for a in typing.get_args(kind) if a is not type(None)), None)
        if kind not in _KINDS and p is not None and p.default not in (p.empty, None):
            kind = type(p.default)
        try:
            values[key] = _convert(value, kind)
        except (TypeError, ValueError):
            raise OptionError(f"{what}: {key} expects {_KINDS[kind]}, got {value!r}") from None
    try:
        return cls(**values)
    except (TypeError, ValueError) as exc:
        raise OptionError(f"{what}: {exc}") from None


def parse_key_values(pairs: Sequence[str], what: str = "-o") -> Dict[str, str]:
    """``["a=1", "b=x"]`` -> ``{"a": "1", "b": "x"}``; a pair without ``=`` is an :class:`OptionError`, and so is a
    key given twice, under one spelling (``-o a=1 -o a=2``) or two (``-o tokenize=intl -o bleu.tokenize=13a``: both
    set BLEU's tokenizer): never last-wins."""
    out: Dict[str, str] = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        key = key.strip()
        if not eq or not key:
            raise OptionError(f"{what}: expected KEY=VALUE, got {pair!r}")
        clash = next((k for k in out if k == key or (("." in k) != ("." in key)
                                                   and k.rpartition(".")[2] == key.rpartition(".")[2])), None)
        if clash is not None:
            raise OptionError(f"{what} {clash}={out[clash]} and {what} {pair.strip()} set the same option: give it once")
        out[key] = value.strip()
    return out


def parse_named_files(spec: str, what: str = "--system") -> Tuple[str, List[str]]:
    """``NAME=FILE1[,FILE2...]`` -> ``(NAME, [FILE1, ...])``; anything else is an :class:`OptionError`."""
    name, eq, files = spec.partition("=")
    paths = [f for f in files.split(",") if f]
    if not eq or not name or not paths:
        raise OptionError(f"{what}: expected NAME=FILE1[,FILE2...], got {spec!r}")
    return name, paths
