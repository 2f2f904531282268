"""``evalpipe simul serve | evaluate | run | score``: the simultaneous-translation workflow."""
from __future__ import annotations

import json
import threading
from contextlib import suppress
from importlib import resources
from typing import Tuple

import click

from evalpipe.cli import options as opt
from evalpipe.cli.base import Command, Flag, Group, Rules, check_rules, setup_logging, stacked
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
    unknown = sorted(set(settings) - {"tokenize", "bleu.tokenize", "target_unit", "spm_model"})
    if unknown:
        raise UsageError(f"-o: the simultaneous evaluation takes tokenize=NAME (BLEU's), target_unit=word|char|spm "
                         f"and spm_model=FILE; got {', '.join(unknown)}")
    tokenize = settings.get("bleu.tokenize", settings.get("tokenize", "13a"))
    metric_specs(["bleu"], {"tokenize": tokenize})  # an unknown tokenizer fails now, through the one loading path
    unit = {k: settings[k] for k in ("target_unit", "spm_model") if k in settings}
    if unit:
        metric_specs(["al"], {**unit, "convention": convention})  # a bad unit or model fails now, naming itself
    corpus = Corpus.from_files(tgt_file, src_file=src_file, wav_list=wav_list)
    return Evaluator(corpus, convention=convention, tokenize=tokenize, output=output,
                     target_unit=unit.get("target_unit", "word"), spm_model=unit.get("spm_model", ""))


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
    opt.metric_options("tokenize=NAME (BLEU's; default 13a), target_unit=word|char|spm (how hypotheses are cut into "
                       "target units for latency, SimulEval's --eval-latency-unit), spm_model=FILE"),
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


#: what ``-o`` sets in simul score (and simul serve / run): BLEU's tokenizer and the latency target unit
SCORE_OPTIONS = {"tokenize": "BLEU's tokenizer (default 13a)", "target_unit": "word, char or spm (SimulEval's "
                 "--eval-latency-unit)", "spm_model": "the sentencepiece model for target_unit=spm",
                 "reference_length": "omnisteval (default: words split on single spaces) or words (on any "
                 "whitespace)"}


def _score_rules() -> "Rules":
    """simul score's options that cannot act together."""
    F = Flag
    no_latency, no_quality = F("--no-latency"), F("--no-quality")
    return Rules(conflicts=((F("-w"), F("-f", ("json",)), "json carries every digit"),
                            (no_latency, no_quality, "nothing would be computed"),
                            (F("--emission-ca-key"), no_latency, "it names the computation-aware times"),
                            (F("--emission-cu-key"), no_latency, "it names the delays"),
                            (F("--fix-simuleval-emission-ca"), no_latency, "it concerns the computation-aware times")))


SCORE_RULES = _score_rules()


@simul_group.command("score", cls=Command)
@click.argument("log", type=click.Path(dir_okay=False, exists=True, allow_dash=True))
@opt.ref("references, one a line (default: the log's own 'reference' fields)")
@opt.metric_options("tokenize=NAME (BLEU's tokenizer; also bleu.tokenize=NAME), target_unit=word|char|spm, "
                    "spm_model=FILE, reference_length=omnisteval|words (the latency metrics'; repeat)")
@click.option("--emission-cu-key", default="delays", show_default=True,
              help="JSON key of the computation-unaware delays (OmniSTEval's --emission_cu_key)")
@click.option("--emission-ca-key", default="elapsed", show_default=True,
              help="JSON key of the computation-aware times (OmniSTEval's --emission_ca_key)")
@click.option("--fix-simuleval-emission-ca", "fix_ca", is_flag=True,
              help="OmniSTEval's --fix_simuleval_emission_ca: in short-form scoring it only silences the warning "
                   "that CA-YAAL is far above YAAL (the report says Fix CA emissions yes)")
@click.option("--no-quality", is_flag=True, help="no BLEU and chrF")
@click.option("--no-latency", is_flag=True, help="no latency and no degeneracy check")
@opt.fmt(["text", "tsv", "json"], "text", "text: the report; tsv: OmniSTEval's scores.tsv; json: everything")
@opt.width()
@opt.output("also write scores.tsv and evaluation_report.txt into this folder (OmniSTEval's --output_folder)",
            folder=True)
