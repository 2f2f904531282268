"""``evalpipe tune``: MERT on a Moses-format n-best list with any scorer speaking the line protocol."""
from __future__ import annotations

import json
import shlex
import time
from typing import Any, Dict, List

import click
import numpy as np

from evalpipe.cli import options as opt
from evalpipe.cli.base import Command, setup_logging
from evalpipe.corpus import check_same_length, read_lines, write_atomically
from evalpipe.errors import InputError, UsageError
from evalpipe.protocol import Client
from evalpipe.registry import metric_specs, parse_key_values
from evalpipe.tune.mert import TuneResult, corpus_score, mert, nbest_stats
from evalpipe.tune.nbest import parse_nbest, read_nbest


@click.command("tune", cls=Command, aliases={"--weights-out": "--output"})
@click.argument("nbest_file", required=False, type=click.Path(dir_okay=False, exists=True))
@opt.refs("reference file, line i for segment id i (repeat for several)")
@click.option("-m", "--metric", "--metrics", default="bleu", show_default=True,
              help="the evalpipe metric or combination to tune for (one)")
@opt.metric_options()
@click.option("--scorer-cmd", help="any METEOR-style scorer command instead of `evalpipe serve METRIC`")
@click.option("--minimize", is_flag=True, help="lower is better (TER; default: the metric's own direction)")
@click.option("--restarts", type=click.IntRange(min=0), default=5, show_default=True, help="random start points")
@click.option("--random-directions", type=click.IntRange(min=0), default=2, show_default=True,
              help="random search directions tried besides the coordinate axes, per iteration")
@opt.seed("random seed of the start points and directions", default=0)
@opt.output("write weights, score and tuning curve (JSON)")
@opt.demo("tune on the shipped WMT21 en-de demo and evaluate on held-out segments")
@opt.verbose("progress on stderr")
def tune(nbest_file, refs, metric, options, scorer_cmd, minimize, restarts, random_directions, seed, output,
         demo, verbose) -> None:
    """Tune feature weights on NBEST_FILE (`id ||| hypothesis ||| Name= v ... ||| total`) for METRIC."""
    setup_logging(verbose)
    higher = not minimize
    if not scorer_cmd:
        (spec,) = metric_specs([metric], parse_key_values(options))
        higher = spec.build().higher_is_better and not minimize
    log = (lambda message: click.echo(message, err=True)) if verbose else None
    if demo:
        if nbest_file or refs:
            raise UsageError("--demo tunes on the shipped data: give no n-best file or references")
        from evalpipe.tune.demo import demo_data, demo_nbest_lines

        sources, references, systems = demo_data()
        nbest, streams = parse_nbest(demo_nbest_lines(sources, systems), "<demo>"), [references]
    else:
        if not nbest_file or not refs:
            raise UsageError("give an n-best file and -r REF (or --demo)")
        nbest, streams = read_nbest(nbest_file), [read_lines(r) for r in refs]
        check_same_length([(r, s) for r, s in zip(refs, streams)])
        if len(nbest.ids) != len(streams[0]):
            raise InputError(f"{nbest_file} has segments 0-{len(nbest.ids) - 1} ({len(nbest.ids)}), the references "
                             f"{len(streams[0])} lines ({refs[0]}): an n-best list for tuning covers every reference "
                             f"line")
    try:
        command = shlex.split(scorer_cmd) if scorer_cmd else None
    except ValueError as exc:
        raise click.BadParameter(f"expected a shell command line, got {scorer_cmd!r} ({exc})",
                                 param_hint="--scorer-cmd") from None
    if command == []:
        raise click.BadParameter("expected a command, got an empty string", param_hint="--scorer-cmd")
    with Client(metric, parse_key_values(options), command=command, timeout=600) as client:
        start = time.perf_counter()
        stats = nbest_stats(nbest, streams, client)
        scored = time.perf_counter() - start
        click.echo(f"scored {nbest.lines} n-best lines in {scored:.2f} s ({nbest.lines / scored:.0f} lines/s)", err=True)
        dev = nbest.ids if not demo else [i for i in nbest.ids if i < len(nbest.ids) // 2]
        result = mert(nbest, stats, client, restarts=restarts, random_directions=random_directions, seed=seed,
                      higher_is_better=higher, ids=dev, log=log)
        report: Dict[str, Any] = {"metric": scorer_cmd or metric, "tuning_segments": len(dev),
                                  "tuning_score": result.score, "weights": result.weights, "curve": result.curve,
                                  "restarts": restarts, "random_directions": random_directions, "seed": seed}
        if demo:
            report["held_out"] = _held_out(nbest, stats, client, result, sorted(systems))
    if output:
        write_atomically(output, json.dumps(report, indent=1) + "\n")
    for name, value in result.weights.items():
        click.echo(f"{name}\t{value!r}")
    click.echo(f"tuning score\t{result.score!r}")
    for key, value in report.get("held_out", {}).items():
        click.echo(f"held-out {key}\t{value!r}")


def _held_out(nbest, stats, client, result: TuneResult, systems: List[str]) -> Dict[str, float]:
    """Held-out scores (second half) of the tuned and the uniform-weights selections and of every system."""
    test = [i for i in nbest.ids if i >= len(nbest.ids) // 2]
    w = np.array([result.weights[n] for n in nbest.feature_names])
    out = {"tuned": corpus_score(stats, nbest.features, test, w, client),
           "uniform weights": corpus_score(stats, nbest.features, test, np.ones(len(w)), client)}
    for k, name in enumerate(systems):  # hypothesis k of every segment is system k's output
        total = np.sum([stats[s][k] for s in test], axis=0)
        out[f"system {name}"] = client.evaluate_many([total.tolist()])[1]
    return out
