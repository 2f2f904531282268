"""What every command shares: evalpipe errors turned into click's exits, and logging on stderr.

A command parses its arguments, calls the library and prints; it never writes ``Error:`` and exits
by hand.  :class:`Command` and :class:`Group` map :class:`~evalpipe.errors.UsageError` to click's
usage error (exit 2, with the usage line) and every other :class:`~evalpipe.errors.EvalpipeError` to
``Error: ...`` with its ``exit_code`` (1 for data errors, 2 for an engine that cannot run).
"""
from __future__ import annotations

import logging
from functools import reduce
from typing import Any, Callable, Sequence

import click

from evalpipe.errors import EngineError, EvalpipeError, UsageError


def to_click(exc: EvalpipeError, ctx: Any = None) -> click.ClickException:
    """The click exception for an evalpipe error."""
    if isinstance(exc, UsageError) and not isinstance(exc, EngineError):
        return click.UsageError(str(exc), ctx=ctx)
    error = click.ClickException(str(exc))
    error.exit_code = exc.exit_code
    return error


class _MapsErrors:
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)  # type: ignore[misc]
        except EvalpipeError as exc:
            raise to_click(exc, ctx) from None


class Command(_MapsErrors, click.Command):
    """A click command whose evalpipe errors become click exits."""


class Group(_MapsErrors, click.Group):
    """A click group whose commands (and itself) map evalpipe errors."""

    command_class = Command


Group.group_class = Group


def stacked(options: Sequence[Callable[[Any], Any]]) -> Callable[[Any], Any]:
    """One decorator applying click ``options`` in the order they are listed (as if written one above another)."""
    return lambda fn: reduce(lambda f, option: option(f), reversed(options), fn)


def setup_logging(verbose: bool = False) -> None:
    """Logs go to stderr, never stdout."""
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
