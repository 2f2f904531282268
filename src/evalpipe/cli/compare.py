"""``evalpipe compare``: what two systems do differently (compare-mt 0.2.10's analyses, same numbers)."""
from __future__ import annotations

import json
from pathlib import Path

import click

from evalpipe.cli import options as opt
from evalpipe.cli.base import Command
from evalpipe.cli.score_corpus import _segment_score_specs, demo_files
from evalpipe.corpus import check_same_length, read_lines, write_atomically
from evalpipe.errors import UsageError
from evalpipe.registry import parse_key_values
from evalpipe.scoring.compare_systems import compare_two


@click.command("compare", cls=Command, aliases={"--names": "--labels"})
@click.argument("system1", required=False, type=click.Path(dir_okay=False, exists=True))
@click.argument("system2", required=False, type=click.Path(dir_okay=False, exists=True))
@opt.ref()
@click.option("--labels", help="LABEL1,LABEL2: what the two systems are called (default: the file names)")
@click.option("--top", type=click.IntRange(min=1), default=30, show_default=True, help="n-grams listed each way")
@click.option("--examples", type=click.IntRange(min=1), default=10, show_default=True,
              help="sentences listed each way")
@click.option("--segment-scores", "segment_scores", multiple=True, metavar="NAME=FILE[,FILE]",
              help="also compare by segment scores computed elsewhere (COMET, MetricX; repeat): each system's mean, "
                   "the means by reference length, the sentences where each is furthest ahead; comet-score's output "
                   "or a seg.score file naming both systems, or one file a system; -o NAME.direction|format|field")
@opt.metric_options("the segment scores' -o NAME.direction=higher|lower, NAME.format, NAME.field (repeat)")
@opt.demo("compare two of the shipped WMT21 en-de systems (Online-W and NVIDIA-NeMo, 300 segments)")
@opt.fmt(["text", "json"], "text")
@opt.report()
def compare(system1, system2, ref, labels, top, examples, segment_scores, options, demo, fmt, report_file) -> None:
    """Compare SYSTEM1 and SYSTEM2 against the reference (-r): sentence BLEU distributions, BLEU by reference
    length, word F-measure by frequency, characteristic n-grams, the sentences that differ most."""
    if demo:
        if system1 or system2 or ref:
            raise UsageError("--demo compares two shipped systems: give no system files or reference")
        (ref,), systems = demo_files()
        system1, system2 = (next(s for s in systems if Path(s).stem == name) for name in ("Online-W", "NVIDIA-NeMo"))
    elif not (system1 and system2 and ref):
        raise UsageError("give SYSTEM1 SYSTEM2 and -r/--ref FILE, or --demo")
    names = labels.split(",") if labels else [Path(system1).stem, Path(system2).stem]
    if len(names) != 2 or not all(names):
        raise click.BadParameter(f"expected LABEL1,LABEL2, got {labels!r}", param_hint="--labels")
    texts = {path: read_lines(path) for path in (ref, system1, system2)}
    check_same_length(list(texts.items()))
    given = parse_key_values(options)
    scores_given = _segment_score_specs(tuple(segment_scores), given)
    if given:
        raise UsageError(f"-o {next(iter(given))}: compare takes only the segment scores' -o NAME.direction, "
                         f"NAME.format, NAME.field")
    if scores_given and report_file:
        raise UsageError("--segment-scores and --report cannot go together yet: the report shows compare-mt's "
                         "analyses only (use -f json for the scores' analyses)")
    doc = compare_two(texts[ref], texts[system1], texts[system2], names, top, examples)
    doc["reference"] = ref
    if scores_given:
        from evalpipe.registry import ScoresSpec
        from evalpipe.score_files import scores_for_systems
        from evalpipe.scoring.compare_systems import compare_scores

        doc["segment_scores"] = []
        for name, paths, own in scores_given:
            metric = ScoresSpec.of(name, own).build()
            found = scores_for_systems(name, paths, [system1, system2], len(texts[ref]), own.get("format", "auto"),
                                       own.get("field"))
            doc["segment_scores"].append(compare_scores(name, texts[ref], [texts[system1], texts[system2]],
                                                        [found[system1], found[system2]], metric.higher_is_better,
                                                        examples))
    if report_file:
        from evalpipe.report import page

        write_atomically(report_file, page.compare_report(doc))
    if fmt == "json":
        click.echo(json.dumps(doc, indent=1, ensure_ascii=False))
        return
    click.echo(text_summary(doc, names))


def _pair(x: float, y: float, empty: bool, digits: int) -> str:
    return "-/-" if empty else f"{x:.{digits}f}/{y:.{digits}f}"


def text_summary(doc: dict, names: list) -> str:
    """The analyses as text: every n-gram and example the options asked for; a bucket with nothing in it
    shows ``-`` (no value), not a zero."""
    a, b = names
    length, words = doc["length"], doc["word_accuracy"]
    out = [f"BLEU (compare-mt)      {a} {doc['bleu'][0]:.4f}   {b} {doc['bleu'][1]:.4f}",
           f"BLEU by ref length ({a}/{b}; sentences)",
           "  " + "  ".join(f"{lb}: {_pair(x, y, n == 0, 2)} ({n})" for lb, x, y, n in zip(
               length["buckets"], *length["bleu"], length["sentences"])),
           f"word F by frequency ({a}/{b}; F is undefined where a bucket has no reference or no output words)",
           "  " + "  ".join(f"{lb}: {_pair(x[5], y[5], not (x[1] and x[2] and y[1] and y[2]), 4)}" for lb, x, y in zip(
               words["buckets"], *words["systems"]))]
    for key, who in (("system1", a), ("system2", b)):
        grams = doc["ngrams"][key]
        out.append(f"n-grams {who} matches more ({len(grams)}; matches {a}/{b}):")
        out += [f"  {g}  ({m1}/{m2})" for g, _, m1, m2 in grams]
    out += _examples(doc["examples"], names, "", "sentence BLEU ", "sentbleu", 2)
    for scores in doc.get("segment_scores", []):
        name, (m1, m2) = scores["name"], scores["mean"]
        shown = "  ".join(f"{who} {'-' if m is None else f'{m:.4f}'}" for who, m in ((a, m1), (b, m2)))
        better = "higher" if scores["higher_is_better"] else "lower"
        out.append(f"{name} (mean of segment scores, {better} is better)   {shown}")
        length = scores["length"]
        out.append(f"{name} by ref length ({a}/{b}; sentences)")
        out.append("  " + "  ".join(f"{lb}: {_pair(x or 0, y or 0, n == 0, 4)} ({n})" for lb, x, y, n in zip(
            length["buckets"], *length["mean"], length["sentences"])))
        out += _examples(scores["examples"], names, f" by {name}", "", "scores", 4)
    return "\n".join(out)


def _examples(examples: dict, names: list, by: str, measure: str, key: str, digits: int) -> list:
    """The lines of the sentences where each system is furthest ahead (``examples[system1|system2]``), each with
    its two values under ``key``, the reference and both outputs."""
    a, b = names
    out = []
    for side, who in (("system1", a), ("system2", b)):
        shown = examples[side]
        out.append(f"sentences where {who} is better{by} ({len(shown)}; {measure}{a}/{b}):")
        for ex in shown:
            out += [f"  #{ex['index'] + 1}  {ex[key][0]:.{digits}f}/{ex[key][1]:.{digits}f}",
                    f"    ref  {ex['reference']}", f"    {a}  {ex['outputs'][0]}", f"    {b}  {ex['outputs'][1]}"]
    return out
