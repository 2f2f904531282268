"""``evalpipe meta-eval``: correlations of metrics with human scores in the MTME layout."""
from __future__ import annotations

import json
import math
import os
import re
import sys
from typing import Dict, List, Optional, Sequence

import click

from evalpipe.cli import options as opt
from evalpipe.cli.base import Flag, Group, Rules, check_rules, comma_list, given_flags, stacked
from evalpipe.cli.meta_options import MODE, root_option
from evalpipe.corpus import write_atomically
from evalpipe.errors import InputError, UsageError
from evalpipe.meta.correlation import average_correlation, chance_accuracy
from evalpipe.meta.evalset import LEVELS, EvalSet, list_sets, parse_score_lines, read_score_file
from evalpipe.registry import ScoresSpec, metric_specs, parse_key_values

set_options = stacked([
    root_option,
    click.option("--test-set", "test_set", required=True, help="test set name, e.g. wmt21.news"),
    opt.language_pair("language pair, e.g. en-de", required=True),
])

pooled_set_options = stacked([
    root_option,
    click.option("--test-set", "test_set", required=True, help="test set name, e.g. wmt21.news"),
    opt.language_pair("language pair, e.g. en-de; several separated by commas (en-de,zh-en) pool system-level "
                      "accuracy over them (MTME's global accuracy, --statistic accuracy)", required=True, several=True),
])

#: flags of earlier releases, accepted for one more release with a warning
ALIASES = {"--lp": "--language-pair"}
corr_options = stacked([
    click.option("--human", default="mqm", show_default=True, help="human score name"),
    click.option("--level", type=click.Choice(LEVELS), default=None, help="level (default: detected or sys)"),
    click.option("--average", type=click.Choice(["none", "sys", "item"]), default="none", show_default=True,
                 help="none: one correlation over all scores; sys / item: one per system / item, averaged"),
    click.option("--statistic", type=click.Choice(["pearson", "spearman", "kendall", "accuracy"]),
                 default="pearson", show_default=True, help="the correlation statistic"),
    click.option("--variant", type=click.Choice(["b", "c", "23", "acc23"]), default="b", show_default=True,
                 help="Kendall variant"),
    click.option("--epsilon", type=float, default=0.0, show_default=True, help="metric tie threshold (Kendall)"),
    click.option("--include-human", is_flag=True,
                 help="also correlate the human translations scored as systems (refB, refC, ...; MTME's human "
                      "flag); the reference a metric used stays out"),
    opt.fmt(["text", "json"], "text"),
    click.option("--min-systems", type=click.IntRange(min=2), default=3, show_default=True,
                 help="fewest systems a correlation is computed over; fewer is an error (2 allows a pair)"),
])


def _rules(command: str) -> Rules:
    """The meta-eval commands' options that act only beside another, and those that cannot act together."""
    F = Flag
    kendall, pairwise = F("--statistic", ("kendall",)), F("--test", ("pairwise",))
    if command == "compare":
        other_tests = F("--test", ("bootstrap", "pairwise"))
        return Rules(
            conflicts=((F("--spa"), F("--pdp"), "choose one of SPA and PDP"),
                       (F("--spa"), F("--statistic"), "SPA is its own statistic"),
                       (F("--spa"), F("--average"), "SPA compares systems over all segments at once"),
                       (F("--spa"), other_tests, "SPA is compared with its permutation test"),
                       (F("--pdp"), F("--statistic", ("spearman", "kendall", "accuracy")), "PDP is a Pearson correlation"),
                       (F("--pdp"), other_tests, "PDP is compared with the permutation test"),
                       (F("--epsilon"), pairwise, "the pairwise test takes --epsilon1 and --epsilon2"),
                       (F("--k-block"), F("--test", ("bootstrap",)), "--test bootstrap draws all its trials"),
                       (F("--mode"), F("--test", ("bootstrap",)), "the bootstrap test has one way of drawing")),
            requires=((F("--variant"), (kendall, pairwise), "it is Kendall's variant"),
                      (F("--epsilon"), (kendall,), "it is Kendall's metric tie threshold"),
                      *((F(flag), (pairwise,), "it belongs to the pair-swapping test")
                        for flag in ("--epsilon1", "--epsilon2", "--sample-rate"))))
    requires = [(F("--variant"), (kendall,), "it is Kendall's variant"),
                (F("--epsilon"), (kendall,), "it is Kendall's metric tie threshold")]
    if command == "correlate":
        requires.append((F("--sample-rate"), (F("--tie-calibration"),), "it samples the pairs of tie calibration"))
        not_pearson = F("--statistic", ("spearman", "kendall", "accuracy"))
        return Rules(conflicts=((F("--epsilon"), F("--tie-calibration"), "tie calibration finds the threshold"),
                                (F("--pdp"), not_pearson, "PDP is a Pearson correlation (MTME supports no other)"),
                                (F("--pdp"), F("--tie-calibration"), "PDP is a Pearson correlation"),
                                (F("--spa"), F("--pdp"), "choose one of SPA and PDP"),
                                (F("--spa"), F("--tie-calibration"), "SPA compares p-values, not Kendall's tau"),
                                (F("--spa"), F("--statistic"), "SPA is its own statistic"),
                                (F("--spa"), F("--average"), "SPA compares systems over all segments at once")),
                     requires=tuple(requires))
    if command == "matrix":
        return Rules(conflicts=((F("--spa"), F("--statistic"), "SPA is its own statistic"),
                                (F("--spa"), F("--average"), "SPA compares systems over all segments at once")),
                     requires=tuple(requires))
    return Rules(requires=tuple(requires))


