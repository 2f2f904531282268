"""``evalpipe stream``: evaluation of unsegmented (long-form) simultaneous translation streams."""
from __future__ import annotations

import json

import click

from evalpipe.cli.base import Group
from evalpipe.corpus import open_binary, read_lines
from evalpipe.evaluators import stream_latency as S
from evalpipe.protocol.codec import decode_line


@click.group("stream", cls=Group)
def stream_group() -> None:
    """Long-form (unsegmented) simultaneous translation."""


@stream_group.command("latency")
@click.option("--source", "source_file", required=True, type=click.Path(dir_okay=False, exists=True),
              help="the source sentences, one a line")
@click.option("--stream", "streams", required=True, multiple=True, metavar="RW_FILE=RESEGMENTED_FILE",
              help="a stream: its READ/WRITE actions and its output resegmented into the source's sentences "
                   "(repeat for several streams of the same source: the means are over all their sentences)")
@click.option("--penalty-scale", type=float, default=1.0, show_default=True, help="DAL's penalty scale s")
@click.option("--one-sentence", is_flag=True, help="score each stream as one sentence (no resegmentation)")
@click.option("--read", "read_action", default="R", show_default=True, help="the READ action's token")
@click.option("--write", "write_action", default="W", show_default=True, help="the WRITE action's token")
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def latency_command(source_file, streams, penalty_scale, one_sentence, read_action, write_action, fmt) -> None:
    """Stream-level AP, AL and DAL (Iranzo-Sánchez et al., 2021) of resegmented streams."""
    source = [len(line.split()) for line in read_lines(source_file)]
    total = [0, 0, 0, 0]
    for spec in streams:
        rw_file, _, resegmented = spec.partition("=")
        if not rw_file or not resegmented:
            raise click.BadParameter(f"expected RW_FILE=RESEGMENTED_FILE, got {spec!r}", param_hint="--stream")
        with open_binary(rw_file) as handle:
            actions = [a for number, raw in enumerate(handle, 1) for a in decode_line(raw, rw_file, number).split()]
        delays = S.delays_of_actions(actions, read_action, write_action, rw_file)
        target = [len(line.split()) for line in read_lines(resegmented, allow_empty=True)]
        src = [sum(source)] if one_sentence else source
        tgt = [sum(target)] if one_sentence else target
        stats = S.stream_stats(src, tgt, delays, penalty_scale, resegmented)
        total = [a + b for a, b in zip(total, stats)]
    ap, al, dal = S.scores(total)
    doc = {"AP": ap, "AL": al, "DAL": dal, "sentences": total[3], "streams": len(streams),
           "penalty_scale": penalty_scale, "one_sentence": one_sentence}
    click.echo(json.dumps(doc, indent=1) if fmt == "json" else
               f"AP {ap!r}\nAL {al!r}\nDAL {dal!r}\nsentences {total[3]} in {len(streams)} stream(s)")
