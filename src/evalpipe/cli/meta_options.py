"""Options the ``meta-eval`` commands share (``meta_eval`` and ``meta_tasks`` import them from here)."""
from __future__ import annotations

import os

import click

root_option = click.option("--root", envvar="EVALPIPE_MTME_ROOT", callback=lambda ctx, p, v: _root(v),
                           type=click.Path(file_okay=False),
                           help="folder holding test sets in the MTME layout (or the environment variable "
                                "EVALPIPE_MTME_ROOT)")

MODE = click.option("--mode", type=click.Choice(["fast", "mtme"]), default="fast", show_default=True,
                    help="fast batched draws, or MTME's exact legacy random stream")


def _root(value):
    if not value:
        raise click.UsageError("give the folder of MTME test sets: --root DIR or EVALPIPE_MTME_ROOT=DIR")
    if not os.path.isdir(value):
        raise click.BadParameter(f"no folder {value!r}", param_hint="--root")
    return value
