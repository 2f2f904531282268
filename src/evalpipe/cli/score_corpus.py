"""``score-corpus`` / ``evalpipe score-corpus``: many systems x many metrics from sufficient statistics.

Parse the arguments, build typed inputs (:mod:`evalpipe.inputs`) and metric specs
(:func:`evalpipe.registry.metric_specs`), run the scoring pipeline (:mod:`evalpipe.scoring`) on the
chosen engine, print.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import click

from evalpipe import __version__
from evalpipe.cli import options as opt
from evalpipe.cli.base import (Command, Flag, Rules, Several, check_rules, given_flags, setup_logging, stacked,
                               typed_order)
from evalpipe.corpus import check_same_length, read_lines, read_stream, write_atomically
from evalpipe.engines import make_engine
from evalpipe.errors import InputError, UsageError
from evalpipe.inputs import TextFiles, TextPairs
from evalpipe.registry import MetricSpec, metric_specs, parse_key_values, parse_named_files
from evalpipe.scoring import System, score_systems, sentence_scores
from evalpipe.scoring.results import sentences_json, sentences_tsv, to_json, to_table, to_tsv


def _text_systems(refs: List[str], paths: List[str], named: List[str], read_here: bool) -> List[System]:
    """Systems of text files, read here (stdin; line counts checked, naming the files) or as
    :class:`TextFiles`, read where the work runs."""
    runs = typed_order([(p, (p, [p])) for p in paths] + [(spec, parse_named_files(spec)) for spec in named])
    for kind, values in (("system", [name for name, _ in runs]), ("system file", [",".join(fs) for _, fs in runs]),
                         *(("run of a system", fs) for _, fs in runs)):
        twice = [v for v in values if v != "-" and values.count(v) > 1]
        if twice:
            raise UsageError(f"the {kind} {twice[0]!r} is given twice (arguments, -i, --system): give each once")
    if not read_here:
        if not runs:
            raise UsageError("this engine reads system files itself: pass system files or --system NAME=FILES")
        return [System(name, [TextFiles(f, refs) for f in files]) for name, files in runs]
    if not runs:
        if sys.stdin.isatty():
            raise UsageError("no system given: pass system files, --system NAME=FILES, or pipe hypotheses to stdin")
        runs = [("stdin", ["-"])]
    references = [read_lines(r) for r in refs]
    texts = {name: [read_stream(sys.stdin.buffer) if f == "-" else read_lines(f) for f in files]
             for name, files in runs}
    check_same_length(list(zip(refs, references)) + [(f"{name} (run {i + 1})" if len(t) > 1 else name, lines)
                                                     for name, t in texts.items() for i, lines in enumerate(t)])
    return [System(name, [TextPairs(lines, references, name) for lines in t]) for name, t in texts.items()]


def _segment_score_specs(values: Tuple[str, ...], options: Dict[str, str]) -> List[Tuple[str, List[str], Dict]]:
    """``(name, files, options)`` of each ``--segment-scores NAME=FILE[,FILE...]``; its ``-o NAME.KEY=VALUE`` options
    (direction, format, field) are taken out of ``options``."""
    out = []
    for value in values:
        name, eq, files = value.partition("=")
        if not eq or not name or not files:
            raise UsageError(f"--segment-scores expects NAME=FILE[,FILE...], got {value!r}")
        if not re.fullmatch(r"[A-Za-z][\w.+-]*", name) or "." in name:
            raise UsageError(f"--segment-scores: a metric name is letters, digits, _, + or -, got {name!r}")
        own = {key.split(".", 1)[1]: options.pop(key) for key in list(options) if key.startswith(name + ".")}
        unknown = sorted(set(own) - {"direction", "format", "field"})
        if unknown:
            raise UsageError(f"-o {name}.{unknown[0]}: segment scores take direction, format and field")
        out.append((name, files.split(","), own))
    names = [n for n, _, _ in out]
    if len(set(names)) < len(names):
        raise UsageError(f"--segment-scores: the name {next(n for n in names if names.count(n) > 1)!r} is given twice")
    return out


def _distinct(scores_given: List[Tuple[str, List[str], Dict]], names: List[str]) -> None:
    """Segment scores may not take the name of a metric computed beside them."""
    clash = sorted({n for n, _, _ in scores_given} & set(names))
    if clash:
        raise UsageError(f"--segment-scores {clash[0]}=...: {clash[0]} is also a metric computed here (-m); give the "
                         f"scores another name")


def _attach_scores(systems: List[System], given: List[Tuple[str, List[str], Dict]]) -> List[Any]:
    """The precomputed metrics' specs; each system gets its scores (``System.scores``).  Without text systems the
    systems are those of the first score file, in its order."""
    from evalpipe.inputs import ScorePairs
    from evalpipe.registry import ScoresSpec
    from evalpipe.score_files import read_scores, scores_for_systems

    if not systems:
        name, files, own = given[0]
        if len(files) != 1:
            raise UsageError(f"--segment-scores {name}: without system files, give one file holding every system")
        table = read_scores(files[0], own.get("format", "auto"), own.get("field"))
        if "" in table:
            raise UsageError(f"--segment-scores {name}: {files[0]} holds one unnamed system; give the system files "
                             f"and references, or a file naming its systems (comet-score's output, MTME seg.score)")
        systems[:] = [System(s, []) for s in table]
    if any(len(s.runs) > 1 for s in systems):
        raise UsageError("--segment-scores: segment scores go with systems of one run each")
    segments = len(systems[0].runs[0]) if systems[0].runs else None
    specs = []
    for name, files, own in given:
        found = scores_for_systems(name, files, [s.name for s in systems], segments, own.get("format", "auto"),
                                   own.get("field"))
        if segments is None:
            segments = len(found[systems[0].name])
            lengths = {s: len(v) for s, v in found.items()}
            if len(set(lengths.values())) > 1:
                raise UsageError(f"--segment-scores {name}: the systems have different numbers of scores: {lengths}")
        spec = ScoresSpec.of(name, own)  # a bad direction fails now
        for system in systems:
            system.scores[name] = ScorePairs(found[system.name], [], system.name)
        specs.append(spec)
    return specs


def demo_files() -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    """(the reference, the system files) of the shipped demo: 10 WMT21 en-de systems x 300 segments."""
    from importlib import resources

    folder = resources.files("evalpipe").joinpath("demo", "wmt21-ende")
    systems = sorted(str(p) for p in folder.joinpath("systems").iterdir() if p.name.endswith(".de"))
    return (str(folder / "ref.de"),), tuple(systems)


#: sacrebleu's BLEU tokenizer for a target language (its BLEU._TOKENIZER_MAP); 13a for the rest
TARGET_TOKENIZERS = {"zh": "zh", "ja": "ja-mecab", "ko": "ko-mecab"}


def sacrebleu_dialect(names: List[str], options: Dict[str, str], language_pair: Optional[str],
                      sentence_level: bool) -> Dict[str, str]:
    """The metric options with sacrebleu's command-line habits applied where the user did not say
    otherwise: ``-l SRC-TGT`` picks BLEU's tokenizer for the target language, and ``--sentence-level``
    is sentence BLEU with effective order (sacrebleu's CLI sets it for sentence scores)."""
    out = dict(options)
    if "bleu" not in names:
        return out
    target = language_pair.split("-")[1] if language_pair else None
    if target in TARGET_TOKENIZERS and not {"tokenize", "bleu.tokenize"} & set(out):
        out["bleu.tokenize"] = TARGET_TOKENIZERS[target]
    if sentence_level and not {"effective_order", "bleu.effective_order"} & set(out):
        out["bleu.effective_order"] = "true"
    return out


def _rules() -> Rules:
    """score-corpus's options that cannot act together, and those that act only beside another."""
    F = Flag
    sentence, tests = F("--sentence-level"), (F("--confidence"), F("--confidence-n"), F("--paired-bs"), F("--paired-ar"),
                                              F("--paired-n"), F("--all-pairs"), F("--report"), F("--plot"))
    no_stats = "statistical tests are unavailable in sentence-level mode (as in sacrebleu)"
    shown = (F("--paired-bs"), F("--paired-ar"), F("--paired-ttest"), F("--all-pairs"), F("--confidence"))
    machine = F("-f", ("json", "tsv"))
    return Rules(
        conflicts=(*((sentence, t, no_stats) for t in tests),
                   (sentence, F("-f", ("table", "text")), "sentence scores are TSV (the default) or JSON lines (-f json)"),
                   (F("--paired-bs"), F("--paired-ar"), "choose one paired test"),
                   (F("--paired-bs"), F("--paired-ttest"), "choose one paired test"),
                   (F("--paired-ar"), F("--paired-ttest"), "choose one paired test"),
                   (sentence, F("--paired-ttest"), no_stats),
                   (F("--sentence-level"), F("--segment-scores"), "sentence scores are the metrics' own"),
                   (F("-b"), machine, "-b shortens the table; json and tsv always carry the scores"),
                   *((F("-b"), t, "-b prints the scores alone, so the test's results would not be shown")
                     for t in shown),
                   (F("-w"), machine, "json and tsv carry every digit")),
        requires=((F("--paired-n"), (F("--paired-bs"), F("--paired-ar")), "it is the number of the paired test's trials"),
                  (F("--confidence-n"), (F("--confidence"), F("--report"), F("--plot")),
                   "it is the number of bootstrap resamples of the intervals"),
                  (F("--seed"), tests[:2] + tests[2:4] + tests[5:], "it seeds resampling, and nothing is resampled")))


RULES = _rules()


def _check_units(systems, specs) -> None:
    """A latency metric's ``unit`` agrees with what the log says its sources were (SimulEval writes a sound file's
    properties, ``samplerate: ...`` among them, for speech input; a string for text): milliseconds labelled source
    words, or words labelled milliseconds, is one line naming the log and the option to give."""
    for spec in specs:
        if "unit" not in type(spec.build()).OPTIONS:
            continue
        unit = spec.build().options["unit"]
        for system in systems:
            kind = getattr(system.runs[0], "source_kind", None)
            if kind is not None and kind != unit:
                fix = "-o unit=speech (its delays are milliseconds)" if kind == "speech" else \
                    "-o unit=text, the default (its delays are source words)"
                raise UsageError(f"{system.name}: a {kind}-input log (SimulEval's 'source' says so), scored by "
                                 f"{spec.name} with unit={unit}: give {fix}")


def _progress(total: int, quiet: bool):
    if quiet or not sys.stderr.isatty() or total < 2:
        return None
    return click.progressbar(length=total, label="scoring", file=sys.stderr)


@click.command("score-corpus", cls=Command, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("system_files", nargs=-1, type=click.Path(dir_okay=False))
@click.option("-i", "--input", "input_files", cls=Several, type=click.Path(dir_okay=False), metavar="FILE...",
              help="system files (sacrebleu's -i: several after one flag); the same as naming them as arguments")
@opt.refs()
@opt.metrics("metric: several after one flag (-m bleu chrf ter) or repeated; default bleu, or bleu ap al dal "
             "laal with --instances")
@opt.metric_options()
@click.option("-tok", "--tokenize", metavar="NAME",
              help="BLEU's tokenizer (sacrebleu's -tok): the same as -o bleu.tokenize=NAME")
@click.option("-lc", "--lowercase", is_flag=True,
              help="case-insensitive BLEU (sacrebleu's -lc): the same as -o bleu.lowercase=true")
@opt.language_pair("source-target language pair: sacrebleu's default BLEU tokenizer for the target language "
                   "(zh, ja-mecab, ko-mecab; 13a otherwise), unless -o tokenize=... says otherwise")
@click.option("--instances", "instance_logs", multiple=True, type=click.Path(dir_okay=False, exists=True),
              help="a SimulEval instances.log (JSON lines) to score as one system (repeat for several)")
@click.option("--system", "named_systems", multiple=True, metavar="NAME=RUN1[,RUN2...]",
              help="a system with one or more optimizer runs (MultEval style)")
@opt.demo("score the shipped demo: 10 WMT21 en-de systems x 300 segments against their reference")
@opt.fmt(["table", "text", "json", "tsv"], "table", "output format (text: the table, as sacrebleu calls it)")
@click.option("-b", "--score-only", is_flag=True, help="print only the scores, one line per system (sacrebleu's -b)")
@click.option("--sentence-level", is_flag=True,
              help="per-segment scores as sacrebleu's command line gives them (sentence BLEU with effective order, "
                   "eff:yes); JSON lines with --format json, else TSV; each with its signature")
@stacked(opt.confidence())
@click.option("--paired-bs", is_flag=True, help="paired bootstrap resampling against the first system")
@click.option("--paired-ar", is_flag=True, help="paired approximate randomization against the first system")
@click.option("--paired-ttest", is_flag=True,
              help="comet-compare's paired t-test (scipy.stats.ttest_rel) against the first system, on metrics whose "
                   "score is a mean of segment scores (--segment-scores); extra scipy")
@click.option("--segment-scores", "segment_scores", multiple=True, metavar="NAME=FILE[,FILE...]",
              help="segment scores computed elsewhere as one more metric NAME (repeat): comet-score's output or an "
                   "MTME seg.score file holding every system (matched by name), or one file a system in their "
                   "order (a number a line; JSON lines with -o NAME.field=KEY); -o NAME.direction=lower|higher, "
                   "-o NAME.format=comet|mtme|lines|jsonl")
@click.option("--source", "source_file", type=click.Path(dir_okay=False, exists=True),
              help="the source file, one line a segment: read by metrics that run a model on it (comet, cometkiwi)")
@click.option("--paired-n", type=click.IntRange(min=1), default=None,
              help="trials of the paired test (default 1000 for bs, 10000 for ar)")
@click.option("--all-pairs", is_flag=True,
              help="paired bootstrap between every pair of systems, Holm-adjusted, with significance clusters")
@opt.report("write a self-contained HTML report (implies --confidence --all-pairs; extra evalpipe[report])")
@click.option("--plot", "plot_file", type=click.Path(dir_okay=False),
              help="write the scores with their 95% intervals as FILE.svg, .png or .pdf (implies --confidence)")
@opt.seed()
@stacked(opt.engines())
@opt.width()
@click.option("-q", "--quiet", is_flag=True, help="no progress bar")
@opt.verbose()
def score_corpus(system_files, input_files, refs, metric_names, options, tokenize, lowercase, language_pair,
                 instance_logs, named_systems, demo, fmt, score_only, sentence_level, confidence, confidence_n, paired_bs,
                 paired_ar, paired_ttest, segment_scores, source_file, paired_n,
                 all_pairs, report_file, plot_file, seed, engine, workers, spark_master, width, quiet,
                 verbose) -> None:
    """Score SYSTEM_FILES (or -i FILES, or stdin) against the references with every metric.

    Numbers and signatures are sacrebleu's for bleu, chrf and ter.  Exit codes: 2 for usage
    errors, 1 for data errors.
    """
    setup_logging(verbose)
    check_rules(RULES)
    if sentence_level and not score_only and "-w" in given_flags(click.get_current_context()):
        raise UsageError("-w acts on sentence scores only with -b: TSV and JSON lines carry every digit")
    if report_file or plot_file:
        from evalpipe.report import figures, page

        if plot_file:  # a plot is nothing but a figure: matplotlib is needed (a report without it has its tables)
            figures.pyplot()  # a missing extra or a plot format without a writer fails before any scoring
        plot_format = figures.plot_format(plot_file) if plot_file else None
        confidence, all_pairs = True, all_pairs or bool(report_file)
    system_files = tuple(system_files) + tuple(input_files)
    if demo:
        if refs or system_files or named_systems or instance_logs:
            raise UsageError("--demo scores the shipped systems: give no references, system files or logs")
        refs, files = demo_files()
        named_systems = tuple(f"{Path(f).stem}={f}" for f in files)  # named as a person reads them, not by path
    given = parse_key_values(options)
    scores_given = _segment_score_specs(segment_scores, given)
    if not refs and not instance_logs and not metric_names and not scores_given:
        raise UsageError("give reference files (-r REF) or SimulEval logs (--instances LOG)")
    if instance_logs and (refs or system_files or named_systems or segment_scores):
        raise UsageError("--instances logs carry their own references and predictions: "
                         "do not combine them with -r, system files, --system or --segment-scores")
    default_metrics = ("bleu", "ap", "al", "dal", "laal") if instance_logs else () if scores_given else ("bleu",)
    names = list(metric_names or default_metrics)
    _distinct(scores_given, names)
    for key, value in (("tokenize", tokenize), ("lowercase", "true" if lowercase else None)):
        if value is not None:
            if "bleu" not in names:
                raise UsageError(f"--{key} is BLEU's option, and bleu is not among the metrics ({', '.join(names)})")
            clash = next((k for k in (key, f"bleu.{key}") if k in given), None)
            if clash:
                raise UsageError(f"--{key} and -o {clash}={given[clash]} set the same option: give it once")
            given[f"bleu.{key}"] = value
    if language_pair and "bleu" not in names:
        raise UsageError(f"-l picks BLEU's tokenizer for the target language, and bleu is not among the metrics "
                         f"({', '.join(names)})")
    settings = sacrebleu_dialect(names, given, language_pair, sentence_level)
    if not names and settings:
        raise UsageError(f"-o {next(iter(settings))}: no metric takes it (the segment scores take -o NAME.direction, "
                         f"NAME.format, NAME.field)")
    specs = metric_specs(names, settings) if names else []
    from evalpipe.scoring.neural import reads_source

    if not refs and not instance_logs:  # a model that scores with or without a reference (MetricX): without one
        specs = [MetricSpec.of(s.name, {**dict(s.options), "qe": True}) if reads_source(s)
                 and getattr(s.build(), "reference_optional", False) and s.build().uses_reference else s for s in specs]
    models = [spec for spec in specs if reads_source(spec)]
    without_refs = bool(specs) and all(s in models and not s.build().uses_reference for s in specs)
    if names and not refs and not instance_logs and not (without_refs and (system_files or named_systems)):
        raise UsageError(f"-m {' '.join(names)} needs the system files and their references (-r REF); with segment "
                         f"scores alone give no -m")
    if refs and without_refs:
        raise UsageError(f"-r: {', '.join(s.name for s in specs)} score without references; give no -r")
    if source_file and not models:
        raise UsageError("--source is read by metrics that run a model on the source (-m comet, -m cometkiwi, -m metricx)")
    if models and instance_logs:
        raise UsageError(f"-m {models[0].name} scores text files against --source, not SimulEval logs")
    if paired_ttest and not scores_given and not models:
        raise UsageError("--paired-ttest compares means of segment scores (comet-compare's test): give them with "
                         "--segment-scores NAME=FILE or score them with -m comet")
    with make_engine(engine, workers, spark_master=spark_master) as runner:
        if instance_logs:
            from evalpipe.simul.instance_log import InstanceLog

            systems = [System(p, [InstanceLog.open(p)]) for p in typed_order([(p, p) for p in instance_logs])]
            _check_units(systems, specs)
        else:
            # files are read where the work runs (streamed in blocks by one process, by byte range in a
            # pool, by Spark itself); only stdin is read here
            from_stdin = "-" in system_files or not (system_files or named_systems)
            if refs or without_refs:
                systems = _text_systems(list(refs), list(system_files), list(named_systems),
                                        read_here=from_stdin and not runner.reads_files)
            else:  # segment scores alone: the system files name the systems, in the order typed
                if named_systems:
                    raise UsageError("--system NAME=FILES: with segment scores alone, name the systems by their files")
                systems = [System(p, []) for p in typed_order([(p, p) for p in system_files])]
        decimals: Dict[str, int] = {}
        if models:
            from evalpipe.scoring.neural import attach_model_scores

            decimals = {s.name: s.build().decimals for s in specs if reads_source(s)
                        and getattr(s.build(), "decimals", None) is not None}  # (COMET, MetricX: 4, as they print)
            specs = attach_model_scores(systems, specs, read_lines(source_file) if source_file else None,
                                        source_file or "--source")
        if scores_given:
            specs += _attach_scores(systems, scores_given)
            if system_files and not (refs or without_refs):  # the files named the systems: their lines are the scores'
                for system in systems:
                    have = len(read_lines(system.name))
                    wrong = sorted({len(v) for v in system.scores.values()} - {have})
                    if wrong:
                        raise InputError(f"{have} lines but {wrong[0]} segment scores", system.name)
        if sentence_level:
            records = sentence_scores(systems, specs, runner, signatures=True)
            if score_only:
                click.echo("\n".join("undefined" if r["score"] is None else f"{r['score']:.{width}f}" for r in records))
            else:
                click.echo(sentences_json(records) if fmt == "json" else sentences_tsv(records))
            return
        bar = _progress(len(specs) * sum(len(s.runs) for s in systems), quiet)
        try:
            results, test = score_systems(systems, specs, confidence=confidence_n if confidence else 0,
                                          paired="bs" if paired_bs else "ar" if paired_ar else
                                          "ttest" if paired_ttest else None,
                                          trials=paired_n, seed=seed, engine=runner, pairwise=all_pairs,
                                          progress=bar.update if bar else (lambda n: None))
        finally:
            if bar:
                bar.render_finish()
    pairwise = test.pop("pairwise", None)
    first = systems[0].runs[0] if systems[0].runs else next(iter(systems[0].scores.values()))
    header: Dict[str, Any] = {"evalpipe_version": __version__, "references": list(refs), "test": test,
                              "segments": first.counted if runner.reads_files and isinstance(first, TextFiles)
                              else len(first)}  # (files Spark read were counted by Spark)
    if pairwise:
        header["pairwise"] = pairwise
    if report_file or plot_file:
        doc = json.loads(to_json(results, header))
        if report_file:
            write_atomically(report_file, page.corpus_report(doc))
        if plot_file:
            figures.render(figures.interval_figure(doc), plot_format, plot_file)
    places = {} if "--width" in given_flags(click.get_current_context()) else decimals  # -w given: it decides
    if score_only and fmt in ("table", "text"):
        shown = {}
        for r in results:
            shown.setdefault(r.system, []).append(f"{r.score:.{places.get(r.metric, width)}f}")
        click.echo("\n".join("\t".join(scores) for scores in shown.values()))
    elif fmt == "json":
        click.echo(to_json(results, header))
    elif fmt == "tsv":
        click.echo(to_tsv(results))
    else:
        click.echo(to_table(results, width, pairwise, places))
