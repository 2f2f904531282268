"""Shared command-line helpers: ``-o KEY=VALUE`` options and metric loading with usage errors."""
from __future__ import annotations

import logging
from typing import Any, Dict, Sequence

import click

from evalpipe.registry import PluginError, load_metric
from evalpipe.sufficient_stats.base import OptionError


def parse_key_values(pairs: Sequence[str], what: str = "-o") -> Dict[str, str]:
    """``["a=1", "b=x"]`` -> ``{"a": "1", "b": "x"}``; a pair without ``=`` is a usage error."""
    out: Dict[str, str] = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        if not eq or not key.strip():
            raise click.BadParameter(f"expected KEY=VALUE, got {pair!r}", param_hint=what)
        out[key.strip()] = value.strip()
    return out


def metric_or_usage_error(name: str, options: Dict[str, Any]) -> Any:
    """Load a metric; an unknown name or option is a usage error listing the valid ones."""
    try:
        return load_metric(name, **options)
    except PluginError as exc:
        raise click.UsageError(str(exc)) from None
    except (OptionError, ValueError) as exc:
        raise click.UsageError(str(exc)) from None


def setup_logging(verbose: bool) -> None:
    """Logs go to stderr, never stdout."""
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