RULES = {command: _rules(command) for command in ("correlate", "compare", "matrix")}


def _stat_options(statistic, variant, epsilon):
    return {"variant": variant, "epsilon": epsilon} if statistic == "kendall" else {}


def _vectors(evs: EvalSet, human: str, level: str, metric_scores: Dict[str, List[float]], include_human: bool,
             used_refs: Sequence[str] = (), min_systems: int = 3):
    """(the systems correlated, their human scores end to end).  Human translations scored as systems
    (outputs named like a reference) are left out unless ``include_human``; the references the metric
    used always are.  A mismatch between the metric's and the human systems is a warning on stderr;
    fewer than ``min_systems`` systems an error."""
    gold = evs.Scores(level, human)
    if gold is None:
        names = sorted(n for n in evs.human_score_names if evs.Scores(level, n))
        raise InputError(f"no {human!r} human scores at level {level} in {evs.dir} {evs.lp}; available: {names}")
    left_out = set(used_refs) | (set() if include_human else set(evs.refs))
    rated = [s for s in evs.human_sys_names(human, level) if s not in left_out]
    if include_human and not any(s in evs.refs and s in metric_scores for s in rated):
        others = ", ".join(sorted(set(evs.refs) - set(used_refs))) or "none besides the references the metric uses"
        raise UsageError(f"--include-human: no human translation ({others}) has both {human} and metric scores at "
                         f"level {level}: there is none to include")
    systems = [s for s in rated if s in metric_scores]
    missing = sorted(set(rated) - set(systems))
    if missing:  # (systems the humans did not rate are left out silently: WMT rates a subset)
        _warn(f"the metric's and the human systems differ: no metric score for {', '.join(missing)} "
              f"({len(systems)} of the {len(rated)} systems with {human} scores are correlated)")
    if len(systems) < min_systems:
        raise UsageError(f"{len(systems)} system(s) have both {human} and metric scores at level {level} "
                         f"({', '.join(systems) or 'none'}): a correlation needs at least {min_systems} "
                         f"(--min-systems {max(2, len(systems))} allows {'this' if len(systems) >= 2 else 'two'})")
    g = [v for s in systems for v in gold[s]]
    return systems, g


def _check_average(level: str, average: str) -> None:
    """``--average sys|item`` averages rows of several scores: at the system level a system has one score, so it
    cannot act (item would equal none, sys would leave no row)."""
    if level == "sys" and average != "none":
        raise UsageError(f"--average {average} acts on segment- or document-level scores: at the system level each "
                         f"system has one score (give --level seg, or no --average)")


def _warn(message: str) -> None:
    click.echo(f"Warning: {message}", err=True)


def _used_refs(evs: EvalSet, *metric_names: str) -> List[str]:
    """The references named by metric names of MTME's form METRIC-REF (chrf-refA: refA)."""
    return [name.rpartition("-")[2] for name in metric_names if name.rpartition("-")[2] in evs.refs]


@click.group("meta-eval", cls=Group)
def meta_eval_group() -> None:
    """Meta-evaluation of metrics against human judgments (MTME layout)."""


@meta_eval_group.command("list")
@root_option
def list_command(root) -> None:
    """List test sets and their language pairs."""
    sets = list_sets(root)
    if not sets:
        raise UsageError(f"no test sets in the MTME layout under {root} (expected NAME/sources/SRC-TGT.txt)")
    for name, lps in sets.items():
        click.echo(f"{name}\t{' '.join(lps)}")


