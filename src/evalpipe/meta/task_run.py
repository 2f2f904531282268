"""Running one task (:class:`evalpipe.meta.tasks.Task`) on test sets in the MTME layout.

What MTME's ``data.GetCorrelations`` selects, in evalpipe's words:

* systems: those with outputs, less the task's references and close references, less the human translations
  (outputs named like a reference) unless ``human``, less the outlier systems (``meta-info.json``) unless
  ``use_outliers``, kept where the gold score has at least one number;
* metrics: every metric file of the level (``pce``: segment level) whose references lie within the task's
  references (``-src`` metrics have none, ``-all`` every one), only the primary ones (by base name) when
  ``primary`` and the test set lists primaries; shown by MTME's spreadsheet name: the base name, ``*`` before a
  non-primary one, ``[noref]`` after a metric without reference;
* ``domain``: only that domain's items (documents file), a system-level task reading the domain-level scores.

Systems are taken in sorted order (MTME takes a Python set's order, which ``PYTHONHASHSEED`` decides).  A metric
without a score for a selected system is an error naming both (MTME fills zeros in silently).  Values: the
statistic of the task's ``corr_fcn`` averaged as ``avg_by``; ``k`` > 0 adds the permutation tests (``perm_test``
scores: :mod:`~evalpipe.meta.significance`; pairs: :mod:`~evalpipe.meta.pairwise_permutation`; accuracy:
:mod:`~evalpipe.meta.pooled`; pce: :mod:`~evalpipe.meta.spa`) and significance clusters at ``pval``; ``k`` = 0 ranks
by value alone (ranks 1, 2, 3, ... as MTME's empty significance matrix gives).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Mapping, Optional, Sequence, Set

import numpy as np

from evalpipe.errors import InputError, UsageError
from evalpipe.meta.evalset import EvalSet
from evalpipe.meta.meta_info import MetaInfo
from evalpipe.meta.tasks import Task


@dataclasses.dataclass
class Selection:
    systems: List[str]
    gold: List[Optional[float]]
    metrics: Dict[str, List[float]]  # display name -> scores, systems end to end
    files: Dict[str, str]  # display name -> metric file name (METRIC-REF)


def parse_metric_name(evs: EvalSet, name: str):
    """(base name, references used) of ``BASE-REF`` (``REF``: one, several joined by ``.``, ``all`` or ``src``)."""
    base, dash, refs = name.rpartition("-")
    if not dash or not base:
        raise InputError(f"metric {name!r}: expected a name of the form METRIC-REF (REF: refA, refA.refB, all or src)",
                         evs.dir)
    if refs == "all":
        return base, set(evs.refs)
    if refs == "src":
        return base, set()
    return base, set(refs.split("."))


def check_meta_info(evs: EvalSet, info: MetaInfo) -> None:
    """Meta-information names what the test set has: a list (outlier_systems, primary_metrics, baseline_metrics)
    none of whose names the set has cannot act and is refused, one line naming it; names it lacks beside names it
    has (MTME's meta-information lists a year's metrics for every pair) are named on stderr, never dropped
    silently."""
    import logging

    where = f"meta-info for {evs.name} {evs.lp}"
    bases = {parse_metric_name(evs, name)[0] for name in evs.metric_names}
    for key, have, kind in (("outlier_systems", set(evs.sys_outputs), "system"),
                            ("primary_metrics", bases, "metric base name"),
                            ("baseline_metrics", bases, "metric base name")):
        named = getattr(info, key)
        unknown = sorted(named - have)
        if named and len(unknown) == len(named):
            raise InputError(f"{where}: {key} names {', '.join(unknown)}, none of which is a {kind} there "
                             f"({', '.join(sorted(have)) or 'none'})")
        if unknown:
            logging.getLogger(__name__).warning("%s: %s names %s, which %s not a %s there", where, key,
                                                ", ".join(unknown), "is" if len(unknown) == 1 else "are", kind)


def display_name(base: str, refs: Set[str], info: MetaInfo) -> str:
    """MTME's spreadsheet name: ``*`` before a metric that is not primary, ``[noref]`` after one without reference."""
    return ("" if base in info.primary_metrics else "*") + base + ("" if refs else "[noref]")


