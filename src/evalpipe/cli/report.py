"""``evalpipe report``: an HTML report (or one plot) from the JSON that evalpipe's commands wrote.

One ``score-corpus --format json`` document (with ``--all-pairs``), one ``meta-eval matrix --format json``
or ``compare --format json`` document, or the ``simul run|evaluate --format json`` documents of one or more simultaneous runs (one
point each on the quality-latency plot, labelled by file name; ``--instances`` adds one sentence's delay
staircase from a SimulEval ``instances.log``).
"""
from __future__ import annotations

import json
from pathlib import Path

import click

from evalpipe.cli import options as opt
from evalpipe.cli.base import Command
from evalpipe.corpus import write_atomically
from evalpipe.errors import InputError, UsageError


def _kind(doc, path: str) -> str:
    if isinstance(doc, dict) and doc.get("kind") in ("compare", "compare-mt"):
        return doc["kind"]
    if isinstance(doc, dict) and "results" in doc:
        return "corpus"
    if isinstance(doc, dict) and "matrix" in doc and "metrics" in doc:
        return "meta"
    if isinstance(doc, dict) and {"tasks", "average_correlations", "attributes"} <= set(doc):
        return "tasks"
    if isinstance(doc, dict) and "AL" in doc and "BLEU" in doc:
        return "simul"
    if isinstance(doc, dict) and {"metric", "aggregate", "segments"} <= set(doc):
        return "mbr"
    raise InputError("expected the JSON of score-corpus, meta-eval matrix or tasks, simul, compare or mbr "
                     "(--format json)", path)


def _demo_doc() -> dict:
    """The shipped demo systems scored as ``score-corpus --all-pairs -f json`` scores them."""
    from evalpipe import __version__
    from evalpipe.inputs import TextPairs
    from evalpipe.registry import metric_specs
    from evalpipe.scoring import System, score_systems
    from evalpipe.scoring.results import to_json
    from evalpipe.tune.demo import demo_data

    _, references, outputs = demo_data()
    systems = [System(name, [TextPairs(lines, [references], name)]) for name, lines in outputs.items()]
    results, test = score_systems(systems, metric_specs(["bleu", "chrf"]), confidence=1000, pairwise=True)
    header = {"evalpipe_version": __version__, "segments": len(references),
              "references": ["the shipped demo's ref.de"], "test": test, "pairwise": test.pop("pairwise")}
    return json.loads(to_json(results, header))


def instance_records(path: str) -> list:
    """The JSON objects of a SimulEval ``instances.log``; a bad line is an error naming it."""
    from evalpipe.corpus import decoded, open_binary

    records = []
    with open_binary(path) as handle:
        for number, line in enumerate(decoded(handle, path), 1):
            try:
                records += [json.loads(line)] if line.strip() else []
            except json.JSONDecodeError as exc:
                raise InputError(f"expected a JSON object, {exc}", path, number) from None
    return records


@click.command("report", cls=Command, aliases={"-o": "--output"})
@click.argument("json_files", nargs=-1, type=click.Path(dir_okay=False, exists=True))
@opt.output("the HTML file to write (missing folders are created)", required=True)
@click.option("--plot", "plot_file", type=click.Path(dir_okay=False),
              help="also write the main figure (score-corpus: scores with 95% intervals) as .svg, .png or .pdf")
@click.option("--instances", type=click.Path(dir_okay=False, exists=True),
              help="simul: a SimulEval instances.log, for one sentence's delay staircase")
@click.option("--sentence", type=click.IntRange(min=0), default=0, show_default=True, help="simul: that sentence")
@click.option("--title", default=None, help="the page title")
@opt.demo("score the shipped demo (10 WMT21 en-de systems x 300 segments, BLEU and chrF, every pair compared) "
          "and report it")
def report(json_files, output, plot_file, instances, sentence, title, demo) -> None:
    """Write a self-contained HTML report of JSON_FILES (the --format json output of score-corpus --all-pairs,
    meta-eval matrix, compare, mbr, or of one or more simul runs), or with --demo of the shipped demo systems."""
    from evalpipe.report import figures, page

    if demo and json_files:
        raise UsageError(f"--demo reports the shipped demo: give no JSON files (got {', '.join(json_files)})")
    if not demo and not json_files:
        raise UsageError("give JSON files written by evalpipe (--format json), or --demo")

    plot_format = figures.plot_format(plot_file) if plot_file else None
    if plot_file:
        figures.pyplot()  # a plot is nothing but a figure: matplotlib is needed
    docs = {"<demo>": _demo_doc()} if demo else {}
    for path in json_files:
        try:
            docs[path] = json.loads(Path(path).read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(f"expected JSON written by evalpipe: {exc}", path) from None
    kinds = {_kind(doc, path) for path, doc in docs.items()}
    if len(kinds) > 1 or (kinds != {"simul"} and len(docs) > 1):
        raise UsageError("expected one score-corpus, meta-eval or compare document, or simul documents only; got "
                         + ", ".join(f"{p} ({_kind(d, p)})" for p, d in docs.items()))
    kind, main_figure = kinds.pop(), None
    if kind != "simul" and (instances or sentence):
        raise UsageError(f"--instances and --sentence draw a simul run's delay staircase; this is a {kind} document")
    if sentence and not instances:
        raise UsageError("--sentence picks a sentence of --instances LOG: give the log")
    if kind == "corpus":
        (doc,) = docs.values()
        html, main_figure = page.corpus_report(doc, title or "evalpipe: corpus scores"), figures.interval_figure
    elif kind in ("compare", "compare-mt"):
        from evalpipe.report.compare_many import compare_page

        (doc,) = docs.values()
        html = compare_page(doc, title)
        main_figure = figures.distribution_figure if kind == "compare" else figures.bucket_figure
    elif kind == "mbr":
        (doc,) = docs.values()
        html, main_figure = page.mbr_report(doc, title or "evalpipe: minimum Bayes risk selection"), figures.mbr_figure
    elif kind == "tasks":
        from evalpipe.report.task_set import task_set_report

        if plot_file:
            raise UsageError("--plot: a task set's page is tables, with no figure to write")
        (doc,) = docs.values()
        html = task_set_report(doc, doc["attributes"], doc["baselines"], title or "evalpipe: metrics ranked over a task set")
    elif kind == "meta":
        (doc,) = docs.values()
        html, main_figure = page.meta_report(doc, title or "evalpipe: metrics against human judgments"), \
            figures.correlation_figure
    else:
        stems = [Path(p).stem for p in docs]
        runs = {(Path(p).stem if stems.count(Path(p).stem) == 1 else p): d for p, d in docs.items()}
        records = instance_records(instances) if instances else None
        html = page.simul_report(runs, records, sentence, title or "evalpipe: simultaneous translation")
        doc, main_figure = runs, figures.quality_latency_figure
    write_atomically(output, html)
    if plot_file:
        figures.render(main_figure(doc), plot_format, plot_file)
    click.echo(output)
