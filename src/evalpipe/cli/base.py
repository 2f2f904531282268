"""What every command shares: one convention for errors, aliases, several values after one flag, logging.

A command parses its arguments, calls the library and prints; it never writes ``Error:`` and exits
by hand.  :class:`Command` and :class:`Group`:

* map :class:`~evalpipe.errors.UsageError` to click's usage error (exit 2, with the usage line) and
  every other :class:`~evalpipe.errors.EvalpipeError` to ``Error: ...`` with its ``exit_code`` (1 for
  data errors, 2 for an engine that cannot run);
* turn what the system says about a file (``OSError``: missing, a folder, no permission) and
  undecodable bytes into one ``Error:`` line naming the file (exit 1);
* never show a traceback: an exception that is none of these is a bug in evalpipe, reported in one
  line with the path of a file holding its traceback (exit 1);
* accept the renamed flags of earlier releases for one release (``aliases={"--old": "--new"}``),
  with a deprecation warning on stderr (docs/cli.md lists them).

The flags every command shares are written down in ``docs/cli.md`` and checked by
``tests/test_cli_conventions.py``.
"""
from __future__ import annotations

import errno
import logging
import os
import traceback
from functools import reduce
from typing import Any, Callable, Dict, List, Optional, Sequence

import click

from evalpipe.errors import EngineError, EvalpipeError, UsageError


def to_click(exc: EvalpipeError, ctx: Any = None) -> click.ClickException:
    """The click exception for an evalpipe error."""
    if isinstance(exc, UsageError) and not isinstance(exc, EngineError):
        return click.UsageError(str(exc), ctx=ctx)
    error = click.ClickException(str(exc))
    error.exit_code = exc.exit_code
    return error


def _one_line(message: str) -> click.ClickException:
    return click.ClickException(" ".join(message.split()))


def _bug(exc: BaseException) -> click.ClickException:
    """One line for an exception evalpipe did not expect, its traceback kept in a file."""
    import tempfile  # only after an unexpected exception (import time)

    from evalpipe.corpus import write_atomically

    handle, path = tempfile.mkstemp(prefix="evalpipe-traceback-", suffix=".txt")
    os.close(handle)
    write_atomically(path, "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    return _one_line(f"internal error, a bug in evalpipe ({type(exc).__name__}: {exc}); "
                     f"its traceback is in {path}")


class _MapsErrors:
    aliases: Dict[str, str] = {}

    def __init__(self, *args: Any, aliases: Optional[Dict[str, str]] = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]
        self.aliases = dict(aliases or {})

    def parse_args(self, ctx: click.Context, args: List[str]) -> List[str]:
        if self.aliases:
            args = _rename(args, self.aliases)
        return super().parse_args(ctx, args)  # type: ignore[misc]

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)  # type: ignore[misc]
        except EvalpipeError as exc:
            raise to_click(exc, ctx) from None
        except (click.ClickException, click.exceptions.Exit, click.Abort, KeyboardInterrupt):
            raise
        except OSError as exc:
            if exc.errno == errno.EPIPE:  # the reader went away: click ends quietly
                raise
            where = " -> ".join(str(p) for p in (exc.filename, exc.filename2) if p)
            raise _one_line(f"{where + ': ' if where else ''}{exc.strerror or exc}") from None
        except UnicodeError as exc:
            raise _one_line(f"expected UTF-8 text: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - a bug: one line, the traceback in a file
            raise _bug(exc) from None


def _rename(args: List[str], aliases: Dict[str, str]) -> List[str]:
    """``args`` with deprecated flags replaced by their new names (warning once each on stderr)."""
    out, warned = [], set()
    for i, arg in enumerate(args):
        if arg == "--":
            return out + args[i:]
        flag, eq, value = arg.partition("=")
        if flag in aliases:
            if flag not in warned:
                click.echo(f"Warning: {flag} is deprecated and will be removed in the next release; "
                           f"use {aliases[flag]}", err=True)
                warned.add(flag)
            arg = aliases[flag] + eq + value
        out.append(arg)
    return out


class Command(_MapsErrors, click.Command):
    """A click command whose errors become one-line click exits."""


class Group(_MapsErrors, click.Group):
    """A click group whose commands (and itself) map errors."""

    command_class = Command


Group.group_class = Group


class Several(click.Option):
    """A repeatable option that also takes the words after it, as sacrebleu's ``-m bleu chrf ter``:
    the words up to the next option, or (``accepts``) while each word is one this option takes."""

    def __init__(self, *args: Any, accepts: Optional[Callable[[str], bool]] = None, **kwargs: Any) -> None:
        kwargs.setdefault("multiple", True)
        super().__init__(*args, **kwargs)
        self.accepts = accepts or (lambda word: True)

    def add_to_parser(self, parser: Any, ctx: click.Context) -> None:
        super().add_to_parser(parser, ctx)
        for name in self.opts:
            target = parser._long_opt.get(name) or parser._short_opt.get(name)
            one = target.process

            def process(value: Any, state: Any, one: Callable[..., None] = one) -> None:
                one(value, state)
                while state.rargs and not state.rargs[0].startswith("-") and self.accepts(state.rargs[0]):
                    one(state.rargs.pop(0), state)

            target.process = process


def stacked(options: Sequence[Callable[[Any], Any]]) -> Callable[[Any], Any]:
    """One decorator applying click ``options`` in the order they are listed (as if written one above another)."""
    return lambda fn: reduce(lambda f, option: option(f), reversed(options), fn)


def setup_logging(verbose: bool = False) -> None:
    """Logs go to stderr, never stdout."""
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
