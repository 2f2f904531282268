"""``evalpipe serve METRIC``: the SCORE/EVAL line protocol on stdin/stdout."""
from __future__ import annotations

import os
import sys
from contextlib import suppress

import click

from evalpipe.cli import options as opt
from evalpipe.cli.base import Command, setup_logging
from evalpipe.protocol.dispatch import DIALECTS
from evalpipe.protocol.loop import MAX_LINE_BYTES, serve as serve_loop
from evalpipe.registry import metric_specs, parse_key_values


def _mbr(metric, fields):
    """``MBR ||| ...`` requests (imported on the first one: serving SCORE / EVAL does not load numpy)."""
    from evalpipe.mbr.protocol import reply

    return reply(metric, fields)


@click.command(cls=Command)
@click.argument("metric")
@opt.metric_options("metric option (METRIC.KEY=VALUE for one member of a combination; repeat)")
@click.option("--dialect", type=click.Choice(DIALECTS), default="meteor", show_default=True,
              help="meteor: one-vector EVAL answers one line; pycocoevalcap: also the aggregate line")
@click.option("--on-error", type=click.Choice(["reply", "exit"]), default="reply", show_default=True,
              help="reply: ERROR line and go on; exit: error on stderr, exit 1 (for tuners)")
@click.option("--strict-stats", is_flag=True, help="reject EVAL vectors the metric cannot have produced")
@click.option("--score-scale", type=float, default=1.0, show_default=True,
              help="multiply every EVAL score (0.01: BLEU on cdec's 0-1 scale)")
@click.option("--max-line-bytes", type=click.IntRange(min=1), default=MAX_LINE_BYTES, show_default=True,
              help="longer request lines get an error reply, without being held in memory")
@click.option("--talks", is_flag=True,
              help="also answer SCORE ||| talk ||| JSON: a whole long-form talk, rebuilt and realigned here "
                   "(see evalpipe.stream.talk_request)")
@opt.verbose()
def serve(metric: str, options: tuple, dialect: str, on_error: str, strict_stats: bool, score_scale: float,
          max_line_bytes: int, talks: bool, verbose: bool) -> None:
    """Serve METRIC over the line protocol (SCORE / EVAL / INFO / MBR requests).

    METRIC is an installed metric (see `evalpipe list`), a module:Class path, or a combination
    such as bleu-ter or 0.7*bleu+0.3*chrf.  EVAL with n >= 2 vectors answers n scores and then
    the score of their sum, one per line.
    """
    setup_logging(verbose)
    (spec,) = metric_specs([metric], parse_key_values(options))
    forms = None
    if talks:
        from evalpipe.stream.talk_request import FORMS as forms
    with suppress(KeyboardInterrupt):
        serve_loop(spec.build(), sys.stdin.buffer, sys.stdout.buffer, dialect, strict_stats, on_error, score_scale,
                   max_line_bytes, forms, {"MBR": _mbr})
    # A reader that closed the pipe must not turn into a traceback at interpreter exit.
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
