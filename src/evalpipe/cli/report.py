"""``evalpipe report``: an HTML report (or one plot) from the JSON that ``score-corpus`` wrote."""
from __future__ import annotations

import json
from pathlib import Path

import click

from evalpipe.cli.base import Command
from evalpipe.corpus import write_atomically
from evalpipe.errors import InputError, UsageError


@click.command("report", cls=Command)
@click.argument("json_file", type=click.Path(dir_okay=False, exists=True))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="the HTML file to write")
@click.option("--plot", "plot_file", type=click.Path(dir_okay=False),
              help="also write the scores with their 95%% intervals as FILE.svg, .png or .pdf")
@click.option("--title", default="evalpipe: corpus scores", show_default=True)
def report(json_file, output, plot_file, title) -> None:
    """Write a self-contained HTML report of JSON_FILE (`score-corpus --format json --all-pairs` output)."""
    from evalpipe.report import figures, page

    if plot_file and Path(plot_file).suffix.lstrip(".").lower() not in figures.FORMATS:
        raise UsageError(f"--plot: expected a file ending in .{', .'.join(figures.FORMATS)}, got {plot_file!r}")
    try:
        doc = json.loads(Path(json_file).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"expected the JSON that score-corpus --format json writes: {exc}", json_file) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise InputError("expected the JSON that score-corpus --format json writes (an object with \"results\")",
                         json_file)
    write_atomically(output, page.corpus_report(doc, title))
    if plot_file:
        figures.render(figures.interval_figure(doc), Path(plot_file).suffix.lstrip(".").lower(), plot_file)
    click.echo(output)