@meta_eval_group.command("echo", aliases=ALIASES)
@set_options
@click.argument("what", type=click.Choice(["src", "ref", "sys", "docs", "scores", "systems", "metrics", "metadata"]))
@click.option("--name", help="the reference, system or scorer to print (ref, sys, scores, metadata)")
@click.option("--level", type=click.Choice(LEVELS), default="sys", show_default=True, help="level of scores")
def echo_command(root, test_set, language_pair, what, name, level) -> None:
    """Print texts, documents, names or scores of a test set."""
    evs = EvalSet(root, test_set, language_pair)
    if what == "src":
        lines = evs.src
    elif what in ("ref", "sys"):
        table = evs.refs if what == "ref" else evs.sys_outputs
        if name not in table:
            raise UsageError(f"--name: expected one of {', '.join(sorted(table))}, got {name!r}")
        lines = table[name]
    elif what == "docs":
        lines = [f"{d}\t{doc}" for d, doc in zip(evs.domain_per_seg, evs.doc_per_seg)]
    elif what == "systems":
        lines = sorted(evs.sys_outputs)
    elif what == "metadata":
        if not name:
            raise UsageError("echo metadata needs --name SYSTEM")
        lines = [json.dumps(row, ensure_ascii=False) for row in evs.metadata(name)]
    elif what == "metrics":
        lines = [f"{m}\t{' '.join(lv for lv in LEVELS if m in evs.scores[lv])}" for m in sorted(evs.metric_names)]
    else:
        scores = evs.Scores(level, name or "")
        if scores is None:
            have = ", ".join(sorted(evs.scores[level])) or "(none)"
            raise UsageError(f"--name: expected a scorer with {level} scores ({have}), got {name!r}"
                             if name else f"echo scores needs --name SCORER; at level {level}: {have}")
        lines = [f"{s}\t{v}" for s, vs in scores.items() for v in vs]
    for line in lines:
        click.echo(line)


def _detect_level(evs: EvalSet, scores: Dict[str, List[float]]) -> str:
    sizes = {len(v) for v in scores.values()}
    if len(sizes) != 1:
        raise UsageError(f"systems have different numbers of scores: {sorted(sizes)}")
    size = sizes.pop()
    for level in ("sys", "seg", "doc", "domain"):
        if evs.level_size(level) == size:
            return level
    raise UsageError(f"{size} scores per system match no level (sys 1, seg {len(evs.src)}, "
                           f"doc {len(evs.docs)}, domain {len(evs.domains)})")


@meta_eval_group.command("correlate", aliases=ALIASES)
@set_options
@corr_options
@click.option("--scores", "scores_file", type=click.Path(dir_okay=False), default="-",
              help="metric scores as SYSTEM SCORE lines (default: stdin)")
@click.option("--tie-calibration", is_flag=True,
              help="Kendall 23/acc23 with the metric tie threshold optimized (MTME's KendallWithTiesOpt)")
@click.option("--sample-rate", type=click.FloatRange(0, 1, min_open=True), default=1.0, show_default=True, help="pair sampling for --tie-calibration")
@click.option("--pdp", is_flag=True,
              help="pairwise difference Pearson (MTME's Pearson(pdp=True)): Pearson's r of every pair's score "
                   "differences within each row (--average item: per item, between systems)")
@click.option("--spa", is_flag=True,
              help="soft pairwise accuracy (MTME's pce): agreement of the humans' and the metric's pairwise p-values, "
                   "each from a paired permutation test over segments (segment-level scores; MTME's 1000 trials, "
                   "seed 4)")
