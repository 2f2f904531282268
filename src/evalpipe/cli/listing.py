"""``evalpipe list``: installed metric plugins and their options."""
from __future__ import annotations

import click

from evalpipe.cli.base import Command
from evalpipe.errors import PluginError
from evalpipe.registry import list_metrics, load_class


@click.command("list", cls=Command)
@click.option("--names", is_flag=True, help="only the names (imports nothing)")
def list_command(names: bool) -> None:
    """List installed metrics with their options; a plugin that fails to load is reported by name."""
    for name in list_metrics():
        if names:
            click.echo(name)
            continue
        try:
            cls = load_class(name)
        except PluginError as exc:
            click.echo(f"{name}  [failed to load: {exc}]")
            continue
        doc = (cls.__doc__ or "").strip().splitlines()
        click.echo(f"{name}  {doc[0] if doc else ''}")
        click.echo(f"    stats: {' '.join(cls.STATS_FIELDS)}")
        for key, opt in cls.OPTIONS.items():
            choices = f" [{'|'.join(map(str, opt.choices))}]" if opt.choices else ""
            click.echo(f"    -o {key}={opt.default}{choices}  {opt.help}")
