"""``evalpipe simul serve | evaluate | run``: the simultaneous-translation workflow."""
from __future__ import annotations

import json
import threading
from contextlib import suppress
from importlib import resources
from typing import Tuple

import click

from evalpipe.cli import options as opt
from evalpipe.cli.base import Group, setup_logging, stacked
from evalpipe.errors import UsageError
from evalpipe.registry import AGENTS_GROUP, build_with_settings, load_class, metric_specs, parse_key_values


def _agent_factory(name: str, options: Tuple[str, ...]):
    cls = load_class(name, group=AGENTS_GROUP)
    kwargs = parse_key_values(options, "--agent-option")
    build_with_settings(cls, kwargs, f"agent {name!r}")  # unknown, missing or mistyped settings: one line now
    return lambda: build_with_settings(cls, kwargs, f"agent {name!r}")


def _evaluator(src_file, tgt_file, wav_list, convention, options, tokenize, output):
    from evalpipe.simul.server import Corpus, Evaluator

    settings = parse_key_values(options)
    if tokenize:
        click.echo("Warning: --tokenize is deprecated and will be removed in the next release; use -o tokenize=...",
                   err=True)
        settings.setdefault("tokenize", tokenize)
    unknown = sorted(set(settings) - {"tokenize", "bleu.tokenize"})
    if unknown:
        raise UsageError(f"-o: the simultaneous evaluation takes BLEU's tokenize=NAME only, got {', '.join(unknown)}")
    tokenize = settings.get("bleu.tokenize", settings.get("tokenize", "13a"))
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
    click.option("--source", "src_file", type=click.Path(dir_okay=False, exists=True),
                 help="source text, one sentence a line (SimulEval's --src-file)"),
    opt.ref("references, one a line (SimulEval's --tgt-file)"),
    click.option("--wav-list", type=click.Path(dir_okay=False, exists=True),
                 help="speech: a file of 16 kHz mono wav paths aligned with --ref"),
    click.option("--convention", type=click.Choice(["simuleval", "iwslt2020"]), default="simuleval", show_default=True,
                 help="latency convention: SimulEval 1.1.4's, or the IWSLT 2020 server's"),
    opt.metric_options("BLEU's option tokenize=NAME (a sacrebleu tokenizer; default 13a)"),
    click.option("--tokenize", hidden=True, help="deprecated: -o tokenize=NAME"),
    opt.output("write instances.log, metrics.tsv and scores.json into this folder (created if missing)",
               folder=True),
])

#: flags of earlier releases, accepted for one more release with a warning
ALIASES = {"--src-file": "--source", "--tgt-file": "--ref"}


report_option = opt.report("also write an HTML report (quality and latency; the delay staircase of sentence 0 "
                                  "with --output); several runs: evalpipe report RUN.json ...")





@click.group("simul", cls=Group)
def simul_group() -> None:
    """Simultaneous translation: evaluation server, agents, driver."""


@simul_group.command("serve", aliases=ALIASES)
@with_data
@click.option("--host", default="127.0.0.1", show_default=True, help="address to bind (loopback by default)")
@click.option("--port", type=int, default=12321, show_default=True, help="port to listen on (0: any free port)")
@opt.verbose()
def serve_command(src_file, ref, wav_list, convention, options, tokenize, output, host, port, verbose) -> None:
    """Serve sources and record hypotheses over HTTP (IWSLT 2020 API)."""
    from evalpipe.simul.server import make_server

    setup_logging(verbose)
    if not ref:
        raise UsageError("give the references: -r/--ref FILE")
    server = make_server(_evaluator(src_file, ref, wav_list, convention, options, tokenize, output), host, port)
    click.echo(f"serving {len(server.evaluator.corpus)} sentences on http://{host}:{server.server_port}", err=True)
    try:
        with suppress(KeyboardInterrupt):
            server.serve_forever()
    finally:
        server.server_close()


AGENT = click.option("--agent", default="waitk", show_default=True, help="agent: an evalpipe.agents plugin or module:Class")


@simul_group.command("evaluate")
@AGENT
@opt.agent_options("agent setting, e.g. k=3 (repeat)")
@click.option("--host", default="127.0.0.1", show_default=True, help="the server's address")
@click.option("--port", type=int, default=12321, show_default=True, help="the server's port")
@click.option("--num-threads", type=click.IntRange(min=1), default=1, show_default=True,
              help="sentences translated at once")
@opt.fmt(["table", "json"], "table")
@report_option
def evaluate_command(agent, agent_options, host, port, num_threads, fmt, report_file) -> None:
    """Run AGENT against a running server and print the scores."""
    from evalpipe.simul.driver import evaluate

    factory = _agent_factory(agent, agent_options)
    _print(evaluate(factory, f"http://{host}:{port}", num_threads), fmt, report_file)


@simul_group.command("run", aliases=ALIASES)
@with_data
@AGENT
@opt.agent_options("agent setting, e.g. k=3 (repeat)")
@click.option("--num-threads", type=click.IntRange(min=1), default=2, show_default=True,
              help="sentences translated at once")
@opt.demo("the shipped demo: 200 WMT21 en-de sentences (source and reference), no model download")
@opt.fmt(["table", "json"], "table")
@report_option
def run_command(src_file, ref, wav_list, convention, options, tokenize, output, agent, agent_options, num_threads,
                demo, fmt, report_file):
    """Start a server on a free local port, run the agent on --source against --ref (or --demo), print the scores."""
    from evalpipe.simul.driver import evaluate
    from evalpipe.simul.server import make_server

    if demo:
        if src_file or ref or wav_list:
            raise UsageError("--demo brings its own source and reference: give no --source, --ref or --wav-list")
        shipped = resources.files("evalpipe").joinpath("demo")
        src_file, ref = str(shipped / "newstest.src.en"), str(shipped / "newstest.ref.de")
    elif not ref:
        raise UsageError("give the references (-r/--ref FILE) with --source or --wav-list, or --demo")
    elif not src_file and not wav_list:
        raise UsageError("give the source: --source FILE (text) or --wav-list FILE (speech)")
    factory = _agent_factory(agent, agent_options)
    server = make_server(_evaluator(src_file, ref, wav_list, convention, options, tokenize, output), "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        _print(evaluate(factory, f"http://127.0.0.1:{server.server_port}", num_threads), fmt, report_file, output)
    finally:
        server.shutdown()
        server.server_close()
