"""``score-corpus`` / ``evalpipe score-corpus``: many systems x many metrics from sufficient statistics."""
from __future__ import annotations

import json
import sys
from typing import Any, Dict, List, Optional

import click

from evalpipe import __version__
from evalpipe.cli.options import parse_key_values, setup_logging
from evalpipe.corpus import CorpusError, check_same_length, read_lines, read_stream
from evalpipe.engines import EngineError, make_engine
from evalpipe.evaluators.latency import read_instances
from evalpipe.registry import PluginError, load_class
from evalpipe.report import to_json, to_table, to_tsv
from evalpipe.scoring import MetricSpec, System, score_systems, sentence_scores
from evalpipe.sufficient_stats.base import OptionError
from evalpipe.sufficient_stats.combine import is_combination, load_combination, route_options


def _metrics(names: List[str], raw_options: Dict[str, str]) -> List[MetricSpec]:
    """Plain metrics get ``[METRIC.]KEY=VALUE`` options; a combination (``bleu-0.1*al``) is built
    with its members' defaults."""
    try:
        combos = {n: load_combination(n) for n in names if is_combination(n)}
        plain = [n for n in names if n not in combos]
        classes = [load_class(n) for n in plain]
        routed = dict(zip(plain, route_options(plain, classes, raw_options, "the selected metrics")
                          if raw_options else [{} for _ in plain]))
        built = {n: c(**routed[n]) for n, c in zip(plain, classes)}
        return [MetricSpec(n, routed.get(n, {}), combos[n] if n in combos else built[n]) for n in names]
    except PluginError as exc:
        raise click.UsageError(str(exc)) from None
    except (OptionError, ValueError) as exc:
        raise click.UsageError(str(exc)) from None


def _systems(paths: List[str], named: List[str]) -> List[System]:
    systems = [System(p, [read_lines(p)]) for p in paths]
    for spec in named:
        name, eq, files = spec.partition("=")
        if not eq or not name or not files:
            raise click.BadParameter(f"expected NAME=run1.txt[,run2.txt...], got {spec!r}", param_hint="--system")
        systems.append(System(name, [read_lines(f) for f in files.split(",")]))
    if not systems:
        if sys.stdin.isatty():
            raise click.UsageError("no system given: pass system files, --system NAME=FILES, or pipe hypotheses to stdin")
        systems = [System("stdin", [read_stream(sys.stdin.buffer)])]
    return systems


def _spark_inputs(refs: List[str], paths: List[str], named: List[str]):
    """Systems as TextFiles that Spark reads itself; references as paths (nothing read here)."""
    from evalpipe.spark_engine import TextFiles

    systems = [System(p, [TextFiles(p, refs)]) for p in paths]
    for spec in named:
        name, eq, files = spec.partition("=")
        if not eq or not name or not files:
            raise click.BadParameter(f"expected NAME=run1.txt[,run2.txt...], got {spec!r}", param_hint="--system")
        systems.append(System(name, [TextFiles(f, refs) for f in files.split(",")]))
    return [[] for _ in refs], systems


def _progress(total: int, quiet: bool):
    if quiet or not sys.stderr.isatty() or total < 2:
        return None
    return click.progressbar(length=total, label="scoring", file=sys.stderr)


@click.command("score-corpus", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("system_files", nargs=-1, type=click.Path(dir_okay=False))
@click.option("-r", "--ref", "refs", multiple=True, type=click.Path(dir_okay=False),
              help="reference file (repeat for several references)")
@click.option("-m", "--metric", "metric_names", multiple=True,
              help="metric (repeat for several; default bleu, or bleu ap al dal laal with --instances)")
@click.option("--instances", "instance_logs", multiple=True, type=click.Path(dir_okay=False, exists=True),
              help="a SimulEval instances.log (JSON lines) to score as one system (repeat for several)")
@click.option("-o", "--option", "options", multiple=True, metavar="[METRIC.]KEY=VALUE", help="metric option")
@click.option("--system", "named_systems", multiple=True, metavar="NAME=RUN1[,RUN2...]",
              help="a system with one or more optimizer runs (MultEval style)")
@click.option("-f", "--format", "fmt", type=click.Choice(["table", "json", "tsv"]), default="table", show_default=True)
@click.option("--sentence-level", is_flag=True, help="per-segment scores (JSON lines with --format json, else TSV)")
@click.option("--confidence", is_flag=True, help="bootstrap 95%% confidence intervals")
@click.option("--confidence-n", type=click.IntRange(min=2), default=1000, show_default=True,
              help="bootstrap resamples for --confidence")
@click.option("--paired-bs", is_flag=True, help="paired bootstrap resampling against the first system")
@click.option("--paired-ar", is_flag=True, help="paired approximate randomization against the first system")
@click.option("--paired-n", type=click.IntRange(min=1), default=None,
              help="trials of the paired test (default 1000 for bs, 10000 for ar)")
@click.option("--seed", default="12345", show_default=True, help="random seed of resampling ('none' for a random one)")
@click.option("--engine", type=click.Choice(["local", "pool", "spark"]), default="local", show_default=True,
              help="where stats are computed (results identical on every engine)")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="processes extracting stats (local/pool engines; results identical to 1)")