def correlate_command(root, test_set, language_pair, human, level, average, statistic, variant, epsilon,
                      include_human, fmt, min_systems, scores_file, tie_calibration, sample_rate, pdp, spa):
    """Correlate metric scores (stdin, granularity detected) with human scores."""
    check_rules(RULES["correlate"])
    evs = EvalSet(root, test_set, language_pair)
    where = "<stdin>" if scores_file == "-" else scores_file
    scores = parse_score_lines(sys.stdin.read().splitlines(), where) if scores_file == "-" else \
        read_score_file(scores_file)
    if not scores:
        raise InputError("holds no SYSTEM SCORE lines", where)
    known = set(evs.sys_outputs) | set(evs.refs) | {s for scorer in evs.scores["sys"] for s in evs.scores["sys"][scorer]}
    strangers = sorted(set(scores) - known)
    if strangers:
        raise InputError(f"scores for systems that {test_set} {language_pair} does not have: {', '.join(strangers[:8])}"
                         f"{' ...' if len(strangers) > 8 else ''} (is the file for another language pair?)", where)
    found = _detect_level(evs, scores)
    size = len(next(iter(scores.values())))
    if level and evs.level_size(level) != size:
        raise InputError(f"--level {level} expects {evs.level_size(level)} scores a system; the file holds {size} a "
                         f"system, {found}-level scores (give --level {found}, or no --level)", where)
    level = level or found
    _check_average(level, average)
    stem = os.path.basename(scores_file).split(".")[0] if scores_file != "-" else ""
    systems, gold = _vectors(evs, human, level, scores, include_human, _used_refs(evs, stem), min_systems)
    metric = [v for s in systems for v in scores[s]]
    doc = {"test_set": test_set, "lp": language_pair, "human": human, "level": level, "average_by": average,
           "statistic": statistic, "systems": systems}
    if spa:
        if level != "seg":
            raise UsageError(f"--spa tests systems over their segment scores: give segment-level scores (got {level})")
        from evalpipe.meta.spa import coins, pairwise_p_values, soft_pairwise_accuracy, split_rows

        value = soft_pairwise_accuracy(gold, metric, len(systems))
        g, m = split_rows(gold, metric, len(systems))
        signs = coins(g.shape[1])
        doc.update(statistic="spa", permutations=len(signs),
                   p_values={"human": _matrix_json(pairwise_p_values(g, signs)),
                             "metric": _matrix_json(pairwise_p_values(m, signs))})
    elif pdp:
        from evalpipe.meta.correlation import pairwise_difference_pearson

        value, doc["rows_averaged"] = pairwise_difference_pearson(gold, metric, len(systems), average)
        doc["pdp"] = True
    elif tie_calibration:
        if statistic != "kendall" or variant not in ("23", "acc23"):
            raise UsageError("--tie-calibration needs --statistic kendall --variant 23 or acc23")
        from evalpipe.meta.correlation import kendall_with_ties_opt

        value, doc["epsilon"] = kendall_with_ties_opt(gold, metric, len(systems), average, variant, sample_rate)
    else:
        value, doc["rows_averaged"] = average_correlation(gold, metric, len(systems), average, statistic,
                                                          **_stat_options(statistic, variant, epsilon))
    undefined = doc.get("rows_averaged") == 0 or value is None or math.isnan(value)
    doc["correlation"] = None if undefined else value
    if undefined:
        from evalpipe.meta.correlation import undefined_reason

        doc["undefined"] = undefined_reason(gold, metric)
    if statistic in ("accuracy",) or (statistic == "kendall" and variant == "acc23"):
        doc["chance"] = chance_accuracy(gold)
    shown = f"undefined ({doc['undefined']})" if undefined else f"{value:.4f}"
    click.echo(json.dumps(doc, indent=1) if fmt == "json" else
               f"{'SPA' if spa else 'PDP' if pdp else statistic} ({level}, average {average}) = {shown} over "
               f"{len(systems)} systems"
               + (f"; chance {doc['chance']:.4f}" if "chance" in doc else ""))


def _matrix_json(matrix) -> List[List[Optional[float]]]:
    """A p-value matrix as JSON (null where undefined: the diagonal and the lower triangle)."""
    return [[None if v != v else float(v) for v in row] for row in matrix]


def _metric_scores(evs: EvalSet, level: str, name: str) -> Dict[str, List[float]]:
    scores = evs.Scores(level, name)
    if scores is None:
        have = sorted(m for m in evs.metric_names if m in evs.scores[level])
        raise UsageError(f"no metric {name!r} at level {level}; available: {have}")
    return scores


TRIALS = click.option("-k", "--trials", type=click.IntRange(min=1), default=1000, show_default=True,
                      help="resampling trials of the significance test")
K_BLOCK = click.option("--k-block", "k_block", type=click.IntRange(min=1), default=None,
                       help="permutation tests may stop early at every multiple of this many trials, as MTME's "
                            "k_block (default 1000, MTME's command line and CompareMetrics; its tasks.Task uses 100)")
MTME_K_BLOCK = 1000


@meta_eval_group.command("compare", aliases=ALIASES)
@set_options
@corr_options
@click.argument("metric1")
@click.argument("metric2")
@TRIALS
@opt.seed("random seed of the test's draws")
@MODE
@K_BLOCK
@click.option("--test", "test_kind", type=click.Choice(["permutation", "bootstrap", "pairwise"]),
              default="permutation", show_default=True,
              help="pairwise: MTME's PairwisePermutationSigDiff (WMT23), pair outcomes swapped, Kendall variants")
@click.option("--epsilon1", type=float, default=None, help="--test pairwise: METRIC1's tie threshold (default: calibrated)")
@click.option("--epsilon2", type=float, default=None, help="--test pairwise: METRIC2's tie threshold (default: calibrated)")
@click.option("--sample-rate", type=click.FloatRange(0, 1, min_open=True), default=1.0, show_default=True,
              help="--test pairwise: pair sampling of the tie calibration")
@click.option("--spa", is_flag=True,
              help="compare soft pairwise accuracy (segment-level scores): MTME's PERM-BOTH test with SPA as the "
                   "statistic, as meta-eval matrix --spa")
