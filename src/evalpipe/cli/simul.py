"""``evalpipe simul serve | evaluate | run``: the simultaneous-translation workflow."""
from __future__ import annotations

import json
import threading
from contextlib import suppress
from importlib import resources
from typing import Tuple

import click

from evalpipe.cli.base import Group, setup_logging, stacked
from evalpipe.errors import UsageError
from evalpipe.registry import AGENTS_GROUP, load_class, metric_specs, parse_key_values


def _agent_factory(name: str, options: Tuple[str, ...]):
    cls = load_class(name, group=AGENTS_GROUP)
    kwargs = parse_key_values(options, "--agent-option")
    try:
        cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"agent {name!r}: {exc}") from None
    return lambda: cls(**kwargs)


def _evaluator(src_file, tgt_file, wav_list, convention, tokenize, output):
    from evalpipe.simul.server import Corpus, Evaluator

    metric_specs(["bleu"], {"tokenize": tokenize})  # an unknown tokenizer fails now, through the one loading path
    corpus = Corpus.from_files(tgt_file, src_file=src_file, wav_list=wav_list)
    return Evaluator(corpus, convention=convention, tokenize=tokenize, output=output)


def _print(scores, fmt, report_file=None, output=None):
    """Print the scores; with ``report_file`` also write an HTML report (with the first sentence's delay
    staircase when ``output`` holds the run's instances.log)."""
    if report_file:
        from pathlib import Path

        from evalpipe.cli.report import instance_records
        from evalpipe.corpus import write_atomically
        from evalpipe.report import page

        log = Path(output or "", "instances.log")
        records = instance_records(str(log)) if output and log.exists() else None
        write_atomically(report_file, page.simul_report({"run": scores}, records))
    if fmt == "json":
        click.echo(json.dumps(scores, indent=1))
    else:
        for key, value in scores.items():
            for name, shown in (value.items() if isinstance(value, dict) else [("", value)]):
                click.echo(f"{key + ('.' + name if name else ''):<20} {shown}")


with_data = stacked([
    click.option("--src-file", type=click.Path(dir_okay=False, exists=True), help="source text, one sentence a line"),
    click.option("--tgt-file", type=click.Path(dir_okay=False, exists=True), help="references, one a line"),
    click.option("--wav-list", type=click.Path(dir_okay=False, exists=True),
                 help="speech: a file of 16 kHz mono wav paths aligned with --tgt-file"),
    click.option("--convention", type=click.Choice(["simuleval", "iwslt2020"]), default="simuleval", show_default=True),
    click.option("--tokenize", default="13a", show_default=True, help="sacrebleu tokenizer for BLEU"),
    click.option("--output", type=click.Path(file_okay=False), help="write instances.log, metrics.tsv, scores.json"),
])


report_option = click.option("--report", "report_file", type=click.Path(dir_okay=False),
                             help="also write an HTML report (quality and latency; the delay staircase of sentence 0 "
                                  "with --output); several runs: evalpipe report RUN.json ...")


def _check_report(report_file) -> None:
    if report_file:
        from evalpipe.report import figures

        figures.pyplot()  # a missing extra fails before the run


@click.group("simul", cls=Group)
def simul_group() -> None:
    """Simultaneous translation: evaluation server, agents, driver."""


@simul_group.command("serve")
@with_data
@click.option("--host", default="127.0.0.1", show_default=True, help="address to bind (loopback by default)")
@click.option("--port", type=int, default=12321, show_default=True)
@click.option("-v", "--verbose", is_flag=True)
def serve_command(src_file, tgt_file, wav_list, convention, tokenize, output, host, port, verbose) -> None:
    """Serve sources and record hypotheses over HTTP (IWSLT 2020 API)."""
    from evalpipe.simul.server import make_server

    setup_logging(verbose)
    if not tgt_file:
        raise UsageError("--tgt-file is required")
    server = make_server(_evaluator(src_file, tgt_file, wav_list, convention, tokenize, output), host, port)
    click.echo(f"serving {len(server.evaluator.corpus)} sentences on http://{host}:{server.server_port}", err=True)
    try:
        with suppress(KeyboardInterrupt):
            server.serve_forever()
    finally:
        server.server_close()


@simul_group.command("evaluate")
@click.option("--agent", default="waitk", show_default=True, help="agent entry point or module:Class")
@click.option("--agent-option", "agent_options", multiple=True, metavar="KEY=VALUE")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=int, default=12321, show_default=True)
@click.option("--num-threads", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("-f", "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@report_option
def evaluate_command(agent, agent_options, host, port, num_threads, fmt, report_file) -> None:
    """Run AGENT against a running server and print the scores."""
    from evalpipe.simul.driver import evaluate

    factory = _agent_factory(agent, agent_options)
    _check_report(report_file)
    _print(evaluate(factory, f"http://{host}:{port}", num_threads), fmt, report_file)


@simul_group.command("run")
@with_data
@click.option("--agent", default="waitk", show_default=True)
@click.option("--agent-option", "agent_options", multiple=True, metavar="KEY=VALUE")
@click.option("--num-threads", type=click.IntRange(min=1), default=2, show_default=True)
@click.option("-f", "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@report_option
def run_command(src_file, tgt_file, wav_list, convention, tokenize, output, agent, agent_options, num_threads, fmt,
                report_file):
    """Start a server on a free local port, run the agent, print the scores.

    Without --src-file/--tgt-file it runs the shipped demo (200 WMT21 en-de sentences) with the
    wait-3 copy agent: no model download.
    """
    from evalpipe.simul.driver import evaluate
    from evalpipe.simul.server import make_server

    factory = _agent_factory(agent, agent_options)
    _check_report(report_file)
    if not tgt_file:
        demo = resources.files("evalpipe").joinpath("demo")
        src_file, tgt_file = str(demo / "newstest.src.en"), str(demo / "newstest.ref.de")
    server = make_server(_evaluator(src_file, tgt_file, wav_list, convention, tokenize, output), "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        _print(evaluate(factory, f"http://127.0.0.1:{server.server_port}", num_threads), fmt, report_file, output)
    finally:
        server.shutdown()
        server.server_close()
