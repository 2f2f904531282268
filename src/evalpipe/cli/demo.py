"""``evalpipe demo``: a real SCORE/EVAL session with ``evalpipe serve bleu`` on shipped data."""
from __future__ import annotations

from importlib import resources

import click
import sacrebleu

from evalpipe.cli.base import Command
from evalpipe.corpus import read_stream
from evalpipe.errors import EvalpipeError
from evalpipe.protocol import Client
from evalpipe.sufficient_stats.vectors import format_stats, sum_stats


def demo_lines(name: str):
    with resources.files("evalpipe").joinpath("demo", name).open("rb") as handle:
        return read_stream(handle, name)


@click.command(cls=Command)
def demo() -> None:
    """Score the shipped demo corpus through a real `evalpipe serve bleu` subprocess.

    Sends one SCORE request per segment (as a tuner would) through the public
    evalpipe.protocol.Client, sums the stats vectors, sends one EVAL, and prints the corpus BLEU
    beside sacrebleu's own corpus_score on the same data.
    """
    refs, hyps = demo_lines("newstest.ref.de"), demo_lines("newstest.hyp.de")
    with Client("bleu", timeout=60) as server:
        total = sum_stats([server.score(hyp, [ref]) for ref, hyp in zip(refs, hyps)])
        ours = server.evaluate(total)
        signature = server.info().split(" ||| ")[0]
    theirs = sacrebleu.corpus_bleu(hyps, [refs]).score
    click.echo(f"segments           {len(hyps)} (SCORE requests through a pipe to `evalpipe serve bleu`)")
    click.echo(f"summed stats       {format_stats(total)}")
    click.echo(f"evalpipe BLEU      {ours!r}")
    click.echo(f"sacrebleu BLEU     {theirs!r}")
    click.echo(f"identical          {'yes' if ours == theirs else 'NO'}")
    click.echo(f"signature          {signature}")
    if ours != theirs:
        raise EvalpipeError(f"evalpipe's BLEU {ours!r} differs from sacrebleu's {theirs!r}")
