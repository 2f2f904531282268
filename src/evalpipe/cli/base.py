"""What every command shares: one convention for errors, aliases, several values after one flag, logging.

A command parses its arguments, calls the library and prints; it never writes ``Error:`` and exits
by hand.  :class:`Command` and :class:`Group`:

* map :class:`~evalpipe.errors.UsageError` to click's usage error (exit 2, with the usage line) and
  every other :class:`~evalpipe.errors.EvalpipeError` to ``Error: ...`` with exit 1 (input and environment:
  bad data, a missing package, an engine that cannot run here);
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
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

import click

from evalpipe import progress
from evalpipe.errors import EvalpipeError, MissingDependency, UsageError


def to_click(exc: EvalpipeError, ctx: Any = None) -> click.ClickException:
    """The click exception for an evalpipe error."""
    if isinstance(exc, UsageError):
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
        ctx.meta[ARGV] = list(args)  # the words as typed: several systems keep this order (typed_order)
        _refuse_repeats(self, ctx, args)  # type: ignore[arg-type]
        return super().parse_args(ctx, args)  # type: ignore[misc]

    def invoke(self, ctx: click.Context) -> Any:
        try:
            if isinstance(self, click.Group):
                return super().invoke(ctx)  # type: ignore[misc]
            if {"engine", "spark_master", "workers"} <= {p.name for p in self.params}:  # opt.engines(): its rules too
                conflicts, requires = engine_rules()
                check_rules(Rules(conflicts=conflicts, requires=requires))
            with progress.shown(ctx.command_path):  # a long run's progress on stderr, where a person watches
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
        except ImportError as exc:  # an optional package missing deep inside: what to install, not a bug
            if not exc.name or exc.name.split(".")[0] == "evalpipe":  # evalpipe's own module missing: a bug
                raise _bug(exc) from None
            raise to_click(MissingDependency.module(exc.name), ctx) from None
        except Exception as exc:  # noqa: BLE001 - a bug: one line, the traceback in a file
            raise _bug(exc) from None


ARGV = "evalpipe.argv"


def _spelling(param: click.Parameter) -> str:
    return "/".join(param.opts + param.secondary_opts) if isinstance(param, click.Option) else param.human_readable_name


def _refuse_repeats(command: click.Command, ctx: click.Context, args: List[str]) -> None:
    """A value given twice is refused, never last-wins or silently collapsed: a single-value option given twice
    (under any of its spellings, ``--primary --no-primary`` too), and the same value twice in an option or an
    argument that takes several (``-r A -r A``, the same system file twice).  The words are parsed once ahead of
    click's own parse; what click refuses is left to it."""
    parser = command.make_parser(ctx)
    try:
        opts, _, order = parser.parse_args(args=list(args))
    except click.ClickException:
        return
    seen: set = set()
    for param in order:
        if not isinstance(param, click.Option) or param.multiple or param.count or param.is_eager:
            continue
        if id(param) in seen:
            raise click.UsageError(f"{_spelling(param)} given twice: give it once", ctx=ctx)
        seen.add(id(param))
    for param in command.params:
        values = opts.get(param.name) if param.name else None
        if not (getattr(param, "multiple", False) or param.nargs == -1) or not isinstance(values, (list, tuple)):
            continue
        repeated = sorted({v for v in values if isinstance(v, str) and v != "-" and values.count(v) > 1})
        if repeated:
            raise click.UsageError(f"{_spelling(param)}: {repeated[0]!r} given twice: give each once", ctx=ctx)


def comma_list(values: Any, flag: str) -> List[str]:
    """The items of a comma-separated option value, or of several (``-m a,b -m c``), blanks stripped; an empty or a
    repeated item is a usage error naming ``flag``."""
    given = [values] if isinstance(values, str) else list(values)
    items = [item.strip() for value in given for item in value.split(",")]
    if not all(items):
        raise UsageError(f"{flag} {','.join(given)!r}: an empty item in the comma-separated list")
    repeated = sorted({item for item in items if items.count(item) > 1})
    if repeated:
        raise UsageError(f"{flag} {','.join(given)!r}: {repeated[0]!r} given twice: give each once")
    return items


