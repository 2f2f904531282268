"""``evalpipe demo``: pipe a real SCORE/EVAL session through ``evalpipe serve bleu`` on shipped data."""
from __future__ import annotations

import subprocess
import sys
from importlib import resources

import click
import sacrebleu

from evalpipe.corpus import decode_lines
from evalpipe.sufficient_stats.vectors import format_stats, parse_stats, sum_stats


def demo_lines(name: str):
    return decode_lines(resources.files("evalpipe").joinpath("demo", name).read_bytes(), name)


@click.command()
def demo() -> None:
    """Score the shipped demo corpus through a real `evalpipe serve bleu` subprocess.

    Sends one SCORE request per segment (as a tuner would), sums the stats vectors, sends one
    EVAL, and prints the corpus BLEU beside sacrebleu's own corpus_score on the same data.
    """
    refs, hyps = demo_lines("newstest.ref.de"), demo_lines("newstest.hyp.de")
    server = subprocess.Popen([sys.executable, "-m", "evalpipe", "serve", "bleu"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    rows = []
    for ref, hyp in zip(refs, hyps):
        server.stdin.write(f"SCORE ||| {ref} ||| {hyp}\n".encode("utf-8"))
        rows.append(parse_stats(server.stdout.readline().decode("utf-8")))
    total = sum_stats(rows)
    server.stdin.write(f"EVAL ||| {format_stats(total)}\n".encode("utf-8"))
    ours = float(server.stdout.readline().decode("utf-8"))
    server.stdin.write(b"INFO\n")
    info = server.stdout.readline().decode("utf-8").strip()
    server.stdin.close()
    server.wait(timeout=30)
    theirs = sacrebleu.corpus_bleu(hyps, [refs]).score
    click.echo(f"segments           {len(hyps)} (SCORE requests through a pipe to `evalpipe serve bleu`)")
    click.echo(f"summed stats       {format_stats(total)}")
    click.echo(f"evalpipe BLEU      {ours!r}")
    click.echo(f"sacrebleu BLEU     {theirs!r}")
    click.echo(f"identical          {'yes' if ours == theirs else 'NO'}")
    click.echo(f"signature          {info.split(' ||| ')[0]}")
    if ours != theirs:
        sys.exit(1)