def _domain_mask(evs: EvalSet, level: str, domain: str) -> List[bool]:
    if domain not in evs.domains:
        raise UsageError(f"domain {domain!r} is not in {evs.dir} {evs.lp} (documents file: {', '.join(evs.domains)})")
    if level == "domain":
        return [d == domain for d in evs.domains]
    if level == "doc":
        first = {}
        for doc, dom in zip(evs.doc_per_seg, evs.domain_per_seg):
            first.setdefault(doc, dom)
        return [first[doc] == domain for doc in evs.docs]
    if level == "seg":
        return [d == domain for d in evs.domain_per_seg]
    raise UsageError(f"level {level} has no domains")


def select(evs: EvalSet, info: MetaInfo, level: str, refs: Set[str], close_refs: Set[str], human: bool,
           use_outliers: bool, gold_name: str, primary: bool, domain: Optional[str],
           only: Optional[Sequence[str]] = None, where: str = "task") -> Selection:
    """The systems, gold scores and metric scores a task correlates (module docstring)."""
    if domain is not None and level == "sys":
        level = "domain"
    mask = _domain_mask(evs, level, domain) if domain is not None else None

    def kept(values):
        return [v for v, m in zip(values, mask) if m] if mask is not None else list(values)

    missing_refs = sorted(refs - set(evs.refs))
    if missing_refs:
        raise InputError(f"{where}: reference {missing_refs[0]!r} is not in {evs.dir} {evs.lp} (references: "
                         f"{', '.join(sorted(evs.refs)) or 'none'})")
    gold_table = evs.Scores(level, gold_name)
    if gold_table is None:
        names = sorted(n for n in evs.human_score_names if evs.Scores(level, n))
        raise InputError(f"{where}: no {gold_name!r} human scores at level {level} in {evs.dir} {evs.lp}; available: "
                         f"{', '.join(names) or 'none'}")
    gold = {s: kept(v) for s, v in gold_table.items()}
    systems = set(evs.sys_outputs) - refs - close_refs
    if not human:
        systems -= set(evs.refs)
    if not use_outliers:
        systems -= info.outlier_systems
    systems = sorted(s for s in systems if s in gold and any(v is not None for v in gold[s]))
    metrics, files = {}, {}
    for name in sorted(evs.metric_names):
        if name not in evs.scores[level]:
            continue
        base, used = parse_metric_name(evs, name)
        if primary and info.primary_metrics and base not in info.primary_metrics:
            continue
        if not used <= refs or (only is not None and base not in only):
            continue
        shown = display_name(base, used, info)
        if shown in metrics:
            hint = (f" ({evs.lp} has one reference, so -all means -{''.join(evs.refs)}: MTME refuses the duplicate "
                    f"too; remove one file)" if len(evs.refs) == 1 and "-all" in (files[shown][-4:], name[-4:]) else "")
            raise InputError(f"{where}: metrics {files[shown]} and {name} both show as {shown} in {evs.lp}{hint}")
        table = evs.Scores(level, name)
        lacking = [s for s in systems if s not in table]
        if lacking:
            hint = "; human=False leaves the human translations out" if set(lacking) & set(evs.refs) else ""
            raise InputError(f"{where}: metric {name} has no {level} score for {', '.join(lacking[:5])}"
                             f"{' ...' if len(lacking) > 5 else ''} in {evs.lp} (MTME would count them as 0{hint})")
        metrics[shown] = [v for s in systems for v in kept(table[s])]
        files[shown] = name
    if only is not None:
        absent = sorted(set(only) - {parse_metric_name(evs, f)[0] for f in files.values()})
        if absent:
            full = [m for m in absent if m in evs.metric_names]
            hint = (f"; -m takes base names ({parse_metric_name(evs, full[0])[0]}, not {full[0]}): the task's refs "
                    f"choose the reference" if full else "")
            raise InputError(f"{where}: metric {absent[0]} has no {level}-level scores usable here in {evs.lp} "
                             f"(references {', '.join(sorted(refs))}{', primary only' if primary else ''}){hint}")
    return Selection(systems, [v for s in systems for v in gold[s]], metrics, files)