@click.option("--pdp", is_flag=True,
              help="compare pairwise difference Pearson (MTME's Pearson(pdp=True)): the PERM-BOTH test with PDP as the "
                   "statistic, drawn trial by trial from MTME's legacy stream")
def compare_command(root, test_set, language_pair, human, level, average, statistic, variant, epsilon, include_human,
                    fmt, min_systems, metric1, metric2, trials, seed, mode, k_block, test_kind, epsilon1, epsilon2,
                    sample_rate, spa, pdp):
    """Is METRIC2's correlation significantly higher than METRIC1's? (PERM-BOTH permutation test, bootstrap, or
    the pair-swapping permutation test of Kendall-like correlations)"""
    from evalpipe.meta.significance import bootstrap_test, permutation_test

    check_rules(RULES["compare"])
    k_block = k_block or MTME_K_BLOCK
    evs = EvalSet(root, test_set, language_pair)
    level = level or ("seg" if spa else "sys")
    if spa and level != "seg":
        raise UsageError(f"--spa tests systems over their segment scores: give --level seg (got {level})")
    _check_average(level, average)
    s1, s2 = _metric_scores(evs, level, metric1), _metric_scores(evs, level, metric2)
    systems, gold = _vectors(evs, human, level, {s: v for s, v in s1.items() if s in s2}, include_human,
                             _used_refs(evs, metric1, metric2), min_systems)
    v1 = [v for s in systems for v in s1[s]]
    v2 = [v for s in systems for v in s2[s]]
    opts = _stat_options(statistic, variant, epsilon)
    if test_kind != "pairwise" and not (spa or pdp):
        from evalpipe.meta.correlation import undefined_reason

        corr = [average_correlation(gold, v, len(systems), average, statistic, **opts) for v in (v1, v2)]
        for name, v, (_, rows) in zip((metric1, metric2), (v1, v2), corr):
            why = "" if rows else undefined_reason(gold, v)
            if why and why != "NaN scores":  # (a NaN is named by the test itself, row and all)
                raise InputError(f"{name}: its {statistic} correlation is undefined ({why}): there is nothing to "
                                 f"compare")
        corr = [c for c, _ in corr]
    if spa or pdp:
        result, corr = _compare_spa_or_pdp(gold, v1, v2, len(systems), average, spa, trials, seed, mode, k_block)
        statistic = "spa" if spa else "pdp"
    elif test_kind == "pairwise":
        from evalpipe.meta.pairwise_permutation import pairwise_permutation_test

        if "--variant" not in given_flags(click.get_current_context()):
            variant = "23"  # the pairwise test's own (WMT23's), unless another was typed
        variant = "acc23" if statistic == "accuracy" else variant
        if variant == "b" and (epsilon1 is None or epsilon2 is None):
            raise UsageError("--test pairwise with --variant b needs --epsilon1 and --epsilon2 "
                             "(tie calibration is defined for the 23 and acc23 variants)")
        result = pairwise_permutation_test(gold, v1, v2, len(systems), average, variant, k=trials, seed=seed, mode=mode,
                                           epsilon1=epsilon1, epsilon2=epsilon2, sample_rate=sample_rate,
                                           block_size=k_block)
        statistic = "kendall"
        corr = [result.pop("correlation1"), result.pop("correlation2")]
    elif test_kind == "bootstrap":
        result = bootstrap_test(gold, v1, v2, len(systems), average, statistic, k=trials, seed=seed, **opts)
    else:
        result = permutation_test(gold, v1, v2, len(systems), average, statistic, k=trials, seed=seed, mode=mode,
                                  block_size=k_block, **opts)
    result.update({"metric1": metric1, "metric2": metric2, "level": level, "statistic": statistic, "test": test_kind,
                   "correlation1": corr[0], "correlation2": corr[1]})
    if test_kind != "bootstrap":
        result["k_block"] = k_block
    click.echo(json.dumps(result, indent=1) if fmt == "json" else
               f"{metric1} {result['correlation1']:.4f}  {metric2} {result['correlation2']:.4f}  "
               f"delta {result['delta']:.4f}  p = {result['p_value']:.4f} ({result['trials']} trials)")


@meta_eval_group.command("matrix", aliases=ALIASES)
@pooled_set_options
@corr_options
@opt.metrics("metrics to rank: several after one flag, repeated or comma-separated (default: all at the level)",
             any_word=True)
@TRIALS
@opt.seed("random seed of the tests' draws")
@MODE
@K_BLOCK
@click.option("--threshold", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05, show_default=True,
              help="p-value below which two metrics are in different significance clusters")
@click.option("--spa", is_flag=True,
              help="rank by soft pairwise accuracy (MTME's pce tasks: segment-level scores, SPA per metric, MTME's "
                   "permutation test with SPA as the statistic)")
