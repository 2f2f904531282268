"""``evalpipe shim``: an executable that stands where a client expects a METEOR-style scorer.

Clients written for METEOR 1.5's ``-stdio`` mode start it themselves -- pycocoevalcap runs
``java -jar -Xmx2G meteor-1.5.jar - - -stdio -l en -norm``; cdec runs the command its scorer
configuration names.  The shim is a small POSIX shell script, named as that command (``java`` by
default), which ignores the arguments it is given and runs ``evalpipe serve METRIC`` with the options
chosen here.  Put its folder first on ``PATH`` (or name it in the client's configuration) and the
client drives evalpipe unchanged.
"""
from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from evalpipe.cli import options as opt
from evalpipe.cli.base import Command
from evalpipe.corpus import write_atomically
from evalpipe.protocol.dispatch import DIALECTS
from evalpipe.registry import metric_specs, parse_key_values


def write_shim(folder: str, metric: str, options: tuple = (), dialect: str = "meteor", on_error: str = "reply",
               strict_stats: bool = False, name: str = "java", score_scale: float = 1.0) -> Path:
    """Write the shim script ``folder/name`` (executable) and return its path; the metric and its
    options are checked first, so a shim never starts a server that cannot run."""
    metric_specs([metric], parse_key_values(options))
    argv = [sys.executable, "-m", "evalpipe", "serve", metric, "--dialect", dialect, "--on-error", on_error]
    argv += [item for option in options for item in ("-o", option)] + (["--strict-stats"] if strict_stats else [])
    argv += ["--score-scale", repr(score_scale)] if score_scale != 1.0 else []
    path = Path(folder, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = ("#!/bin/sh\n# evalpipe shim: the client's arguments are ignored; "
            "evalpipe serves the line protocol instead\n"
            f"exec {shlex.join(argv)}\n")
    write_atomically(str(path), text, mode=0o755)
    return path


@click.command("shim", cls=Command)
@click.argument("folder", type=click.Path(file_okay=False))
@click.option("-m", "--metric", "--metrics", default="bleu", show_default=True,
              help="the metric (or combination) the shim serves")
@opt.metric_options()
@click.option("--dialect", type=click.Choice(DIALECTS), default="meteor", show_default=True,
              help="pycocoevalcap: one-vector EVAL also answers the aggregate line")
@click.option("--on-error", type=click.Choice(["reply", "exit"]), default="reply", show_default=True,
              help="reply: ERROR line and go on; exit: error on stderr, exit 1 (for tuners)")
@click.option("--strict-stats", is_flag=True, help="reject EVAL vectors the metric cannot have produced")
@click.option("--score-scale", type=float, default=1.0, show_default=True,
              help="multiply every EVAL score (0.01: BLEU on cdec's 0-1 scale)")
@click.option("--name", default="java", show_default=True, help="file name: the command the client runs")
def shim(folder, metric, options, dialect, on_error, strict_stats, score_scale, name) -> None:
    """Write FOLDER/NAME, a script that runs `evalpipe serve METRIC` whatever arguments it is given."""
    click.echo(write_shim(folder, metric, options, dialect, on_error, strict_stats, name, score_scale))
