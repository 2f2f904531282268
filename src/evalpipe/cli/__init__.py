"""The ``evalpipe`` command line: a click group whose commands parse arguments, call the library and print.

Each command's module is imported only when that command runs (or when help lists it), so a run of
one command does not pay for the imports of the others.  Usage errors exit 2, data errors exit 1
(:mod:`evalpipe.cli.base`).
"""
from __future__ import annotations

import importlib
from typing import List, Optional

import click

from evalpipe import __version__
from evalpipe.cli.base import Group

# command name -> "module:attribute", in the order help lists them
COMMANDS = {
    "serve": "evalpipe.cli.serve:serve",
    "shim": "evalpipe.cli.shim:shim",
    "list": "evalpipe.cli.listing:list_command",
    "score-corpus": "evalpipe.cli.score_corpus:score_corpus",
    "sacrebleu": "evalpipe.cli.sacrebleu_cli:sacrebleu_command",
    "compare": "evalpipe.cli.compare:compare",
    "report": "evalpipe.cli.report:report",
    "demo": "evalpipe.cli.demo:demo",
    "env": "evalpipe.cli.env_run:env_group",
    "simul": "evalpipe.cli.simul:simul_group",
    "stream": "evalpipe.cli.stream:stream_group",
    "meta-eval": "evalpipe.cli.meta_eval:meta_eval_group",
    "tune": "evalpipe.cli.tune:tune",
    "mbr": "evalpipe.cli.mbr:mbr_command",
}


class LazyGroup(Group):
    """A click group that imports a command's module when the command is needed."""

    def list_commands(self, ctx: click.Context) -> List[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> Optional[click.Command]:
        if cmd_name not in COMMANDS:
            return None
        module, attribute = COMMANDS[cmd_name].split(":")
        return getattr(importlib.import_module(module), attribute)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="evalpipe")
def main() -> None:
    """Machine-translation evaluation on sufficient statistics."""