@opt.report()
def matrix_command(root, test_set, language_pair, human, level, average, statistic, variant, epsilon, include_human,
                   fmt, min_systems, metric_names, trials, seed, mode, k_block, threshold, spa, report_file):
    """Rank metrics by correlation with significance clusters (MTME's --matrix).

    The JSON holds the ranking, the p-value matrix and the settings; at the system level also every
    system's human and metric scores (what a report's scatter plots show)."""
    from evalpipe.meta.significance import significance_matrix

    check_rules(RULES["matrix"])
    if spa:
        if "," in language_pair:
            raise UsageError("--spa and several language pairs cannot go together: SPA is computed per language pair")
        if level not in (None, "seg"):
            raise UsageError(f"--spa reads segment-level scores (MTME's pce tasks): --level {level} cannot go with it")
        if report_file:
            raise UsageError("--report shows system-level scatter plots; SPA's matrix has none yet: give no --report")
    if "," in language_pair:
        return _pooled_matrix(root, test_set, language_pair, human, level, average, statistic, include_human, fmt,
                              min_systems, metric_names, trials, seed, mode, k_block, threshold, report_file)
    named = comma_list(metric_names, "-m")
    evs = EvalSet(root, test_set, language_pair)
    level = level or ("seg" if spa else "sys")
    _check_average(level, average)
    names = named or sorted(m for m in evs.metric_names if m in evs.scores[level])
    if not names:
        raise UsageError(f"no metric scores at level {level} in {evs.dir}")
    tables = {n: _metric_scores(evs, level, n) for n in names}
    common = set.intersection(*(set(t) for t in tables.values()))
    systems, gold = _vectors(evs, human, level, {s: None for s in common}, include_human, _used_refs(evs, *names),
                             min_systems)
    vectors = {n: [v for s in systems for v in t[s]] for n, t in tables.items()}
    k_block = k_block or MTME_K_BLOCK
    if spa:
        from evalpipe.meta import spa as soft

        result = soft.significance_matrix(gold, vectors, len(systems), k=trials, seed=seed, mode=mode,
                                          threshold=threshold, block_size=k_block)
        statistic, average = "spa", "none"
    else:
        result = significance_matrix(gold, vectors, len(systems), average, statistic, k=trials, seed=seed, mode=mode,
                                     threshold=threshold, block_size=k_block,
                                     **_stat_options(statistic, variant, epsilon))
    result.update(test_set=test_set, lp=language_pair, human=human, level=level, statistic=statistic, average_by=average,
                  threshold=threshold, trials=trials, k_block=k_block, systems=systems,
                  **({"human_scores": gold, "metric_scores": vectors} if level == "sys" else {}))
    if statistic == "kendall":
        result["variant"] = variant
    if report_file:
        from evalpipe.report import page

        write_atomically(report_file, page.meta_report(result))
    click.echo(json.dumps(result, indent=1) if fmt == "json" else _matrix_text(result))


def _compare_spa_or_pdp(gold, v1, v2, num_sys, average, spa, trials, seed, mode, k_block):
    """(the test's result, the two values) of compare --spa (MTME's SPA permutation test, as matrix --spa) or --pdp
    (PERM-BOTH with PDP as the statistic: both metrics' scores z-normalized, a coin per position swapping them,
    MTME's legacy stream trial by trial, early stopping every k_block trials)."""
    import numpy as np

    if spa:
        from evalpipe.meta.spa import permutation_test, soft_pairwise_accuracy

        values = [soft_pairwise_accuracy(gold, v, num_sys) for v in (v1, v2)]
        return permutation_test(gold, v1, v2, num_sys, k=trials, seed=seed, mode=mode, block_size=k_block), values
    from evalpipe.meta.correlation import pairwise_difference_pearson
    from evalpipe.meta.significance import mtme_trials

    values = []
    for v in (v1, v2):
        value, rows = pairwise_difference_pearson(gold, v, num_sys, average)
        if not rows:
            raise InputError("a PDP is undefined (constant or NaN scores): there is nothing to compare")
        values.append(value)
    z1, z2 = ((np.asarray(v, dtype=np.float64) - np.mean(v)) / np.std(v) for v in (v1, v2))
    pdp = lambda mix: pairwise_difference_pearson(gold, list(mix), num_sys, average)[0]  # noqa: E731
    return mtme_trials(pdp, z1, z2, pdp(z2) - pdp(z1), trials, k_block, 0.02, 0.5,
                       np.random.RandomState(seed)), values


