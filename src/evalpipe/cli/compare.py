"""``evalpipe compare``: what two systems do differently (compare-mt 0.2.10's analyses, same numbers)."""
from __future__ import annotations

import json
from pathlib import Path

import click

from evalpipe.cli.base import Command
from evalpipe.corpus import read_lines, write_atomically
from evalpipe.scoring.compare_systems import compare_two


@click.command("compare", cls=Command)
@click.argument("system1", type=click.Path(dir_okay=False, exists=True))
@click.argument("system2", type=click.Path(dir_okay=False, exists=True))
@click.option("-r", "--ref", required=True, type=click.Path(dir_okay=False, exists=True), help="the reference file")
@click.option("--names", help="NAME1,NAME2 (default: the file names)")
@click.option("--top", type=click.IntRange(min=1), default=30, show_default=True, help="n-grams listed each way")
@click.option("--examples", type=click.IntRange(min=1), default=10, show_default=True,
              help="sentences listed each way")
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--report", "report_file", type=click.Path(dir_okay=False),
              help="also write a self-contained HTML report (extra evalpipe[report])")
def compare(system1, system2, ref, names, top, examples, fmt, report_file) -> None:
    """Compare SYSTEM1 and SYSTEM2 against the reference: sentence BLEU distributions, BLEU by reference
    length, word F-measure by frequency, characteristic n-grams, the sentences that differ most."""
    if report_file:
        from evalpipe.report import figures

        figures.pyplot()  # a missing extra fails before the analysis
    labels = names.split(",") if names else [Path(system1).stem, Path(system2).stem]
    if len(labels) != 2:
        raise click.BadParameter(f"expected NAME1,NAME2, got {names!r}", param_hint="--names")
    doc = compare_two(read_lines(ref), read_lines(system1), read_lines(system2), labels, top, examples)
    doc["reference"] = ref
    if report_file:
        from evalpipe.report import page

        write_atomically(report_file, page.compare_report(doc))
    if fmt == "json":
        click.echo(json.dumps(doc, indent=1, ensure_ascii=False))
        return
    a, b = labels
    click.echo(f"BLEU (compare-mt)      {a} {doc['bleu'][0]:.4f}   {b} {doc['bleu'][1]:.4f}")
    click.echo("BLEU by ref length     " + "  ".join(f"{lb}: {x:.2f}/{y:.2f}" for lb, x, y in zip(
        doc["length"]["buckets"], *doc["length"]["bleu"])))
    click.echo("word F by frequency    " + "  ".join(f"{lb}: {x[5]:.4f}/{y[5]:.4f}" for lb, x, y in zip(
        doc["word_accuracy"]["buckets"], *doc["word_accuracy"]["systems"])))
    for key, who in (("system1", a), ("system2", b)):
        click.echo(f"n-grams {who} matches more: " + ", ".join(f"{g} ({m1}/{m2})" for g, _, m1, m2 in doc["ngrams"][key][:10]))
