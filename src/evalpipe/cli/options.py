"""The options several commands share, defined once so that a flag means one thing everywhere.

``docs/cli.md`` is the table of these conventions; ``tests/test_cli_conventions.py`` walks every
command and checks it against that table.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Sequence

import click

from evalpipe.cli.base import Several

Decorator = Callable[[Any], Any]
DEFAULT_SEED = 12345
DEFAULT_WIDTH = 2


def is_metric_word(word: str) -> bool:
    """A word after ``-m NAME`` that is one more metric: not a file here, and an installed metric, a
    ``module:Class`` path or a combination of installed metrics (``bleu-ter``, ``0.7*bleu+0.3*chrf``)."""
    if os.path.exists(word):
        return False
    from evalpipe.registry import list_metrics
    from evalpipe.sufficient_stats.combine import parse_spec

    if ":" in word:
        return True
    try:
        names = [name for _, name in parse_spec(word)]
    except Exception:  # noqa: BLE001 - not a spec: not a metric word
        return False
    return set(names) <= set(list_metrics())


def metrics(help: str, default: Any = None, any_word: bool = False) -> Decorator:
    """``-m/--metric NAME``: several after one flag (sacrebleu's ``-m bleu chrf ter``) or repeated.  The
    words after the first are taken while they name evalpipe metrics (a system file ends the list), or with
    ``any_word`` (a command without arguments after its options) up to the next option."""
    return click.option("-m", "--metric", "--metrics", "metric_names", cls=Several,
                        accepts=(lambda word: True) if any_word else is_metric_word, default=default,
                        show_default=default is not None, metavar="NAME...", help=help)


def metric_options(help: str = "metric option (METRIC.KEY=VALUE for one metric of several; repeat)") -> Decorator:
    return click.option("-o", "--option", "options", multiple=True, metavar="[METRIC.]KEY=VALUE", help=help)


def agent_options(help: str = "agent setting (repeat)") -> Decorator:
    return click.option("--agent-option", "agent_options", multiple=True, metavar="KEY=VALUE", help=help)


def refs(help: str = "reference file (repeat for several references)", required: bool = False,
         exists: bool = True) -> Decorator:
    return click.option("-r", "--ref", "refs", multiple=True, required=required, metavar="FILE",
                        type=click.Path(dir_okay=False, exists=exists), help=help)


def ref(help: str = "the reference file", required: bool = False) -> Decorator:
    """``-r/--ref FILE`` where a command takes exactly one reference file."""
    return click.option("-r", "--ref", "ref", required=required, metavar="FILE",
                        type=click.Path(dir_okay=False, exists=True), help=help)


def language_pair(help: str = "source-target language pair, e.g. en-de (sacrebleu's -l)", required: bool = False,
                  several: bool = False) -> Decorator:
    """``-l SRC-TGT``; ``several``: also ``SRC-TGT,SRC-TGT,...`` (a task pooled over language pairs)."""
    return click.option("-l", "--language-pair", "language_pair", required=required,
                        metavar="SRC-TGT[,SRC-TGT...]" if several else "SRC-TGT",
                        callback=_check_pairs if several else _check_pair, help=help)


def _check_pair(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    if value is not None and (value.count("-") != 1 or not all(value.split("-"))):
        raise click.BadParameter(f"expected SRC-TGT such as en-de, got {value!r}")
    return value


def _check_pairs(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    if value is not None:
        for part in value.split(","):
            if part.count("-") != 1 or not all(part.split("-")):
                raise click.BadParameter(f"expected SRC-TGT such as en-de, or several separated by commas "
                                         f"(en-de,zh-en), got {value!r}")
    return value


def fmt(choices: Sequence[str], default: str, help: str = "output format") -> Decorator:
    return click.option("-f", "--format", "fmt", type=click.Choice(list(choices)), default=default,
                        show_default=True, help=help)


def width() -> Decorator:
    return click.option("-w", "--width", type=click.IntRange(min=0), default=DEFAULT_WIDTH, show_default=True,
                        help="decimals in tables")


def seed(help: str = "random seed of resampling", default: int = DEFAULT_SEED) -> Decorator:
    return click.option("--seed", type=int, default=default, show_default=True, help=help)


def output(help: str, folder: bool = False, required: bool = False) -> Decorator:
    """``--output``: where a command writes its file (missing folders are created)."""
    return click.option("--output", "output", required=required,
                        type=click.Path(file_okay=not folder, dir_okay=folder), help=help)


def report(help: str = "also write a self-contained HTML report (extra evalpipe[report])") -> Decorator:
    return click.option("--report", "report_file", type=click.Path(dir_okay=False), metavar="FILE.html", help=help)


def demo(help: str) -> Decorator:
    return click.option("--demo", is_flag=True, help=help)


def verbose(help: str = "debug logs on stderr") -> Decorator:
    return click.option("-v", "--verbose", is_flag=True, help=help)


def workers() -> Decorator:
    return click.option("--workers", type=click.IntRange(min=1), default=None, show_default="every core",
                        help="processes computing stats (local and pool engines; results identical to 1). Default: "
                             "every core the process may use once the input is large enough to gain (about 4,000 "
                             "segments), one process below that; 1 forces one process")


def engines(unit: str = "segments") -> Sequence[Decorator]:
    return [
        click.option("--engine", default="local", show_default=True, metavar="NAME",
                     help=f"where stats are computed: local, pool, spark or any evalpipe.engines plugin (module:Class "
                          f"too); {unit} are the unit of work; results identical on every engine"),
        workers(),
        click.option("--spark-master", default="local[2]", show_default=True,
                     help="Spark master URL for --engine spark (local[2], spark://host:7077, yarn)"),
    ]


def confidence(over: str = "segments") -> Sequence[Decorator]:
    return [
        click.option("--confidence", is_flag=True, help=f"bootstrap 95% confidence intervals (resampling {over})"),
        click.option("--confidence-n", type=click.IntRange(min=2), default=1000, show_default=True,
                     help="bootstrap resamples for --confidence"),
    ]
