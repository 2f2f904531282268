"""``evalpipe mbr``: minimum Bayes risk selection of one candidate per segment (library: :mod:`evalpipe.mbr`)."""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Sequence

import click

from evalpipe.cli import options as opt
from evalpipe.cli.base import Command, check_rules, setup_logging, stacked
from evalpipe.cli.mbr_options import RULES, decoder_options
from evalpipe.errors import UsageError


@click.command(cls=Command)
@click.argument("system_files", nargs=-1, type=click.Path(dir_okay=False, exists=True))
@click.option("--nbest", type=click.Path(dir_okay=False, exists=True),
              help="candidates from a Moses n-best list (ID ||| text ||| features ||| score)")
@click.option("--samples", type=click.Path(dir_okay=False, exists=True), metavar="FILE.jsonl",
              help="candidates as JSON lines: a list of strings per segment, or {\"candidates\": [...], "
                   "\"pseudo_references\": [...], \"weights\": [...]} (the line protocol's MBR keys; weights over the "
                   "pseudo-references)")
@click.option("--pseudo-references", "pseudo_file", type=click.Path(dir_okay=False, exists=True), metavar="FILE.jsonl",
              help="pseudo-references as JSON lines: a list of strings per segment, or {\"pseudo_references\": [...], "
                   "\"weights\": [...]} (default: the candidates)")
@click.option("--source", "source_file", type=click.Path(dir_okay=False, exists=True),
              help="the source of each segment, one a line: read by metrics that run a model on it (comet: MBR "
                   "against the pseudo-references; cometkiwi: each candidate ranked by its own score)")
@click.option("-m", "--metric", "--metrics", "metric_name", default="chrf", show_default=True, metavar="NAME",
              help="the utility metric: an installed name, module:Class or a combination")
@opt.metric_options("metric option KEY=VALUE (repeat)")
@click.option("--segment-scores", "segment_scores", metavar="NAME=FILE",
              help="rerank by scores computed elsewhere instead of MBR: each candidate's utility is its precomputed "
                   "score (a quality-estimation reranker such as CometKiwi): comet-score's output or an MTME seg.score "
                   "file over the SYSTEM_FILES, matched by name; the highest wins (the lowest for MetricX-like "
                   "names, or -o NAME.direction=lower), the first on ties")
@click.option("--aggregate", is_flag=True,
              help="reference aggregation: score each candidate against the pseudo-references' mean n-gram "
                   "statistics (chrf, bleu)")
@click.option("--ties", type=click.Choice(["first", "mbrs"]), default="first", show_default=True,
              help="equal expected utilities: the first candidate, or mbrs 0.1.8's choice (torch.topk of float32 "
                   "utilities; needs torch)")
@click.option("--reference-lprobs", "lprobs_file", type=click.Path(dir_okay=False, exists=True), metavar="FILE.jsonl",
              help="log-probabilities of the pseudo-references, a JSON list per segment: each pseudo-reference "
                   "weighted by their softmax (mbrs's reference_lprobs)")
@click.option("--save-utilities", "save_file", type=click.Path(dir_okay=False), metavar="FILE.npz",
              help="also write every segment's utility matrix (numpy npz: the values, which cells were computed, the "
                   "texts' hashes, the metric's signature) to decode again with --utilities")
@click.option("--utilities", "utilities_file", type=click.Path(dir_okay=False, exists=True), metavar="FILE.npz",
              help="decode from the matrices --save-utilities wrote, computing nothing: they must be of these "
                   "candidates and pseudo-references (counts and texts' hashes are checked)")
@decoder_options
@opt.fmt(["text", "json"], "text", "text: the chosen candidate of each segment, one per line (with --top N, the N "
                                   "best of each segment, best first); json: also every candidate's expected utility")
@opt.output("write the chosen candidates (text) or the JSON here instead of stdout")
@opt.report("also write a self-contained HTML report: how often each system was chosen, the distribution of "
            "expected utilities (extra evalpipe[report])")
@opt.demo("choose among the 10 shipped WMT21 en-de systems (300 segments) with chrF and print the selection's "
          "corpus BLEU and chrF against the reference beside the best single system and the oracle")