def _matrix_text(result: dict) -> str:
    """A header naming what was computed, then MTME's ``PrintMetricComparison`` with the p-values (``probs=True``):
    each metric, its cluster rank, its value to 7 decimals, and the p-value of its test against every metric below
    it (``.`` on and left of the diagonal)."""
    header = " ".join(f"{key}={result[key]}" for key in ("test_set", "lp", "level", "human", "statistic", "average_by",
                                                         "trials", "threshold") if key in result)
    width = max(len(m) for m in result["metrics"])
    lines = [header]
    for i, (name, rank, value) in enumerate(zip(result["metrics"], result["ranks"], result["correlations"])):
        sig = " ".join(["  .  "] * (i + 1)) + " " + " ".join(f"{p:5.3f}" for p in result["matrix"][i][i + 1:])
        lines.append(f"{name:<{width}} {rank:>2} {value:10.7f}  {sig}".rstrip())
    return "\n".join(lines)


def _pooled_matrix(root, test_set, language_pair, human, level, average, statistic, include_human, fmt, min_systems,
                   metric_names, trials, seed, mode, k_block, threshold, report_file) -> None:
    """``-l en-de,zh-en``: system-level accuracy pooled over the language pairs (MTME's global accuracy)."""
    from evalpipe.meta.pooled import Part, significance_matrix

    typed = given_flags(click.get_current_context())
    if statistic != "accuracy" or (level or "sys") != "sys":
        raise UsageError("several language pairs (-l en-de,zh-en) pool system-level pairwise accuracy (MTME's global "
                         "accuracy): give --statistic accuracy at --level sys")
    if "--average" in typed:
        raise UsageError("--average and several language pairs cannot go together: pooled accuracy counts the "
                         "system pairs of every language pair at once")
    if report_file:
        raise UsageError("--report shows one language pair's scatter plots; pooled accuracy has none yet: give no "
                         "--report with several language pairs")
    lps = comma_list(language_pair, "-l")
    names = comma_list(metric_names, "-m")
    sets = [EvalSet(root, test_set, lp) for lp in lps]
    if not names:
        names = sorted(set.intersection(*({m for m in e.metric_names if m in e.scores["sys"]} for e in sets)))
        if not names:
            raise UsageError(f"no metric has system scores in every language pair of {', '.join(lps)}")
    parts, vectors, systems = [], {n: [] for n in names}, {}
    for lp, evs in zip(lps, sets):
        tables = {}
        for n in names:
            scores = evs.Scores("sys", n)
            if scores is None:
                raise UsageError(f"metric {n!r} has no system scores in {lp} ({evs.dir}): a pooled task needs every "
                                 f"metric in every language pair")
            tables[n] = scores
        common = set.intersection(*(set(t) for t in tables.values()))
        chosen, gold = _vectors(evs, human, "sys", {s: None for s in common}, include_human, _used_refs(evs, *names),
                                min_systems)
        parts.append(Part(lp, gold))
        systems[lp] = chosen
        for n, t in tables.items():
            vectors[n] += [t[s][0] for s in chosen]
    k_block = k_block or MTME_K_BLOCK
    result = significance_matrix(parts, vectors, k=trials, seed=seed, mode=mode, threshold=threshold,
                                 block_size=k_block)
    result.update(test_set=test_set, lp=language_pair, language_pairs=lps, human=human, level="sys",
                  statistic="accuracy", pooled=True, threshold=threshold, trials=trials, k_block=k_block,
                  systems=systems)
    click.echo(json.dumps(result, indent=1) if fmt == "json" else _matrix_text(result))


@meta_eval_group.command("add-metric", aliases=ALIASES)
@set_options
@click.argument("metric")
@click.option("-r", "--ref", "refs", multiple=True, metavar="NAME",
              help="the test set's reference(s) to score against, by name, e.g. refA (default: the first)")
@opt.metric_options()
@click.option("--name", help="metric name in the files (default: METRIC)")
@click.option("--segment-scores", "segment_scores", metavar="FILE[,FILE...]",
              help="write segment scores computed elsewhere as the metric METRIC instead of computing one: "
                   "comet-score's output or a seg.score file holding every system (matched by name), or one file a "
                   "system in sorted order; -o format=comet|mtme|lines|jsonl, -o field=KEY for JSON lines, -o "
                   "direction=lower|higher (auto: lower for MetricX-, TER- or WER-like names)")