def _statistic(task: Task):
    """(evalpipe statistic, its options) of a task's ``corr_fcn`` and ``corr_fcn_args``."""
    args = task.corr_fcn_args or {}
    if task.corr_fcn in ("pearson", "spearman"):
        return task.corr_fcn, {}
    if task.corr_fcn == "kendall":  # scipy's kendalltau: tau-b
        return "kendall", {"variant": "b", "epsilon": 0.0}
    if task.corr_fcn == "KendallVariants":
        return "kendall", {"variant": str(args.get("variant", "b")), "epsilon": float(args.get("epsilon", 0.0))}
    raise UsageError(f"corr_fcn {task.corr_fcn} has no plain statistic")  # (not reached: tie calibration elsewhere)


def _per_lp(value: Any, i: int) -> Any:
    """A task attribute's value for its i-th language pair (pooled accuracy holds one per pair in a list)."""
    return value[i] if isinstance(value, list) else value


def resolve(task: Task, sets: Mapping[str, EvalSet], infos: Mapping[str, MetaInfo], where: str = "task") -> Task:
    """The task with what it leaves out filled in as MTME's ``Task.__post_init__`` does: ``gold`` the standard human
    score of the level, ``refs`` the standard reference (or the set's only one), ``close_refs`` none,
    ``corr_fcn_args`` empty; a pooled-accuracy task gets one of each per language pair.  ``sets`` and ``infos``:
    each language pair's evaluation set and standard choices."""
    golds, refs, close = [], [], []
    for i, lp in enumerate(task.langs):
        evs, info = sets[lp], infos[lp]
        gold = _per_lp(task.gold, i) or info.std_gold.get(task.level)
        if not gold:
            raise UsageError(f"{where}: no human score for {lp} at level {task.level}: give gold= in the task, "
                             f"--human NAME, or std_gold in the test set's meta-info.json")
        ref = _per_lp(task.refs, i)
        if ref is None:
            if info.std_ref:
                ref = {info.std_ref}
            elif len(evs.refs) == 1:
                ref = set(evs.refs)
            else:
                names = ", ".join(sorted(evs.refs)) or "none"
                raise UsageError(f"{where}: {lp} has {len(evs.refs)} references ({names}"
                                 f"): name the standard one with refs= in the task or std_ref in meta-info.json")
        golds.append(gold)
        refs.append(set(ref))
        close.append(set(_per_lp(task.close_refs, i) or set()))
    if task.corr_fcn == "accuracy":
        return dataclasses.replace(task, gold=golds, refs=refs, close_refs=close,
                                   corr_fcn_args=task.corr_fcn_args or {})
    return dataclasses.replace(task, gold=golds[0], refs=refs[0], close_refs=close[0],
                               corr_fcn_args=task.corr_fcn_args or {})