@stacked(opt.engines("segments"))
@opt.verbose()
def mbr_command(system_files, nbest, samples, pseudo_file, source_file, metric_name, segment_scores, options, aggregate,
                ties, lprobs_file, save_file, utilities_file, fmt, output, report_file, demo, engine, workers,
                spark_master, verbose, **decoding) -> None:
    """Choose each segment's candidate of highest expected utility against the pseudo-references (MBR).

    Candidates come from aligned SYSTEM_FILES (line i of each: segment i; system combination), from
    --nbest or from --samples; give exactly one of the three.
    """
    setup_logging(verbose)
    from evalpipe import mbr
    from evalpipe.cli import mbr_options
    from evalpipe.mbr import candidates as readers
    from evalpipe.registry import metric_specs, parse_key_values

    check_rules(RULES)
    decoder, selector = mbr_options.build(decoding, aggregate)

    given = [name for name, value in (("system files", system_files), ("--nbest", nbest), ("--samples", samples))
             if value]
    if demo:
        if report_file:
            raise UsageError("--demo prints a table; --report goes with candidates you give")
        if given or pseudo_file or segment_scores or source_file or save_file or utilities_file or lprobs_file:
            raise UsageError("--demo chooses among the shipped systems with an n-gram metric: give no system files, "
                             "--nbest, --samples, --pseudo-references, --segment-scores, --source, --save-utilities, "
                             "--utilities or --reference-lprobs")
        from evalpipe.cli.base import given_flags

        shown = [f for f in ("--select", "--top") if f in given_flags(click.get_current_context())]
        if shown:
            raise UsageError(f"--demo prints a table of each selection's corpus scores: {shown[0]} (an n-best list) "
                             f"goes with candidates you give")
        if engine != "local" or spark_master != "local[2]":
            raise UsageError("--demo runs on the local engine: --engine and --spark-master go with candidates you give")
        return _demo(metric_name, options, aggregate, workers, ties, fmt, output, decoder, selector)
    if len(given) != 1:
        raise UsageError(f"give the candidates one way: system files, --nbest FILE or --samples FILE.jsonl "
                         f"(got {', '.join(given) or 'none'})")
    if segment_scores:
        from evalpipe.cli.base import given_flags

        typed = given_flags(click.get_current_context())
        bad = [f for f in ("-m", "--source", "--aggregate", "--ties", "--pseudo-references", "--nbest", "--samples",
                           "--workers", "--engine", "--spark-master", "--demo", "--save-utilities", "--utilities",
                           "--reference-lprobs", "--decoder",
                           "--select", "--top", "--seed", *mbr_options.FLAGS) if f in typed]
        if bad:
            raise UsageError(f"{bad[0]} and --segment-scores cannot go together: the candidates are ranked by their "
                             f"precomputed scores")
        return _rerank(system_files, segment_scores, parse_key_values(options), fmt, output, report_file)
    if utilities_file:
        from evalpipe.cli.base import given_flags

        typed = given_flags(click.get_current_context())
        bad = [f for f in ("-m", "-o", "--source", "--aggregate", "--workers", "--save-utilities", "--engine",
                           "--spark-master") if f in typed]
        if bad:
            raise UsageError(f"{bad[0]} and --utilities cannot go together: the utilities are read from "
                             f"{utilities_file}, computed by the metric and in the way it names; nothing is computed")
        metric = spec = None
    else:
        (spec,) = metric_specs([metric_name], parse_key_values(options))  # a bad metric or option before any reading
        metric = spec.build()
    if metric is not None and getattr(metric, "reads_source", False):
        from evalpipe.cli.base import given_flags

        if "--workers" in given_flags(click.get_current_context()):
            raise UsageError(f"--workers and -m {metric_name} cannot go together: the model runs in this process on "
                             f"every core (torch threads; -o {metric_name}.threads=N), or on Spark's executors "
                             f"(--engine spark)")
        if not source_file:
            raise UsageError(f"-m {metric_name} reads the source of each segment: give it with --source FILE")
    elif source_file:
        raise UsageError(f"--source is read by metrics that run a model on it (-m comet, -m cometkiwi), not "
                         f"{metric_name}")
    weights = pseudo = in_lines = None
    if system_files:
        cands = readers.from_systems(system_files)
    elif nbest:
        cands = readers.from_nbest(nbest)
    else:
        lines = readers.from_jsonl(samples)
        cands = [r.candidates for r in lines]
        pseudo, weights, in_lines = (readers.per_segment(lines, key, samples)
                                     for key in ("pseudo_references", "weights", "reference_lprobs"))
    if pseudo_file:
        lines = readers.from_jsonl(pseudo_file, "pseudo_references")
        if len(lines) != len(cands):
            raise UsageError(f"{pseudo_file} has {len(lines)} segments, the candidates {len(cands)}")
        in_file = {key: readers.per_segment(lines, key, pseudo_file)
                   for key in ("pseudo_references", "weights", "reference_lprobs")}
        for key, already in (("pseudo_references", pseudo), ("weights", weights), ("reference_lprobs", in_lines)):
            if already is not None and in_file[key] is not None:
                raise UsageError(f"\"{key}\" is given both in the --samples lines and in --pseudo-references: "
                                 f"give it once")
        pseudo, weights = in_file["pseudo_references"], weights if in_file["weights"] is None else in_file["weights"]
        in_lines = in_lines if in_file["reference_lprobs"] is None else in_file["reference_lprobs"]
    from evalpipe.mbr.requests import check_weights

    for key, values in (("weights", weights), ("reference_lprobs", in_lines)):
        for g, (w, refs) in enumerate(zip(values or [], pseudo or cands), 1):
            check_weights(w, refs, f"segment {g}: ", key)
    lprobs = in_lines
    if lprobs_file:
        if lprobs is not None:
            raise UsageError("--reference-lprobs and \"reference_lprobs\" in the JSON lines: give them once")
        if weights is not None:
            raise UsageError("--reference-lprobs and \"weights\" in the JSON lines cannot go together: give the "
                             "pseudo-references' weights one way")
        lprobs = readers.lprobs_from(lprobs_file, pseudo or cands)
    sources = None
    if source_file:
        from evalpipe.corpus import read_lines

        sources = read_lines(source_file)
        if len(sources) != len(cands):
            raise UsageError(f"--source {source_file} has {len(sources)} lines, the candidates {len(cands)} segments")
    if utilities_file:
        from evalpipe.mbr import matrix

        saved, meta = matrix.load(utilities_file)
        matrix.check(saved, cands, pseudo or cands, utilities_file)
        if weights is not None and meta.get("aggregate"):
            raise UsageError(f"{utilities_file} holds aggregate utilities (one column a segment): weights over "
                             f"pseudo-references cannot apply to them")
        if lprobs is not None and meta.get("aggregate"):
            raise UsageError(f"{utilities_file} holds aggregate utilities (one column a segment): log-probabilities "
                             f"of pseudo-references cannot apply to them")
        choices = mbr.decode_saved(saved, cands, bool(meta["higher_is_better"]), weights, ties, lprobs, decoder,
                                   selector, pseudo or cands, utilities_file)
        metric_name, signature, aggregate = meta["metric"], meta["signature"], bool(meta["aggregate"])
        decoder = decoder or mbr.Decoder("aggregate" if aggregate else "mbr")
    else:
        from evalpipe.engines import make_engine

        computed: Optional[List[Any]] = [] if save_file else None
        with make_engine(engine, workers, spark_master=spark_master) as runner:
            choices = mbr.decode(metric, cands, pseudo, aggregate=aggregate, weights=weights, ties=ties,
                                 engine=runner, sources=sources, matrices=computed, lprobs=lprobs, decoder=decoder,
                                 selector=selector, spec=spec)
        decoder = mbr.resolve(metric, decoder, aggregate)
        signature = metric.signature(1)
        if save_file:
            from evalpipe import __version__
            from evalpipe.corpus import write_atomically
            from evalpipe.mbr import matrix

            write_atomically(save_file, matrix.dumps(computed, {
                "metric": metric_name, "signature": signature, "higher_is_better": bool(metric.higher_is_better),
                "aggregate": decoder.name == "aggregate", "decoder": decoder.name, "evalpipe_version": __version__}))
    doc = _document(metric_name, signature, decoder, selector, ties, choices, cands, pseudo)
    if utilities_file:
        doc["utilities_from"] = utilities_file
    if system_files:
        doc["chosen_per_system"] = _counts(choices, system_files)
    if report_file:
        from evalpipe.corpus import write_atomically
        from evalpipe.report import page

        write_atomically(report_file, page.mbr_report(doc))
    text = json.dumps(doc, ensure_ascii=False, indent=1) + "\n" if fmt == "json" else _lines(choices, cands)
    _emit(text, output)