def typed_order(items: Sequence[Tuple[str, Any]]) -> List[Any]:
    """The values of ``(word, value)`` items in the order their words were typed on the command line, however
    they were given (arguments, ``-i A B``, ``--input=A``, ``--system NAME=FILES``); items whose word is not on
    the command line keep their place after the others."""
    ctx = click.get_current_context(silent=True)
    argv = ctx.meta.get(ARGV, []) if ctx else []
    taken: set = set()
    keys = []
    for k, (word, _) in enumerate(items):
        at = next((i for i, a in enumerate(argv) if i not in taken and (a == word or a.endswith("=" + word))),
                  len(argv) + k)
        taken.add(at)
        keys.append(at)
    return [value for _, value in sorted(zip(keys, (v for _, v in items)), key=lambda kv: kv[0])]


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
                while state.rargs and (state.rargs[0] == "-" or not state.rargs[0].startswith("-")) \
                        and self.accepts(state.rargs[0]):
                    one(state.rargs.pop(0), state)

            target.process = process


def stacked(options: Sequence[Callable[[Any], Any]]) -> Callable[[Any], Any]:
    """One decorator applying click ``options`` in the order they are listed (as if written one above another)."""
    return lambda fn: reduce(lambda f, option: option(f), reversed(options), fn)


def setup_logging(verbose: bool = False) -> None:
    """Logs go to stderr, never stdout."""
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")


class Flag(NamedTuple):
    """An option as the user types it (``-f``), optionally only when given one of ``values``."""

    flag: str
    values: Tuple[Any, ...] = ()

    def __str__(self) -> str:
        return f"{self.flag} {'/'.join(map(str, self.values))}" if self.values else self.flag


class Rules(NamedTuple):
    """A command's table of options that cannot act together (``conflicts``: two flags and why) and options
    that act only beside another (``requires``: a flag, the flags one of which it needs, and why)."""

    conflicts: Tuple[Tuple[Flag, Flag, str], ...] = ()
    requires: Tuple[Tuple[Flag, Tuple[Flag, ...], str], ...] = ()


def given_flags(ctx: click.Context) -> Dict[str, Any]:
    """``{flag: value}`` of the options given on the command line (or by environment), not by default."""
    from click.core import ParameterSource

    out = {}
    for param in ctx.command.params:
        if isinstance(param, click.Option) and ctx.get_parameter_source(param.name) in (
                ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT):
            for flag in param.opts + param.secondary_opts:
                out[flag] = ctx.params[param.name]
    return out


def check_rules(rules: Rules) -> None:
    """One usage error for the first option given where it cannot act (see :class:`Rules`)."""
    given = given_flags(click.get_current_context())

    def on(f: Flag) -> bool:
        if f.flag not in given:
            return False
        value = given[f.flag]
        return not f.values or value in f.values or (isinstance(value, tuple) and bool(set(value) & set(f.values)))

    for a, b, why in rules.conflicts:
        if on(a) and on(b):
            raise UsageError(f"{a} and {b} cannot go together: {why}")
    for a, needs, why in rules.requires:
        if on(a) and not any(on(b) for b in needs):
            raise UsageError(f"{a} acts only with {' or '.join(map(str, needs))}: {why}")


def engine_rules() -> tuple:
    """``(conflicts, requires)`` of the engine options (:func:`evalpipe.cli.options.engines`), kept by every command
    that has them."""
    spark = Flag("--engine", ("spark",))
    return ((Flag("--workers"), spark, "Spark sets its own parallelism (--spark-master local[N])"),), \
        ((Flag("--spark-master"), (spark,), "the master is Spark's"),)
