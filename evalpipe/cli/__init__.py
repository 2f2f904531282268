"""The ``evalpipe`` command line: a click group whose commands parse arguments and call the library.

Usage errors exit 2, data errors exit 1.
"""
from __future__ import annotations

import click

from evalpipe import __version__
from evalpipe.cli.demo import demo
from evalpipe.cli.env_run import env_group
from evalpipe.cli.listing import list_command
from evalpipe.cli.meta_eval import meta_eval_group
from evalpipe.cli.score_corpus import score_corpus
from evalpipe.cli.serve import serve
from evalpipe.cli.simul import simul_group


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="evalpipe")
def main() -> None:
    """Machine-translation evaluation on sufficient statistics."""


main.add_command(serve)
main.add_command(list_command)
main.add_command(score_corpus)
main.add_command(demo)
main.add_command(env_group)
main.add_command(simul_group)
main.add_command(meta_eval_group)