def _lines(choices: Sequence[Any], cands: Sequence[Sequence[str]]) -> str:
    """The text output: each segment's choice, or its n-best (best first), one a line."""
    return "".join(cands[g][k] + "\n" for g, c in enumerate(choices) for k in (c.ranked or [c.index]))


def _document(metric_name: str, signature: str, decoder: Any, selector: Any, ties: str, choices: Sequence[Any],
              cands: Sequence[Sequence[str]], pseudo: Any) -> Dict[str, Any]:
    """The JSON output; for the efficient decoders the cells computed are also logged on stderr."""
    import dataclasses

    from evalpipe.mbr import decoders as dec
    from evalpipe.mbr.draws import kind

    acting = dec.DECODER_OPTIONS.get(decoder.name, ())
    doc: Dict[str, Any] = {
        "metric": metric_name, "signature": signature, "aggregate": decoder.name == "aggregate", "ties": ties,
        "decoder": {"name": decoder.name, **{k: v for k, v in dataclasses.asdict(decoder).items() if k in acting}},
        "selector": {"name": selector.name, "n": selector.n,
                     **{k: v for k, v in dataclasses.asdict(selector).items()
                        if k in dec.SELECTOR_OPTIONS[selector.name]}}}
    if decoder.name in dec.EFFICIENT or selector.name == "diverse":
        doc["draws"] = kind(decoder.draws)
    segments = []
    for g, c in enumerate(choices):
        row: Dict[str, Any] = {"segment": g, "choice": c.index, "text": c.text, "utilities": c.utilities}
        if c.ranked is not None:
            row["nbest"] = [{"index": k, "text": cands[g][k], "utility": c.utilities[k]} for k in c.ranked]
        if c.objective is not None:
            row["objective"] = c.objective
        if c.cells is not None:
            row["cells"] = c.cells
        segments.append(row)
    doc["segments"] = segments
    if decoder.name in dec.EFFICIENT:
        refs = pseudo or cands
        total = sum(len(c) * len(r) for c, r in zip(cands, refs))
        done = sum(c.cells for c in choices)
        doc["cells"] = {"computed": done, "exact": total}
        click.echo(f"{decoder.name} MBR computed {done:,} of the {total:,} utilities exact MBR computes "
                   f"({100.0 * done / max(total, 1):.1f}%)", err=True)
    return doc


