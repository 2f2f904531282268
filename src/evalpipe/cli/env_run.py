"""``evalpipe env run``: run an agent through every episode of the translation Env."""
from __future__ import annotations

import json

import click
import numpy as np

from evalpipe.cli import options as opt
from evalpipe.cli.base import Group, setup_logging
from evalpipe.env import Env
from evalpipe.errors import InputError, UsageError
from evalpipe.registry import AGENTS_GROUP, load_class, metric_specs


@click.group("env", cls=Group)
def env_group() -> None:
    """The predict-only translation environment."""


@env_group.command("run")
@click.option("--agent", default="evalpipe.env:CopySourceAgent", show_default=True,
              help="module:Class exposing reset() and predict(X_test)")
@click.option("--dataset", type=click.Path(dir_okay=False, exists=True), default=None,
              help="JSON dataset of translation pairs")
@opt.demo("the shipped WMT21 en-de pairs as the dataset")
@opt.language_pair("the dataset's source and target fields, e.g. en-de (default en-de)")
@click.option("--source", "old_source", hidden=True, help="deprecated: -l SRC-TGT")
@click.option("--target", "old_target", hidden=True, help="deprecated: -l SRC-TGT")
@click.option("--episodes", type=click.IntRange(min=1), default=20, show_default=True, help="episodes to run")
@opt.seed("random seed of the episodes' draws", default=0)
@opt.metrics("also report these metrics (e.g. bleu chrf)")
@opt.fmt(["table", "json"], "table")
def env_run(agent, dataset, demo, language_pair, old_source, old_target, episodes, seed, metric_names, fmt) -> None:
    """Run AGENT on every episode; print per-episode and mean token-overlap F1."""
    setup_logging(False)
    if bool(dataset) == demo:
        raise UsageError("give --dataset FILE, or --demo for the shipped pairs")
    source, target = (language_pair or "en-de").split("-")
    if old_source or old_target:
        click.echo("Warning: --source and --target are deprecated and will be removed in the next release; "
                   "use -l SRC-TGT", err=True)
        source, target = old_source or source, old_target or target
    extra_metrics = metric_names
    agent_obj = load_class(agent, group=AGENTS_GROUP)()
    metrics = {spec.name: spec.build() for spec in metric_specs(extra_metrics)} if extra_metrics else {}
    env = Env(number_episodes=episodes, dataset=dataset, source=source, target=target, seed=seed)
    rows = []
    while not env.is_complete():
        task = env.get_next_task()
        agent_obj.reset()
        predictions = list(agent_obj.predict(task["X_test"]))
        try:
            row = {"episode": len(rows) + 1, "segments": len(task["y_test"]),
                   "token_f1": env.evaluate(predictions, task["y_test"])}
        except InputError as exc:
            raise InputError(f"episode {len(rows) + 1}: {exc}") from None
        for name, metric in metrics.items():
            row[name] = metric.corpus_score(predictions, [list(task["y_test"])])
        rows.append(row)
    keys = ["token_f1", *metrics]
    mean = {k: float(np.mean([r[k] for r in rows])) for k in keys}
    if fmt == "json":
        click.echo(json.dumps({"agent": agent, "episodes": rows, "mean": mean}, indent=1))
        return
    click.echo("episode  segments  " + "  ".join(f"{k:>10}" for k in keys))
    for r in rows:
        click.echo(f"{r['episode']:>7}  {r['segments']:>8}  " + "  ".join(f"{r[k]:10.4f}" for k in keys))
    click.echo(f"{'mean':>7}  {'':>8}  " + "  ".join(f"{mean[k]:10.4f}" for k in keys))