@click.option("--spark-master", default="local[2]", show_default=True,
              help="Spark master URL for --engine spark (local[2], spark://host:7077, yarn)")
@click.option("-w", "--width", type=click.IntRange(min=0), default=2, show_default=True, help="decimals in the table")
@click.option("-q", "--quiet", is_flag=True, help="no progress bar")
@click.option("-v", "--verbose", is_flag=True, help="debug logs on stderr")
def score_corpus(system_files, refs, metric_names, instance_logs, options, named_systems, fmt, sentence_level, confidence, confidence_n,
                 paired_bs,
                 paired_ar, paired_n, seed, engine, workers, spark_master, width, quiet, verbose) -> None:
    """Score SYSTEM_FILES (or stdin) against the references with every metric.

    Numbers and signatures are sacrebleu's for bleu, chrf and ter.  Exit codes: 2 for usage
    errors, 1 for data errors.
    """
    setup_logging(verbose)
    if paired_bs and paired_ar:
        raise click.UsageError("choose one of --paired-bs and --paired-ar")
    try:
        seed_value: Optional[int] = None if seed.lower() == "none" else int(seed)
    except ValueError:
        raise click.BadParameter(f"expected an integer or 'none', got {seed!r}", param_hint="--seed") from None
    if not refs and not instance_logs:
        raise click.UsageError("give reference files (-r REF) or SimulEval logs (--instances LOG)")
    if instance_logs and (refs or system_files or named_systems):
        raise click.UsageError("--instances logs carry their own references and predictions: "
                               "do not combine them with -r, system files or --system")
    default_metrics = ("bleu", "ap", "al", "dal", "laal") if instance_logs else ("bleu",)
    metrics = _metrics(list(dict.fromkeys(metric_names or default_metrics)), parse_key_values(options))
    runner = None
    try:
        runner = make_engine(engine, workers, spark_master)
        if instance_logs:
            references, systems = [], [System(p, [read_instances(p)]) for p in instance_logs]
        elif engine == "spark" and (system_files or named_systems):
            references, systems = _spark_inputs(list(refs), list(system_files), list(named_systems))
        else:
            references = [read_lines(r) for r in refs]
            systems = _systems(list(system_files), list(named_systems))
            check_same_length([(r, lines) for r, lines in zip(refs, references)]
                              + [(f"{s.name} (run {i + 1})" if len(s.runs) > 1 else s.name, run)
                                 for s in systems for i, run in enumerate(s.runs)])
        if sentence_level:
            _print_sentences(sentence_scores(systems, references, metrics, runner), fmt)
            return
        bar = _progress(len(metrics) * sum(len(s.runs) for s in systems), quiet)
        step = bar.update if bar else (lambda n: None)
        try:
            results, test = score_systems(systems, references, metrics, confidence=confidence_n if confidence else 0,
                                          paired="bs" if paired_bs else "ar" if paired_ar else None,
                                          trials=paired_n, seed=seed_value, engine=runner, progress=step)
        finally:
            if bar:
                bar.render_finish()
    except EngineError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(2)
    except (CorpusError, ValueError) as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(1)
    finally:
        if runner is not None:
            runner.close()
    if fmt == "json":
        header: Dict[str, Any] = {"evalpipe_version": __version__, "segments": (len(references[0]) or None) if references else len(systems[0].runs[0]),
                                  "references": list(refs), "test": test}
        click.echo(to_json(results, header))
    elif fmt == "tsv":
        click.echo(to_tsv(results))
    else:
        click.echo(to_table(results, width))


def _print_sentences(records: List[Dict[str, Any]], fmt: str) -> None:
    if fmt == "json":
        for rec in records:
            click.echo(json.dumps(rec, ensure_ascii=False))
        return
    click.echo("system\trun\tmetric\tsegment\tscore")
    for rec in records:
        click.echo(f"{rec['system']}\t{rec['run']}\t{rec['metric']}\t{rec['segment']}\t{rec['score']!r}")