def run_task(task: Task, sets: Mapping[str, EvalSet], infos: Mapping[str, MetaInfo],
             seed: Optional[int] = None, mode: str = "fast", only: Optional[Sequence[str]] = None,
             where: str = "task") -> Dict[str, Any]:
    """``{"metrics", "correlations", "ranks", "matrix", "systems", ...}`` of one task filled in by :func:`resolve`
    (``sets``, ``infos`` as there)."""
    level = "seg" if task.corr_fcn == "pce" else task.level
    chosen = [select(sets[lp], infos[lp], level, _per_lp(task.refs, i), _per_lp(task.close_refs, i), task.human,
                     task.use_outliers, _per_lp(task.gold, i), task.primary, task.domain, only, where)
              for i, lp in enumerate(task.langs)]
    if task.corr_fcn == "accuracy":
        from evalpipe.meta.pooled import Part, significance_matrix as pooled_matrix

        names = sorted(set.intersection(*(set(sel.metrics) for sel in chosen)))
        if not names:
            raise InputError(f"{where}: no metric has system scores in every language pair of {task.lang}")
        parts = [Part(lp, sel.gold) for lp, sel in zip(task.langs, chosen)]
        vectors = {n: [v for sel in chosen for v in sel.metrics[n]] for n in names}
        result = pooled_matrix(parts, vectors, k=task.k, seed=seed, mode=mode, threshold=task.pval,
                               block_size=task.block_size)
        result["systems"] = {lp: sel.systems for lp, sel in zip(task.langs, chosen)}
        return result
    sel = chosen[0]
    if not sel.metrics:
        need = " (pce, SPA, compares systems over their segment scores)" if task.corr_fcn == "pce" else ""
        raise InputError(f"{where}: no metric has {level}-level scores{need} for {task.lang} with references "
                         f"{', '.join(sorted(task.refs or [])) or 'the standard one'}")
    num_sys = len(sel.systems)
    if num_sys < 2:
        raise InputError(f"{where}: {num_sys} system(s) have {task.lang} human scores here: a task needs two or more")
    gold, vectors = sel.gold, sel.metrics
    if task.corr_fcn == "pce":
        from evalpipe.meta import spa

        result = spa.significance_matrix(gold, vectors, num_sys, k=task.k, seed=seed, mode=mode, threshold=task.pval,
                                         block_size=task.block_size)
    elif task.corr_fcn == "KendallWithTiesOpt" or task.perm_test == "pairs":
        result = _kendall_ties(task, gold, vectors, num_sys, seed, mode)
    else:
        from evalpipe.meta.correlation import average_correlation
        from evalpipe.meta.significance import permutation_test, ranked_matrix

        statistic, options = _statistic(task)
        nans = task.replace_nans_with_zeros
        values = {n: average_correlation(gold, v, num_sys, task.avg_by, statistic, nans, **options)[0]
                  for n, v in vectors.items()}
        test = None if not task.k else (lambda worse, better, **draw: permutation_test(
            gold, vectors[worse], vectors[better], num_sys, task.avg_by, statistic, k=task.k, mode=mode,
            block_size=task.block_size, replace_nans_with_zeros=nans, **draw, **options))
        result = ranked_matrix(values, test, seed, mode, task.pval)
    result["systems"] = sel.systems
    return result


def _kendall_ties(task: Task, gold, vectors, num_sys: int, seed, mode) -> Dict[str, Any]:
    """KendallWithTiesOpt values (each metric's own tie threshold), and the pair-swapping test (``perm_test``
    pairs) with those thresholds; KendallVariants with ``perm_test`` pairs: its values, thresholds calibrated."""
    from evalpipe.meta.correlation import average_correlation, kendall_with_ties_opt
    from evalpipe.meta.pairwise_permutation import pairwise_permutation_test
    from evalpipe.meta.significance import ranked_matrix

    args = task.corr_fcn_args or {}
    variant = str(args.get("variant", "acc23"))
    test_rate = float(args.get("sample_rate", 1.0)) if task.perm_test == "pairs" else 1.0
    rng = np.random.RandomState(seed)
    if task.corr_fcn == "KendallWithTiesOpt":
        rate = float(args.get("sample_rate", 0.1))  # MTME's KendallWithTiesOpt default
        calibrated = {n: kendall_with_ties_opt(gold, v, num_sys, task.avg_by, variant, rate, rng)
                      for n, v in vectors.items()}
        values = {n: c[0] for n, c in calibrated.items()}
        epsilons = {n: c[1] for n, c in calibrated.items()} if rate == test_rate == 1.0 else {}
    else:  # KendallVariants with the pair-swapping test
        values = {n: average_correlation(gold, v, num_sys, task.avg_by, "kendall", task.replace_nans_with_zeros,
                                         variant=variant, epsilon=float(args.get("epsilon", 0.0)))[0]
                  for n, v in vectors.items()}
        epsilons = {}
    test = None if not task.k else (lambda worse, better, **draw: pairwise_permutation_test(
        gold, vectors[worse], vectors[better], num_sys, task.avg_by, variant, k=task.k, mode=mode,
        epsilon1=epsilons.get(worse), epsilon2=epsilons.get(better), sample_rate=test_rate,
        block_size=task.block_size, replace_nans_with_zeros=task.replace_nans_with_zeros, **draw))
    return ranked_matrix(values, test, seed, mode, task.pval)
