"""``evalpipe compare``: what systems do differently (compare-mt 0.2.10's analyses, same numbers)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import click

from evalpipe.cli import options as opt
from evalpipe.cli.base import Command, Flag, Rules, check_rules, given_flags, stacked
from evalpipe.cli.score_corpus import _distinct, _segment_score_specs, demo_files
from evalpipe.corpus import check_same_length, read_lines, write_atomically
from evalpipe.errors import InputError, UsageError
from evalpipe.registry import metric_specs, parse_key_values
from evalpipe.cli.compare_text import layout, metric_buckets_text
from evalpipe.scoring.compare_many import NgramSettings, Settings, analyse
from evalpipe.scoring.compare_sentences import COMPAREMT_MEASURES
from evalpipe.scoring.compare_systems import compare_two


#: what the metrics' bucket tables are of: evalpipe metrics, and segment scores computed elsewhere
SCORED = (Flag("-m"), Flag("--segment-scores"))
RULES = Rules(requires=(
    (Flag("--paired-n"), (Flag("--paired-bs"),), "it is the number of the paired bootstrap's resamples"),
    (Flag("--paired-ratio"), (Flag("--paired-bs"),), "it is the share of sentences a paired bootstrap resample draws"),
    (Flag("--seed"), (Flag("--paired-bs"), Flag("-m"), Flag("--segment-scores")),
     "it seeds the bootstraps, the only draws compare makes"),
    (Flag("--confidence-n"), SCORED, "it is the number of resamples of the metrics' bucket intervals"),
    (Flag("--bucket-labels"), SCORED + (Flag("--sentence-buckets"),),
     "it buckets the metrics' scores, or the sentences of --sentence-buckets by=label"),
    (Flag("--bucket-by"), SCORED, "it buckets the metrics' scores"),
    (Flag("--bucket-cutoffs"), SCORED, "they bound the buckets of the metrics' scores"),
    (Flag("--alignments"), (Flag("--source"),), "it aligns the source's words to the reference's"),
    (Flag("--source"), (Flag("--alignments"),), "the source words' analysis needs their alignments to the reference"),
    (Flag("--labels-ref"), (Flag("--word-buckets"), Flag("--ngram-labels")),
     "it labels the words of --word-buckets by=label or --ngram-labels"),
    (Flag("--ngram-labels"), (Flag("--labels-ref"),), "the n-grams compared are of the words' labels"),
    (Flag("--labels-sys"), (Flag("--labels-ref"),), "the systems' labels go with the reference's")),
    conflicts=((Flag("--freq-counts"), Flag("--freq-corpus"), "both say where word frequencies come from"),
               (Flag("--bucket-labels"), Flag("--bucket-by"), "both say how the segments are bucketed"),
               (Flag("--bucket-labels"), Flag("--bucket-cutoffs"), "labels are buckets, without cutoffs")))


#: the options of the analyses of pairs of systems (n-grams, examples): with one system they cannot act
PAIRWISE = ("--ngram-type", "--ngram-min", "--ngram-max", "--ngram-alpha", "--pairs", "--top", "--examples",
            "--examples-by", "--ngram-labels")


@click.command("compare", cls=Command, aliases={"--names": "--labels"})
@click.argument("systems", nargs=-1, type=click.Path(dir_okay=False, exists=True))
@opt.ref()
@click.option("--labels", help="LABEL1,LABEL2,...: what the systems are called, one a system (default: the file "
                               "names)")
@click.option("--top", type=click.IntRange(min=1), default=50, show_default=True,
              help="n-grams listed each way (compare-mt's report_length)")
@click.option("--examples", type=click.IntRange(min=1), default=10, show_default=True,
              help="sentences listed each way")
@click.option("--examples-by", default="sentbleu", show_default=True, metavar="MEASURE",
              help="the sentence score the examples are chosen by: sentbleu or length (compare-mt's), or any "
                   "evalpipe metric (chrf, ter, comet...; in its direction: lower TER is better)")
@click.option("--ngram-type", type=click.Choice(["match", "over", "under"]), default="match", show_default=True,
              help="n-grams compared by how often each system matches them in the reference, produces them in "
                   "excess, or misses them (compare-mt's compare_type)")
@click.option("--ngram-min", type=click.IntRange(min=1), default=1, show_default=True,
              help="shortest n-gram compared (compare-mt's min_ngram_length)")
@click.option("--ngram-max", type=click.IntRange(min=1), default=4, show_default=True,
              help="longest n-gram compared (compare-mt's max_ngram_length)")
@click.option("--ngram-alpha", type=click.FloatRange(min=0, min_open=True), default=1.0, show_default=True,
              help="smoothing of the n-grams' share (c1 + alpha) / (c1 + c2 + 2 alpha) (compare-mt's alpha)")
@click.option("--pairs", metavar="I-J[;I-J...]", default="0-1", show_default=True,
              help="the pairs of systems whose n-grams and sentences are compared, numbered from 0 in the order "
                   "given (compare-mt's compare_directions)")
@click.option("--ngram-labels", is_flag=True,
              help="compare n-grams of the words' labels (--labels-ref, --labels-sys: POS tags, say) instead of "
                   "the words (compare-mt's --compare_ngrams ref_labels=...,out_labels=...)")
@click.option("--freq-corpus", type=click.Path(dir_okay=False, exists=True), metavar="FILE",
              help="count word frequencies in this corpus (e.g. the training data) instead of the reference "
                   "(compare-mt's freq_corpus_file)")
@click.option("--freq-counts", type=click.Path(dir_okay=False, exists=True), metavar="FILE",
              help="word frequencies from WORD<TAB>COUNT lines instead of the reference (compare-mt's "
                   "freq_count_file)")
@click.option("--word-buckets", multiple=True, metavar="KEY=VALUE,...",
              help="a word-accuracy analysis with compare-mt's settings, in place of F-measure by frequency "
                   "(repeat): by=freq|case|label, accuracy=fmeas|prec|rec[+...], cutoffs=A:B:... (freq), "
                   "labels=A+B+... (label: the labels with a bucket; the rest are 'other')")
@click.option("--labels-ref", type=click.Path(dir_okay=False, exists=True), metavar="FILE",
              help="the reference's word labels for --word-buckets by=label or --ngram-labels (a line a segment, "
                   "a label a word)")
@click.option("--labels-sys", multiple=True, type=click.Path(dir_okay=False, exists=True), metavar="FILE",
              help="a system's word labels, as --labels-ref (repeat: one a system, in order)")
@click.option("--source", "source_file", type=click.Path(dir_okay=False, exists=True),
              help="the source text: with --alignments, how many source words of each frequency the systems "
                   "translate (compare-mt's --compare_src_word_accuracies)")
@click.option("--alignments", type=click.Path(dir_okay=False, exists=True), metavar="FILE",
              help="source-reference word alignments: I-J pairs (positions from 0) a line, a line a segment")
@click.option("--sentence-buckets", multiple=True, metavar="KEY=VALUE,...",
              help="a sentence-bucket table with compare-mt's settings, in place of its three defaults (repeat): "
                   "by=length|lengthdiff|score|label, statistic=count|score, measure=bleu|sentbleu|length|any "
                   "evalpipe metric, cutoffs=A:B:... (increasing), labels=A+B+... (by=label: a label a segment "
                   "from --bucket-labels)")
@click.option("-lc", "--lowercase", is_flag=True,
              help="case-insensitive analyses (compare-mt's case_insensitive=True); the -m metrics and evalpipe "
                   "measures take their own -o options")
@click.option("--segment-scores", "segment_scores", multiple=True, metavar="NAME=FILE[,FILE]",
              help="segment scores computed elsewhere (COMET, MetricX; repeat), scored by bucket as the -m metrics "
                   "(their mean, an interval a bucket, tests against the first system; with --paired-bs resampled "
                   "too); with two systems also the sentences where each is furthest ahead by them; comet-score's "
                   "output or a seg.score file naming the systems, or one file a system; "
                   "-o NAME.direction|format|field")
@opt.metrics("also score with these evalpipe metrics (bleu chrf ter ...): each system's score by bucket of "
             "sentences, with a 95% interval a bucket and a paired test against the first system, Holm-adjusted "
             "over the buckets")
@click.option("--bucket-labels", type=click.Path(dir_okay=False, exists=True), metavar="FILE",
              help="bucket the -m metrics' scores (and --sentence-buckets by=label) by a label a segment (one a "
                   "line: domain, document, speaker...) instead of by reference length")
@click.option("--bucket-by", default="length", show_default=True, metavar="length|METRIC",
              help="bucket the -m metrics' scores by reference length, or by an evalpipe metric's sentence score "
                   "averaged over the systems (the segments it finds hard: --bucket-by comet --bucket-cutoffs "
                   "0.5:0.7)")
@click.option("--bucket-cutoffs", metavar="A:B:...",
              help="increasing bucket boundaries of --bucket-by (default for length: 10:20:30:40:50:60)")
@click.option("--confidence-n", type=click.IntRange(min=1), default=None,
              help="bootstrap resamples of the -m metrics' bucket intervals and tests (default 1000)")
@opt.metric_options("-m metrics' options and the segment scores' -o NAME.direction=higher|lower, NAME.format, "
                    "NAME.field (repeat)")
@click.option("--paired-bs", is_flag=True,
              help="compare-mt's paired bootstrap of the BLEU scores (its score_type=bleu,bootstrap=N), and of "
                   "the -m metrics' and segment scores' on the same draws: 95% intervals and which system wins, "
                   "for every pair")
@click.option("--paired-n", type=click.IntRange(min=1), default=None,
              help="resamples of the paired bootstrap (default 1000)")
@click.option("--paired-ratio", type=click.FloatRange(min=0, max=1, min_open=True), default=0.5, show_default=True,
              help="the share of the sentences each resample of the paired bootstrap draws (compare-mt's "
                   "sample_ratio)")
@opt.seed("the paired bootstrap's seed (numpy's legacy generator, as compare-mt's --seed)")
@stacked(opt.engines("segments of the -m metrics and evalpipe measures"))
@opt.demo("compare two of the shipped WMT21 en-de systems (Online-W and NVIDIA-NeMo, 300 segments)")
@opt.fmt(["text", "json"], "text")
@opt.report()
def compare(systems, ref, labels, top, examples, examples_by, ngram_type, ngram_min, ngram_max, ngram_alpha, pairs,
            ngram_labels, freq_corpus, freq_counts, word_buckets, labels_ref, labels_sys, source_file, alignments,
            sentence_buckets, lowercase, segment_scores, metric_names, bucket_labels, bucket_by, bucket_cutoffs,
            confidence_n, options, paired_bs, paired_n, paired_ratio, seed, engine, workers, spark_master, demo, fmt,
            report_file) -> None:
    """Compare SYSTEMS (one or more) against the reference (-r): compare-mt 0.2.10's analyses in its layout and
    with its numbers -- by default BLEU and length ratio, word F-measure by frequency, sentences bucketed by length,
    length difference and sentence BLEU, and for the first two systems (--pairs) the characteristic n-grams and the
    sentences that differ most; its other settings with --sentence-buckets, --word-buckets, --source; any metric
    (-m, --segment-scores) by bucket with intervals and paired tests."""
    check_rules(RULES)
    if demo:
        if systems or ref:
            raise UsageError("--demo compares two shipped systems: give no system files or reference")
        (ref,), shipped = demo_files()
        systems = tuple(next(s for s in shipped if Path(s).stem == name) for name in ("Online-W", "NVIDIA-NeMo"))
    elif not (systems and ref):
        raise UsageError("give SYSTEM... and -r/--ref FILE, or --demo")
    names = labels.split(",") if labels else [Path(system).stem for system in systems]
    if len(names) != len(systems) or not all(names):
        raise click.BadParameter(f"expected {len(systems)} labels (LABEL1,LABEL2,...: one a system), got {labels!r}",
                                 param_hint="--labels")
    if len(systems) < 2:
        pairwise = [f for f in given_flags(click.get_current_context()) if f in PAIRWISE]
        if pairwise:
            raise UsageError(f"{pairwise[0]} compares pairs of systems; one system is given")
    directions = _pairs(pairs, len(systems)) if len(systems) > 1 else []
    if ngram_min > ngram_max:
        raise click.BadParameter(f"expected at most --ngram-max ({ngram_max}), got {ngram_min}",
                                 param_hint="--ngram-min")
    texts = {path: read_lines(path) for path in (ref, *systems)}
    check_same_length(list(texts.items()))
    given = parse_key_values(options)
    scores_given = _segment_score_specs(tuple(segment_scores), given)
    settings = _settings(texts[ref], [texts[s] for s in systems], freq_counts, word_buckets, labels_ref, labels_sys,
                         source_file, alignments, sentence_buckets, lowercase, ngram_labels)
    by_label = any(spec.by == "label" for spec in settings.sentence_buckets)
    if by_label != bool(bucket_labels) and not (bucket_labels and (metric_names or scores_given)):
        raise UsageError("--sentence-buckets by=label reads a label a segment from --bucket-labels FILE" if by_label
                         else "--bucket-labels labels the segments for -m, --segment-scores or --sentence-buckets "
                              "by=label; none of them is asked")
    if by_label:
        settings = settings._replace(segment_labels=_read_bucket_labels(bucket_labels, len(texts[ref])))
    measures = sorted({spec.measure for spec in settings.sentence_buckets if spec.measure not in COMPAREMT_MEASURES
                       and (spec.by == "score" or spec.statistic == "score")}
                      | ({examples_by} if examples_by not in COMPAREMT_MEASURES else set())
                      | ({bucket_by} if bucket_by != "length" else set()))
    if examples_by == "bleu":
        raise click.BadParameter("expected a sentence score; bleu has none (compare-mt's neither): use sentbleu",
                                 param_hint="--examples-by")
    built = metric_specs(list(metric_names) + measures, given) if metric_names or measures else []
    _distinct(scores_given, [spec.name for spec in built])
    score_specs, score_values = _read_segment_scores(scores_given, systems, len(texts[ref]))
    # the metrics scored by bucket (and resampled with --paired-bs): -m's, and the segment scores computed elsewhere
    specs = [spec for spec in built if spec.name in metric_names] + score_specs
    rows = {}
    if built or score_specs:  # every metric's statistics of every segment of every system, in one pass, on the engine
        from evalpipe.engines import make_engine
        from evalpipe.scoring.compare_buckets import segment_rows

        with make_engine(engine, workers, spark_master=spark_master) as runner:
            rows = segment_rows(built + score_specs, texts[ref], [texts[s] for s in systems], runner, score_values)
    if not built and {"--engine", "--workers", "--spark-master"} & set(given_flags(click.get_current_context())):
        raise UsageError("--engine and --workers compute the statistics of the -m metrics and evalpipe measures; "
                         "none is asked")
    settings = settings._replace(metrics={spec.name: spec.build() for spec in built if spec.name in measures},
                                 examples_by=examples_by, rows=rows, sample_ratio=paired_ratio,
                                 scored={spec.name: spec.build() for spec in specs} if paired_bs else {})
    if given and not built:
        raise UsageError(f"-o {next(iter(given))}: without -m or an evalpipe measure, compare takes only the "
                         f"segment scores' -o NAME.direction, NAME.format, NAME.field")
    analyses = analyse(texts[ref], [texts[s] for s in systems], names, top, examples,
                       bootstrap=(paired_n or 1000) if paired_bs else 0, seed=seed,
                       ngrams=NgramSettings(ngram_type, ngram_min, ngram_max, ngram_alpha), pairs=directions,
                       corpus_lines=read_lines(freq_corpus) if freq_corpus else None, settings=settings)
    if len(systems) == 2:
        doc = compare_two(texts[ref], texts[systems[0]], texts[systems[1]], names, top, examples)
        doc["compare_mt"] = analyses
    else:
        doc = analyses
    doc["reference"] = ref
    if specs:
        from evalpipe.scoring.compare_buckets import metric_in_buckets

        which = _buckets(bucket_labels, bucket_by, bucket_cutoffs, texts[ref], rows, settings.metrics)
        analyses["metric_buckets"] = [dict(metric_in_buckets(
            spec.build(), texts[ref], [texts[s] for s in systems], which[0], which[1], confidence_n or 1000, seed,
            rows=rows[spec.name]), bucket_by=which[2]) for spec in specs]
        doc.setdefault("metric_buckets", analyses["metric_buckets"])
    if score_specs and len(systems) == 2:  # two systems: the scores' means, by length, and examples too
        from evalpipe.scoring.compare_systems import compare_scores

        doc["segment_scores"] = [compare_scores(spec.name, texts[ref], [texts[s] for s in systems],
                                                score_values[spec.name], spec.build().higher_is_better, examples)
                                 for spec in score_specs]
    if report_file:
        from evalpipe.report.compare_many import compare_page

        write_atomically(report_file, compare_page(doc))
    if fmt == "json":
        click.echo(json.dumps(doc, indent=1, ensure_ascii=False))
        return
    click.echo(layout(analyses))
    for table in analyses.get("metric_buckets", []):
        click.echo(metric_buckets_text(table, names))
    if doc.get("segment_scores"):
        click.echo(scores_text(doc, names))


def _pair(x: float, y: float, empty: bool, digits: int) -> str:
    return "-/-" if empty else f"{x:.{digits}f}/{y:.{digits}f}"


def _pairs(text: str, count: int) -> list:
    """``I-J;I-J`` (compare-mt's compare_directions): pairs of distinct systems numbered from 0; with one system
    there is no pair to compare, and asking for one is refused."""
    found = []
    for part in text.split(";"):
        left, _, right = part.partition("-")
        if not (left.strip().isdigit() and right.strip().isdigit()):
            raise click.BadParameter(f"expected I-J[;I-J...] with system numbers from 0, got {text!r}",
                                     param_hint="--pairs")
        i, j = int(left), int(right)
        if count >= 2 and (i == j or max(i, j) >= count):
            raise click.BadParameter(f"expected two different systems among 0..{count - 1}, got {part!r}",
                                     param_hint="--pairs")
        found.append((i, j))
    return found


def _read_bucket_labels(path: str, segments: int) -> list:
    """A label a segment, each line stripped (one line naming the file, and the line, where that cannot be)."""
    found = read_lines(path)
    if len(found) != segments:
        raise InputError(f"expected one label a segment, {segments} lines as the reference has, got {len(found)}",
                         path)
    empty = next((i for i, label in enumerate(found) if not label.strip()), None)
    if empty is not None:
        raise InputError("expected a label, got an empty line", path, empty + 1)
    return [label.strip() for label in found]


def _read_segment_scores(scores_given: list, systems: tuple, segments: int) -> tuple:
    """``([ScoresSpec per --segment-scores], {name: [each system's scores]})``, every file read and matched to the
    systems here."""
    from evalpipe.registry import ScoresSpec
    from evalpipe.score_files import scores_for_systems

    specs, values = [], {}
    for name, paths, own in scores_given:
        specs.append(ScoresSpec.of(name, own))
        found = scores_for_systems(name, paths, list(systems), segments, own.get("format", "auto"), own.get("field"))
        values[name] = [found[s] for s in systems]
    return specs, values


def _settings(ref_lines: list, outs_lines: list, freq_counts, word_buckets, labels_ref, labels_sys, source_file,
              alignments, sentence_buckets, lowercase, ngram_labels) -> Settings:
    """compare-mt's other analyses and settings from their options, every file read and checked here."""
    from evalpipe.scoring import compare_sentences, compare_words

    words = [compare_words.parse(text) for text in word_buckets]
    by_label = any(spec.by == "label" for spec in words)
    if by_label and not labels_ref:
        raise UsageError("--word-buckets by=label reads the words' labels: give --labels-ref FILE and "
                         "--labels-sys FILE for each system")
    if labels_ref and not (by_label or ngram_labels):
        raise UsageError("--labels-ref labels words for --word-buckets by=label or --ngram-labels; neither is asked")
    ref_labels = out_labels = None
    if labels_ref:
        if len(labels_sys) != len(outs_lines):
            raise click.BadParameter(f"expected one label file a system ({len(outs_lines)}), got {len(labels_sys)}",
                                     param_hint="--labels-sys")
        ref_labels = [line.strip().split(" ") for line in read_lines(labels_ref)]
        compare_words.check_labels(ref_labels, [line.strip().split(" ") for line in ref_lines], labels_ref)
        out_labels = []
        for path, lines in zip(labels_sys, outs_lines):
            out_labels.append([line.strip().split(" ") for line in read_lines(path)])
            compare_words.check_labels(out_labels[-1], [line.strip().split(" ") for line in lines], path)
    if freq_counts and not (any(spec.by == "freq" for spec in words) or not words):
        raise UsageError("--freq-counts gives word frequencies; no analysis by frequency is asked (--word-buckets "
                         "by=freq)")
    counts = compare_words.read_counts(read_lines(freq_counts), freq_counts, lowercase) if freq_counts else None
    source = (read_lines(source_file), read_lines(alignments), alignments) if source_file else None
    if source:
        check_same_length([(source_file, source[0]), ("the reference", ref_lines)])
    return Settings(tuple(compare_sentences.parse(text) for text in sentence_buckets), tuple(words), counts,
                    ref_labels, out_labels, source, {}, lowercase,
                    ngram_label_files=(labels_ref, list(labels_sys)) if ngram_labels else None)


def _buckets(labels_file: Optional[str], bucket_by: str, cutoffs_text: Optional[str], ref_lines: list, rows: dict,
             metrics: dict) -> tuple:
    """The -m metrics' buckets ``(labels, bucket of each segment, what they are by)``: by the label file's line a
    segment, by reference length, or by a metric's sentence score averaged over the systems."""
    from evalpipe.scoring.compare_buckets import label_buckets, length_buckets, score_buckets
    from evalpipe.scoring.compare_sentences import parse_cutoffs

    cutoffs = parse_cutoffs(cutoffs_text, "--bucket-cutoffs") if cutoffs_text else None
    if labels_file:
        return (*label_buckets(_read_bucket_labels(labels_file, len(ref_lines))), labels_file)
    if bucket_by == "length":
        return (*length_buckets(ref_lines, cutoffs), "length")
    if cutoffs is None:
        raise UsageError(f"--bucket-by {bucket_by} needs --bucket-cutoffs A:B:... on the metric's own scale")
    metric = metrics[bucket_by]
    scores = [[metric.score(row) for row in system] for system in rows[bucket_by]]
    return (*score_buckets(scores, cutoffs), f"{bucket_by} (mean over the systems)")


def scores_text(doc: dict, names: list) -> str:
    """The segment scores' analyses of two systems as text: each system's mean, the means by reference length (a
    bucket without scored sentences shows ``-/-``), the sentences where each is furthest ahead."""
    a, b = names
    out = []
    for scores in doc["segment_scores"]:
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
