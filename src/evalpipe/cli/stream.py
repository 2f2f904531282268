"""``evalpipe stream``: evaluation of unsegmented (long-form) simultaneous translation streams."""
from __future__ import annotations

import io
import json
from pathlib import Path

import click

from evalpipe import __version__
from evalpipe.cli import options as opt
from evalpipe.cli.base import Command, Flag, Group, Rules, check_rules, setup_logging, stacked
from evalpipe.corpus import open_binary, read_lines
from evalpipe.engines import make_engine
from evalpipe.errors import UsageError
from evalpipe.evaluators.formulas import stream_latency as S
from evalpipe.protocol.codec import decode_line
from evalpipe.registry import metric_specs, parse_key_values
from evalpipe.scoring.results import to_json, to_metric_table


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
@opt.fmt(["text", "json"], "text")
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


#: flags of earlier releases, accepted for one more release with a warning
ALIASES = {"--reference": "--ref"}


def _score_rules() -> Rules:
    """stream score's options that cannot act together, and those that act only beside another."""
    F = Flag
    jsonl = F("--hypothesis-format", ("jsonl",))
    return Rules(
        conflicts=((F("-w"), F("-f", ("json",)), "json carries every digit"),
                   (F("--lang"), F("--resegmenter", ("mweralign",)), "--lang is OmniSTEval's Moses tokenization"),
                   (F("--eval-config"), F("--hypothesis-format", ("jsonl", "text")), "it configures simulstream logs")),
        requires=(*((F(flag), (jsonl,), "it reads SimulEval JSONL") for flag in
                    ("--emission-cu-key", "--emission-ca-key", "--fix-simuleval-emission-ca")),
                  (F("--confidence-n"), (F("--confidence"),), "it is the number of bootstrap resamples"),
                  (F("--seed"), (F("--confidence"), F("--paired-bs")), "it seeds resampling, and nothing is resampled")))


SCORE_RULES = _score_rules()


@stream_group.command("score", cls=Command, aliases=ALIASES)
@click.option("--log-file", "log_files", required=True, multiple=True, type=click.Path(dir_okay=False),
              help="a simulstream metrics.jsonl log, or a hypothesis file in --hypothesis-format "
                   "(repeat to compare systems on the same talks)")
@click.option("--hypothesis-format", type=click.Choice(["simulstream", "jsonl", "text"]), default="simulstream",
              show_default=True, help="simulstream log; SimulEval JSONL (one line a talk, times in ms); "
                                      "text (one line a talk, with --text-segmentation; quality only)")
@click.option("-a", "--audio-definition", type=click.Path(dir_okay=False),
              help="YAML (or JSON) list of wav, offset and duration, one entry per reference line")
@click.option("--text-segmentation", type=click.Path(dir_okay=False),
              help="docid=D,segid=S per reference line, for --hypothesis-format text (OmniSTEval's)")
@click.option("--emission-cu-key", default="delays", show_default=True, help="JSONL key of the ideal times")
@click.option("--emission-ca-key", default="elapsed", show_default=True,
              help="JSONL key of the computation-aware times")
@click.option("--fix-simuleval-emission-ca", is_flag=True,
              help="JSONL: make SimulEval's cumulative elapsed times incremental (OmniSTEval's flag)")
@opt.ref("the reference sentences, one a line", required=True)
@click.option("--eval-config", type=click.Path(dir_okay=False),
              help="simulstream eval config (detokenizer_type: simuleval, latency_unit word/char/spm); "
                   "default: tokens joined with spaces")
@click.option("--latency-unit", type=click.Choice(["word", "char"]), default="word", show_default=True,
              help="units of latency, erasure and realignment")
@click.option("--resegmenter", type=click.Choice(["omnisteval", "mweralign"]), default="omnisteval",
              show_default=True, help="realign as OmniSTEval 0.1.10 or as simulstream 1.0.0 (mweralign, extra)")
@click.option("--lang", default=None, help="OmniSTEval's Moses tokenization language (omnisteval resegmenter)")
@opt.metrics("metric: several after one flag or repeated; default: what the resegmenter's anchor reports")
@opt.metric_options()
@click.option("--segment-scores", "segment_scores", multiple=True, metavar="NAME=FILE[,FILE...]",
              help="scores of the realigned sentences computed elsewhere (COMET on OmniSTEval's resegmented output), "
                   "one a reference line, as one more metric NAME (repeat): one file a log in their order, or one "
                   "file naming the logs (comet-score's output); -o NAME.direction|format|field")