def _rerank(system_files: Sequence[str], value: str, options: Dict[str, str], fmt: str, output: Optional[str],
            report_file: Optional[str]) -> None:
    """Choose each segment's candidate by its precomputed score (``--segment-scores NAME=FILE``)."""
    from evalpipe.mbr import Choice
    from evalpipe.mbr import candidates as readers
    from evalpipe.registry import ScoresSpec
    from evalpipe.score_files import scores_for_systems

    from evalpipe.cli.score_corpus import _segment_score_specs

    options = dict(options)
    ((name, paths, own),) = _segment_score_specs((value,), options)  # takes the -o NAME.KEY values out
    if not system_files:
        raise UsageError("--segment-scores reranks the lines of SYSTEM_FILES: give the system files the scores are of")
    own = {**options, **own}  # (a bare -o direction=... is the scores' too: they are the only metric here)
    unknown = sorted(set(own) - {"direction", "format", "field"})
    if unknown:
        raise UsageError(f"-o {unknown[0]}: reranking by segment scores takes -o {name}.direction, {name}.format, "
                         f"{name}.field")
    metric = ScoresSpec.of(name, own).build()
    cands = readers.from_systems(system_files)
    table = scores_for_systems(name, paths, list(system_files), len(cands), own.get("format", "auto"),
                               own.get("field"))
    sign = 1.0 if metric.higher_is_better else -1.0
    choices = []
    for g, texts in enumerate(cands):
        utilities = [table[s][g] for s in system_files]
        scored = [(sign * u, -i) for i, u in enumerate(utilities) if u is not None]
        if not scored:
            raise UsageError(f"{name}: segment {g + 1} has no score for any system")
        best = -max(scored)[1]
        choices.append(Choice(best, texts[best], [None if u is None else float(u) for u in utilities]))
    doc: Dict[str, Any] = {"metric": name, "signature": metric.signature(), "aggregate": False, "ties": "first",
                           "segments": [{"segment": g, "choice": c.index, "text": c.text, "utilities": c.utilities}
                                        for g, c in enumerate(choices)],
                           "chosen_per_system": _counts(choices, system_files)}
    if report_file:
        from evalpipe.corpus import write_atomically
        from evalpipe.report import page

        write_atomically(report_file, page.mbr_report(doc))
    text = json.dumps(doc, ensure_ascii=False, indent=1) + "\n" if fmt == "json" else "".join(c.text + "\n" for c in choices)
    _emit(text, output)