@click.option("--force", is_flag=True, help="replace score files of the same name already in the test set")
@stacked(opt.engines("systems"))
def add_metric_command(root, test_set, language_pair, metric, refs, options, name, segment_scores, force, engine,
                       workers, spark_master) -> None:
    """Score every system with an evalpipe METRIC and write metric-scores files (sys and seg); with
    --segment-scores, write the scores of METRIC computed elsewhere (COMET, MetricX, ...)."""
    from evalpipe.engines import make_engine
    from evalpipe.meta.metric_files import add_metric, add_segment_scores

    if name is not None and not re.fullmatch(r"[A-Za-z0-9][\w.+*-]*", name):
        raise UsageError(f"--name: a metric name is letters, digits, _, -, ., + or * (no /), got {name!r}")
    evs = EvalSet(root, test_set, language_pair)
    unknown = sorted(set(refs) - set(evs.refs))
    if unknown:
        raise UsageError(f"-r/--ref: expected reference names of {test_set} {language_pair} "
                         f"({', '.join(sorted(evs.refs))}), got {', '.join(unknown)}")
    if segment_scores:
        given = parse_key_values(options)
        extra = sorted(set(given) - {"format", "field", "direction"})
        if extra or name or "--engine" in given_flags(click.get_current_context()) or workers:
            what = f"-o {extra[0]}" if extra else "--name" if name else "--engine/--workers"
            raise UsageError(f"{what} and --segment-scores cannot go together: the scores are read, not computed "
                             f"(METRIC names them; -o takes format, field and direction)")
        paths = add_segment_scores(evs, metric, segment_scores.split(","), list(refs) or [sorted(evs.refs)[0]],
                                   given.get("format", "auto"), given.get("field"), force=force,
                                   direction=given.get("direction", "auto"))
        _say_negated(ScoresSpec.of(metric, {"direction": given.get("direction", "auto")}).build(), metric)
        for level, path in paths.items():
            click.echo(f"{level}\t{path}")
        return
    (spec,) = metric_specs([metric], parse_key_values(options))
    built = spec.build()
    if getattr(built, "reads_source", False):
        typed = given_flags(click.get_current_context())
        if "--engine" in typed or workers:
            raise UsageError(f"--engine/--workers and {metric} cannot go together: the model runs in this process on "
                             f"every core (-o {metric}.threads=N)")
        if refs and not built.uses_reference:
            raise UsageError(f"-r: {metric} scores without a reference (it writes {metric}-src files); give no -r")
    with make_engine(engine, workers, spark_master=spark_master) as runner:
        paths = add_metric(evs, spec, list(refs) or [sorted(evs.refs)[0]], name, runner, force=force)
    _say_negated(built, name or spec.name)
    for level, path in paths.items():
        click.echo(f"{level}\t{path}")


def _say_negated(metric, name: str) -> None:
    from evalpipe.meta.metric_files import negated

    if negated(metric):
        click.echo(f"Note: {name} is lower-is-better: its scores are written negated (higher is better), as MTME's "
                   f"files hold them", err=True)


@meta_eval_group.command("mqm-scores", aliases=ALIASES)
@set_options
@click.argument("ratings", type=click.Path(dir_okay=False, exists=True))
@click.option("--name", default="mqm", show_default=True, help="the human score's name in the files")
@click.option("--weights", default=None, metavar="SPEC",
              help="error weights 'SEVERITY[/CATEGORY...]:WEIGHT ...', the most specific match applies (default: "
                   "MTME's 'Major:5 Minor:1 Neutral:0 Major/Non-translation!:25 Minor/Fluency/Punctuation:0.1')")
@click.option("--rename", multiple=True, metavar="RATED=SYSTEM",
              help="a system of the ratings under the test set's name, e.g. ref=refA (repeat)")
@click.option("--force", is_flag=True, help="replace human-score files of the same name already in the test set")
def mqm_scores_command(root, test_set, language_pair, ratings, name, weights, rename, force) -> None:
    """Write the test set's human-scores LP.NAME.seg.score and .sys.score from an MQM ratings TSV, as MTME's
    converters/score_mqm.py scores them (per-rater sums of error weights, averaged over raters, negated); the
    system score is the mean over the system's rated segments."""
    from evalpipe.meta.mqm import DEFAULT_WEIGHTS, parse_weights, score_ratings, write_human_scores

    if not re.fullmatch(r"[A-Za-z][\w-]*", name):
        raise UsageError(f"--name: a score name is letters, digits, _ and -, got {name!r}")
    renamed = {}
    for item in rename:
        old, eq, new = item.partition("=")
        if not eq or not old or not new:
            raise UsageError(f"--rename expects RATED=SYSTEM, got {item!r}")
        renamed[old] = new
    evs = EvalSet(root, test_set, language_pair)
    scores = score_ratings(ratings, parse_weights(weights or DEFAULT_WEIGHTS))
    unused = sorted(set(renamed) - {system for system, _, _ in scores})
    if unused:
        raise UsageError(f"--rename {unused[0]}=...: the ratings have no system {unused[0]!r}")
    for level, path in write_human_scores(evs, scores, name, renamed, force=force).items():
        click.echo(f"{level}\t{path}")


from evalpipe.cli.meta_tasks import tasks_command  # noqa: E402 (it uses the options above)

meta_eval_group.add_command(tasks_command)