@stacked(opt.confidence("talks"))
@click.option("--paired-bs", is_flag=True, help="paired bootstrap over talks against the first log")
@opt.seed()
@opt.fmt(["table", "json"], "table")
@opt.width()
@stacked(opt.engines("talks"))
@opt.verbose()
def score_command(log_files, hypothesis_format, audio_definition, text_segmentation, emission_cu_key, emission_ca_key,
                  fix_simuleval_emission_ca, ref, eval_config, latency_unit, resegmenter, lang, metric_names,
                  options, segment_scores, confidence, confidence_n, paired_bs, seed, fmt, width, engine, workers,
                  spark_master, verbose) -> None:
    """Score long-form streaming logs: rebuild each talk, realign it to the references, and score
    quality and latency per realigned sentence (and erasure and speed per talk).

    The values equal simulstream 1.0.0's (--resegmenter mweralign; StreamLAAL in s) and
    OmniSTEval 0.1.10's (--resegmenter omnisteval; Long* latency in ms)."""
    setup_logging(verbose)
    check_rules(SCORE_RULES)
    jsonl = {"cu_key": emission_cu_key, "ca_key": emission_ca_key, "fix_ca": fix_simuleval_emission_ca}
    _score(log_files, audio_definition, ref, eval_config, latency_unit, resegmenter, lang, metric_names,
           options, confidence_n if confidence else 0, paired_bs, seed, fmt, width, engine, workers, spark_master,
           hypothesis_format, text_segmentation, jsonl, segment_scores=segment_scores)


def _score(log_files, audio_definition, reference, eval_config, latency_unit, resegmenter, lang, metric_names,
           options, confidence, paired, seed, fmt, width, engine, workers, spark_master, hypothesis_format="simulstream",
           text_segmentation=None, jsonl=None, labels=None, segment_scores=()) -> None:
    from evalpipe.cli.score_corpus import _distinct, _segment_score_specs
    from evalpipe.scoring.talks import DEFAULT_METRICS, score_talks
    from evalpipe.stream import files

    default = DEFAULT_METRICS[resegmenter] if hypothesis_format != "text" else ("bleu", "chrf")
    given = parse_key_values(options)
    scores_given = _segment_score_specs(tuple(segment_scores), given)
    _distinct(scores_given, list(metric_names or default))
    specs = metric_specs(metric_names or default, given)
    for spec in specs:
        spec.build()  # an unknown metric or option fails before any reading
    if (hypothesis_format == "text") != bool(text_segmentation) or (hypothesis_format != "text") != bool(audio_definition):
        raise UsageError("give --audio-definition, or --text-segmentation with --hypothesis-format text")
    if hypothesis_format == "text":
        systems = []
        for path in log_files:
            refs, talks = files.text_talks(path, text_segmentation, reference, latency_unit, resegmenter, lang)
            systems.append((path, talks))
    else:
        refs = files.read_references(audio_definition, reference)
        if hypothesis_format == "jsonl":
            systems = [(path, files.simuleval_talks(path, refs, latency_unit, resegmenter, lang, **(jsonl or {})))
                       for path in log_files]
        else:
            detokenizer = files.read_eval_config(eval_config)
            systems = [(path, files.iter_talks(path, refs, detokenizer, latency_unit, resegmenter, lang))
                       for path in log_files]
    settings = {"reseg": resegmenter, "unit": latency_unit, "lang": lang if resegmenter == "omnisteval" else None}
    if labels:  # (a log that will not outlive the command is not named by its path)
        systems = [(label, talks) for label, (_, talks) in zip(labels, systems)]
    scores, table, sizes = [], {}, [len(sentences) for sentences in refs.values()]
    if scores_given:
        from evalpipe.registry import ScoresSpec
        from evalpipe.score_files import scores_for_systems

        for name, paths, own in scores_given:
            spec = ScoresSpec.of(name, own)
            found = scores_for_systems(name, paths, [system for system, _ in systems], sum(sizes),
                                       own.get("format", "auto"), own.get("field"))
            table.update({(system, name): values for system, values in found.items()})
            scores.append(spec)
    with make_engine(engine, workers, spark_master=spark_master) as runner:
        results, header = score_talks(systems, specs, runner, confidence, paired, seed, settings, scores, table, sizes)
    header = {"evalpipe_version": __version__, "log_files": list(log_files), "reference": reference,
              "audio_definition": audio_definition, "sentences": sum(map(len, refs.values())), **header}
    click.echo(to_json(results, header) if fmt == "json" else to_metric_table(results, width))