def _counts(choices: Sequence[Any], names: Sequence[str]) -> Dict[str, int]:
    counts = {name: 0 for name in names}
    for c in choices:
        counts[names[c.index]] += 1
    return counts


def _emit(text: str, output: Optional[str]) -> None:
    if output:
        from evalpipe.corpus import write_atomically

        write_atomically(output, text)
    else:
        click.echo(text, nl=False)


def _demo(metric_name: str, options: tuple, aggregate: bool, workers: Optional[int], ties: str, fmt: str,
          output: Optional[str], decoder: Any = None, selector: Any = None) -> None:
    """The shipped systems: MBR selection against single systems and the per-segment oracle (``-f json``: the same
    rows as JSON); ``--output``: the chosen candidates, one a line."""
    import os

    import sacrebleu

    from evalpipe import mbr
    from evalpipe.cli.score_corpus import demo_files
    from evalpipe.corpus import read_lines
    from evalpipe.mbr import candidates as readers
    from evalpipe.registry import metric_specs, parse_key_values

    (ref_file,), system_files = demo_files()
    ref = read_lines(ref_file)
    cands = readers.from_systems(system_files)
    (spec,) = metric_specs([metric_name], parse_key_values(options))
    from evalpipe.engines import make_engine

    with make_engine("local", workers) as engine:
        choices = mbr.decode(spec.build(), cands, aggregate=aggregate, engine=engine, ties=ties, decoder=decoder,
                             selector=selector)
    rows: List[List[str]] = []
    systems = {os.path.basename(p).rsplit(".", 1)[0]: [c[k] for c in cands] for k, p in enumerate(system_files)}
    chrf = sacrebleu.CHRF()
    oracle = [max(c, key=lambda h, r=r: chrf.sentence_score(h, [r]).score) for c, r in zip(cands, ref)]
    best = max(systems, key=lambda s: sacrebleu.corpus_bleu(systems[s], [ref]).score)
    how = ", aggregated" if aggregate else f", {decoder.name} decoder" if decoder is not None and decoder.name != "mbr" else ""
    for label, hyps in ((f"MBR ({metric_name}{how})", [c.text for c in choices]),
                        (f"best single system ({best})", systems[best]), ("oracle (best chrF per segment)", oracle)):
        rows.append([label, f"{sacrebleu.corpus_bleu(hyps, [ref]).score:.2f}", f"{sacrebleu.corpus_chrf(hyps, [ref]).score:.2f}"])
    if output:
        from evalpipe.corpus import write_atomically

        write_atomically(output, "".join(c.text + "\n" for c in choices))
    if fmt == "json":
        import json

        click.echo(json.dumps({"segments": len(cands), "systems": len(system_files), "metric": metric_name,
                               "aggregate": aggregate, "ties": ties,
                               "rows": [{"selection": label, "bleu": float(b), "chrf": float(c)} for label, b, c in rows]},
                              indent=1))
        return
    width = max(len(r[0]) for r in rows)
    click.echo(f"{len(cands)} segments x {len(system_files)} WMT21 en-de systems (shipped demo), against the reference")
    click.echo(f"{'selection':<{width}}  BLEU   chrF")
    for label, b, c in rows:
        click.echo(f"{label:<{width}}  {b}  {c}")