@stacked(opt.engines())
@opt.verbose()
def score_command(log, ref, options, emission_cu_key, emission_ca_key, fix_ca, no_quality, no_latency, fmt, width, output,
                  engine, workers, spark_master, verbose) -> None:
    """Score a SimulEval instances.log (LOG; - reads it from stdin) as OmniSTEval 0.1.10's shortform mode does: BLEU, chrF, short-form YAAL,
    AL, LAAL, AP, DAL (and their computation-aware variants), the degeneracy check, and the reports of empty
    predictions and Unicode normalization."""
    from evalpipe import __version__
    from evalpipe.corpus import write_atomically
    from evalpipe.engines import make_engine
    from evalpipe.scoring import shortform
    from evalpipe.simul.records import read_instances

    setup_logging(verbose)
    check_rules(SCORE_RULES)
    settings = parse_key_values(options)
    if "bleu.tokenize" in settings:  # the one metric that takes tokenize: its qualified name is the same option
        settings["tokenize"] = settings.pop("bleu.tokenize")
    unknown = sorted(set(settings) - set(SCORE_OPTIONS))
    if unknown:
        raise UsageError(f"-o: simul score takes {', '.join(f'{k} ({v})' for k, v in SCORE_OPTIONS.items())}; "
                         f"got {', '.join(unknown)}")
    if no_quality and "tokenize" in settings:
        raise UsageError("-o tokenize and --no-quality cannot go together: BLEU is not computed")
    if no_latency and {"target_unit", "spm_model"} & set(settings):
        raise UsageError("-o target_unit/spm_model and --no-latency cannot go together: latency is not computed")
    tokenize = settings.pop("tokenize", "13a")
    if not no_quality:
        metric_specs(["bleu"], {"tokenize": tokenize})  # an unknown tokenizer fails now
    if not no_latency:
        metric_specs(["yaal"], settings)  # a bad unit or model fails now, naming itself
    pairs = read_instances(log, {"delays": emission_cu_key, "elapsed": emission_ca_key})
    from evalpipe.errors import InputError

    if not no_quality:
        missing = next((i for i, h in enumerate(pairs.hypotheses) if h.text is None), None)
        if missing is not None:
            raise InputError("expected a 'prediction' string (BLEU and chrF score it); give --no-quality to score "
                             "latency alone", log, pairs.lines[missing])
    warnings = []
    if ref:
        from evalpipe.corpus import read_lines

        references = [line.strip() for line in read_lines(ref)]
        if len(references) != len(pairs):
            raise UsageError(f"{ref} has {len(references)} lines and {log} {len(pairs)} instances; expected one "
                             f"reference a line per instance")
        indices = getattr(pairs, "indices", [])
        wrong = next((k for k, i in enumerate(indices) if i is not None and i != k), None)
        if wrong is not None:
            raise InputError(f"instance 'index' {indices[wrong]!r} where {wrong} was expected: the references of {ref} "
                             f"pair with the instances by index, line k with index k-1 (sort the log by index)", log,
                             pairs.lines[wrong])
        if pairs.references:
            warnings.append(f"the log's instances carry 'reference' fields; the references of {ref} are used")
        source = ref
    elif not pairs.references:
        raise UsageError(f"{log} has no 'reference' fields: give the references with -r FILE")
    else:
        references, source = [r.strip() for r in pairs.references[0]], log
    if not no_latency:
        empty = next((i for i, r in enumerate(references) if not r), None)
        if empty is not None:
            raise InputError("expected a reference (the latency metrics count its length), got an empty one",
                             source, empty + 1 if ref else pairs.lines[empty])
    from evalpipe.inputs import SimulPairs

    pairs = SimulPairs(pairs.hypotheses, [references], log)
    with make_engine(engine, workers, spark_master=spark_master) as runner:
        result = shortform.evaluate(pairs, runner, not no_quality, not no_latency, tokenize, settings)
    result.warnings[:0] = warnings
    if fix_ca:
        result.warnings = [w for w in result.warnings if not w.startswith("CA-YAAL (")]
    for line in result.warnings:
        click.echo(f"Warning: {line}", err=True)
    unit = settings.get("target_unit", "word")
    shown = {"Hypothesis": log, "Reference": ref or "(the log's)", "BLEU tokenizer": tokenize, "Target unit": unit,
             "Fix CA emissions": "yes" if fix_ca else "no",
             "Metrics": ", ".join(m for m, off in (("quality", no_quality), ("latency", no_latency)) if not off)}
    report = "\n".join(shortform.report_lines(result, shown, width, __version__))
    tsv = "\n".join(shortform.tsv_lines(result, width)) + "\n"
    if output:
        from pathlib import Path

        write_atomically(str(Path(output, "scores.tsv")), tsv)
        write_atomically(str(Path(output, "evaluation_report.txt")), report + "\n")
    if fmt == "json":
        click.echo(json.dumps(shortform.as_json(result, shown), indent=1, ensure_ascii=False))
    else:
        click.echo(report if fmt == "text" else tsv, nl=fmt == "text")