@stream_group.command("run", cls=Command, aliases={**ALIASES, "-o": "--agent-option", "--option": "--agent-option",
                                                    "--log-file": "--output"})
@click.option("--source", "source_file", type=click.Path(dir_okay=False, exists=True),
              help="text run: the source sentences of every talk, one a line (words arrive evenly over each sentence)")
@click.option("--audio", is_flag=True,
              help="audio run: the agent hears each talk's recording (the audio definition's wav, relative to its "
                   "folder) in chunks with timestamps; with --demo, stand-in recordings are made for the demo talks")
@click.option("-a", "--audio-definition", type=click.Path(dir_okay=False, exists=True),
              help="YAML (or JSON) list of wav, offset and duration, one entry per source sentence")
@opt.ref("reference sentences: score the log once written")
@click.option("--agent", default="replay", show_default=True,
              help="an evalpipe.longform_agents plugin or module:Class")
@opt.agent_options()
@click.option("--chunk", type=click.FloatRange(min=0, min_open=True), default=1.0, show_default=True,
              help="seconds of a talk's clock between steps")
@opt.output("where the simulstream-format log goes (default: stream-run.jsonl; with --demo, a temporary "
            "file removed at the end unless --output is given)")
@opt.demo("the shipped demo: two WMT21 TED talks, Online-W replayed with Nemo's drafts retracted")
@opt.fmt(["table", "json"], "table")
@opt.verbose()
def run_command(source_file, audio, audio_definition, ref, agent, agent_options, chunk, output, demo, fmt,
                verbose) -> None:
    """Run a long-form agent over whole talks (their text word by word, or with --audio their recordings),
    write a simulstream-format log, and (with -r, or --demo) score it with OmniSTEval's metrics."""
    import tempfile
    from importlib import resources

    from evalpipe.corpus import write_atomically
    from evalpipe.stream import audio as recordings
    from evalpipe.stream.agent import load_agent
    from evalpipe.stream.files import read_references, read_segments
    from evalpipe.stream.run import run_talk

    setup_logging(verbose)
    settings = parse_key_values(agent_options, "--agent-option")
    with tempfile.TemporaryDirectory(prefix="evalpipe-stream-") as scratch:  # removed however the run ends
        work = Path(scratch)
        if demo:
            if source_file or audio_definition or ref:
                raise UsageError("--demo brings its own source, audio definition and reference")
            folder = resources.files("evalpipe").joinpath("demo", "longform")
            source_file, audio_definition = str(folder / "source.en"), str(folder / "audio.json")
            ref = str(folder / "reference.de")
            settings = {"hypothesis": str(folder / "online-w.de"), "drafts": str(folder / "nemo.de"), "lag": "2",
                        "retract": "0.25", **settings}
            if audio:  # stand-in recordings beside a copy of the audio definition
                for name, refs in read_references(audio_definition, source_file).items():
                    recordings.synthesize(work / f"{name}.wav", [(r.content, r) for r in refs])
                write_atomically(str(work / "audio.json"), Path(audio_definition).read_text(encoding="utf-8"))
                audio_definition = str(work / "audio.json")
        if not audio_definition or bool(source_file) == audio and not demo:
            raise UsageError("give --audio-definition with either --source (text) or --audio (recordings), or --demo")
        log_file = output or (str(work / "metrics.jsonl") if demo else "stream-run.jsonl")
        talks = read_segments(audio_definition) if audio else read_references(audio_definition, source_file, "source")
        wavs = recordings.talk_wavs(audio_definition) if audio else {}
        runner = load_agent(agent, settings)
        lines = io.StringIO()
        steps = sum(run_talk(runner, name, ident, [(r.content, r) for r in refs], chunk, lines,
                             recordings.read_wav(str(wavs[name])) if audio else None)
                    for ident, (name, refs) in enumerate(talks.items()))
        write_atomically(log_file, lines.getvalue())
        kept = log_file if output or not demo else "a temporary log, removed at the end (--output keeps it)"
        click.echo(f"{len(talks)} talk(s), {steps} steps ({'audio' if audio else 'text'}): {kept}", err=True)
        if ref:
            from evalpipe.scoring.talks import DEFAULT_METRICS

            metrics = DEFAULT_METRICS["omnisteval"] + ("normalized_erasure", "real_time_factor")
            _score([log_file], audio_definition, ref, None, "word", "omnisteval", None, metrics, (), 0, False,
                   opt.DEFAULT_SEED, fmt, opt.DEFAULT_WIDTH, "local", None, "local[2]",
                   labels=None if output or not demo else ["demo (Online-W replayed)"])
