"""``evalpipe list``: installed metric plugins and their options."""
from __future__ import annotations

import re

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
        click.echo(f"{name}  {summary(cls)}")
        click.echo(f"    stats: {' '.join(cls.STATS_FIELDS)}")
        for key, opt in cls.OPTIONS.items():
            choices = f" [{'|'.join(map(str, opt.choices))}]" if opt.choices else ""
            click.echo(f"    -o {key}={opt.default}{choices}  {opt.help}")


def summary(cls: type) -> str:
    """A metric's one-line description for a person: the first sentence of its class docstring, whole (not its
    first line), without pointers to a module docstring the reader of this list cannot see, and without reST
    markup (``code``, :role:`target`)."""
    text = " ".join((cls.__doc__ or "").split())
    text = re.sub(r":\w+:`~?([^`]*)`", r"\1", text).replace("``", "")
    text = re.sub(r";? ?see the module docstring", "", text)
    text = re.sub(r" \((?:[^()]*\bin the )?module docstring\)", "", text)
    text = re.sub(r" \(([^()]*?)(?:;|,)? ?(?:in )?the module docstring\)", r" (\1)", text)
    sentence = re.match(r"(.+?[.!?])(?:\s|$)", text)
    return (sentence.group(1) if sentence else text).replace(" .", ".").strip()
