"""Tasks and task sets as MT Metrics Eval (MTME) defines them (``tasks.Task``, ``TaskSet``, ``TaskSetResults``).

A task is one way of ranking metrics: a test set and language pair(s), a level, a human (gold) score, a
correlation function with its arguments, how rows are averaged, the significance test and its trials.  Its
attributes carry MTME's names, defaults and order (``Task.__annotations__``), so a task is written as MTME prints
it -- ``test_set=wmt21.news lang=en-de level=seg corr_fcn=KendallWithTiesOpt avg_by=item ...`` -- or as a JSON
object with those keys; a key MTME does not have is refused.  ``gold``, ``refs`` and ``close_refs`` left out
take the test set's standard values (``meta-info.json``, see :mod:`evalpipe.meta.meta_info`).

A task set combines tasks: :func:`assign_weights` (MTME's ``AssignWeights``: the weight split evenly over the
values of the first attribute, then recursively), :func:`average_ranks` and :func:`average_corrs` (each task's
correlations mapped to [0, 1] by its range: accuracies and SPA already lie there, correlations -1..1, as
``TaskResults.range``).  :func:`recipe` builds the task lists and weights of MTME's ``tasks.WMT23``,
``WMT24OnWMT23``, ``WMT24`` and ``WMT25`` for any test set and language pairs.
"""
from __future__ import annotations

import ast
import dataclasses
import json
from typing import Any, Dict, List, Optional, Sequence, Tuple

from evalpipe.errors import InputError, UsageError

CORR_FCNS = ("pearson", "kendall", "spearman", "accuracy", "KendallLike", "KendallVariants", "KendallWithTiesOpt",
             "pce")
#: the correlation functions whose values lie in [0, 1] (else -1..1); KendallWithTiesOpt unless its variant is 23
ACCURACY_LIKE = ("accuracy", "pce")


@dataclasses.dataclass
class Task:
    """MTME's ``tasks.Task`` attributes, in its order, with its defaults (``test_set`` has none here: the
    command's ``--test-set`` fills it)."""
    test_set: Optional[str] = None
    lang: str = "en-de"
    domain: Optional[str] = None
    level: str = "sys"
    human: bool = True
    avg_by: str = "none"
    corr_fcn: str = "pearson"
    k: int = 1000
    gold: Any = None
    refs: Any = None
    close_refs: Any = None
    use_outliers: bool = False
    primary: bool = True
    pval: float = 0.05
    block_size: int = 100
    early_min: float = 0.02
    early_max: float = 0.50
    replace_nans_with_zeros: bool = False
    perm_test: str = "scores"
    corr_fcn_args: Optional[Dict[str, Any]] = None

    @property
    def langs(self) -> List[str]:
        return self.lang.split(",")

    @property
    def name(self) -> str:
        """MTME's single-string form: ``attr=value`` for every attribute, spaces removed from values."""
        return " ".join(f"{a}={str_value(getattr(self, a))}" for a in ATTRIBUTES)

    @property
    def range(self) -> Tuple[int, int]:
        """The range of the task's values (MTME's ``TaskResults.range``)."""
        if self.corr_fcn in ACCURACY_LIKE or (
                self.corr_fcn == "KendallWithTiesOpt" and (self.corr_fcn_args or {}).get("variant") != "23"):
            return (0, 1)
        return (-1, 1)


ATTRIBUTES = [f.name for f in dataclasses.fields(Task)]
_TYPES = {"lang": str, "level": str, "avg_by": str, "corr_fcn": str, "perm_test": str, "test_set": str,
          "human": bool, "use_outliers": bool, "primary": bool, "replace_nans_with_zeros": bool,
          "k": int, "block_size": int, "pval": float, "early_min": float, "early_max": float}


def str_value(value: Any) -> str:
    """A value as MTME's task names print it: Python's ``str`` with spaces removed; sets in sorted order (a set's
    printed order is Python's hash order, not a property of the task)."""
    if isinstance(value, (set, frozenset)):
        return "{" + ",".join(repr(v) for v in sorted(value)) + "}" if value else "set()"
    if isinstance(value, list):
        return "[" + ",".join(str_value(v) if isinstance(v, (set, list)) else repr(v) for v in value) + "]"
    return f"{value}".replace(" ", "")


def _coerce(attr: str, value: Any, where: str) -> Any:
    kind = _TYPES.get(attr)
    if kind is bool:
        if isinstance(value, str) and value in ("True", "False", "true", "false"):
            return value in ("True", "true")
        if not isinstance(value, bool):
            raise InputError(f"task attribute {attr}: expected True or False, got {value!r}", where)
    elif kind is int:
        if isinstance(value, str):
            try:
                value = int(value)
            except ValueError:
                raise InputError(f"task attribute {attr}: expected an integer, got {value!r}", where) from None
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(f"task attribute {attr}: expected an integer, got {value!r}", where)
    elif kind is float:
        if isinstance(value, bool):
            raise InputError(f"task attribute {attr}: expected a number, got {value!r}", where)
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise InputError(f"task attribute {attr}: expected a number, got {value!r}", where) from None
    elif kind is str:
        if value is None and attr == "test_set":
            return None
        if not isinstance(value, str):
            raise InputError(f"task attribute {attr}: expected a word, got {value!r}", where)
    elif attr == "domain":
        if value in ("None", None):
            return None
        if not isinstance(value, str):
            raise InputError(f"task attribute domain: expected a domain name or None, got {value!r}", where)
    elif attr in ("refs", "close_refs"):
        value = _ref_sets(attr, value, where)
    elif attr == "gold":
        if value == "None":
            return None
        if not (value is None or isinstance(value, str) or
                (isinstance(value, list) and all(isinstance(v, str) for v in value))):
            raise InputError(f"task attribute gold: expected a human score name or a list of them, got {value!r}",
                             where)
    elif attr == "corr_fcn_args":
        if value in ("None", None):
            return None
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            raise InputError(f"task attribute corr_fcn_args: expected a dict of argument names, got {value!r}", where)
        value = dict(sorted(value.items()))
    return value


def _ref_sets(attr: str, value: Any, where: str) -> Any:
    """A set of reference names, or (several language pairs) a list of them; a JSON list of names is a set."""
    if value in ("None", None):
        return None
    if value == "set()":
        return set()
    if isinstance(value, str):
        return {value}
    if isinstance(value, (set, frozenset)) and all(isinstance(v, str) for v in value):
        return set(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return set(value)
    if isinstance(value, list) and all(isinstance(v, (set, frozenset, list)) for v in value):
        return [_ref_sets(attr, v, where) for v in value]
    raise InputError(f"task attribute {attr}: expected reference names (a set, a list, or one list per language "
                     f"pair), got {value!r}", where)


def make_task(attrs: Dict[str, Any], where: str = "task") -> Task:
    """A :class:`Task` from ``{attribute: value}``; an attribute MTME's ``Task`` does not have, or a value of the
    wrong kind, is one :class:`InputError` naming it."""
    unknown = [a for a in attrs if a not in ATTRIBUTES]
    if unknown:
        raise InputError(f"task attribute {unknown[0]!r} is not one of MTME's Task attributes "
                         f"({', '.join(ATTRIBUTES)})", where)
    task = Task(**{a: _coerce(a, v, where) for a, v in attrs.items()})
    check(task, where)
    return task


def check(task: Task, where: str = "task") -> None:
    """Refuse, in one line, a task MTME's ``Task.__post_init__`` would refuse, and options evalpipe cannot act on."""
    if task.corr_fcn not in CORR_FCNS:
        raise InputError(f"corr_fcn {task.corr_fcn!r}: expected one of {', '.join(CORR_FCNS)}", where)
    if task.corr_fcn == "KendallLike":
        raise InputError("corr_fcn KendallLike (WMT20's thresholded DA pairs) is not implemented in evalpipe: give "
                         "KendallVariants, KendallWithTiesOpt, kendall, pearson, spearman, accuracy or pce", where)
    if task.level not in ("sys", "domain", "doc", "seg"):
        raise InputError(f"level {task.level!r}: expected sys, domain, doc or seg", where)
    if task.avg_by not in ("none", "sys", "item"):
        raise InputError(f"avg_by {task.avg_by!r}: expected none, sys or item", where)
    if task.perm_test not in ("scores", "pairs"):
        raise InputError(f"perm_test {task.perm_test!r}: expected scores or pairs", where)
    if task.k < 0 or task.block_size < 1:
        raise InputError(f"k must be 0 or more and block_size 1 or more; got k={task.k}, block_size="
                         f"{task.block_size}", where)
    if (task.early_min, task.early_max) != (0.02, 0.5):
        raise InputError(f"early_min={task.early_min} early_max={task.early_max}: evalpipe's permutation tests "
                         "stop early at MTME's defaults 0.02 and 0.5 only", where)
    langs = task.langs
    if not all(langs) or len(set(langs)) != len(langs):
        raise InputError(f"lang {task.lang!r}: expected distinct language pairs separated by commas", where)
    if task.corr_fcn == "accuracy":
        if task.level != "sys":
            raise InputError("corr_fcn accuracy is system-level accuracy pooled over language pairs: level must be "
                             f"sys, got {task.level}", where)
        for attr in ("gold", "refs", "close_refs"):  # a list holds one value per language pair
            value = getattr(task, attr)
            if isinstance(value, list) and len(value) != len(langs):
                raise InputError(f"{attr} lists {len(value)} value(s) for {len(langs)} language pair(s)", where)
    else:
        if len(langs) > 1:
            raise InputError(f"lang {task.lang!r}: several language pairs go with corr_fcn accuracy only", where)
        if isinstance(task.gold, list) or isinstance(task.refs, list) or isinstance(task.close_refs, list):
            raise InputError("lists of gold, refs or close_refs (one per language pair) go with corr_fcn accuracy "
                             "only", where)
    args = task.corr_fcn_args or {}
    allowed = {"KendallVariants": {"variant", "epsilon"}, "KendallWithTiesOpt": {"variant", "sample_rate"}}.get(
        task.corr_fcn, set())
    if task.perm_test == "pairs":
        allowed = allowed | {"variant", "sample_rate"}
    extra = sorted(set(args) - allowed)
    if extra:
        raise InputError(f"corr_fcn_args {extra[0]!r} does not act with corr_fcn {task.corr_fcn} and perm_test "
                         f"{task.perm_test} (accepted: {', '.join(sorted(allowed)) or 'none'})", where)
    if task.corr_fcn == "KendallWithTiesOpt" and task.perm_test == "scores" and task.k:
        raise InputError("corr_fcn KendallWithTiesOpt with perm_test scores recalibrates every trial (MTME's slow "
                         "path), which evalpipe does not run: give perm_test=pairs, or k=0", where)
    if task.perm_test == "pairs" and task.corr_fcn not in ("KendallWithTiesOpt", "KendallVariants"):
        raise InputError(f"perm_test pairs swaps Kendall pair outcomes: corr_fcn {task.corr_fcn} cannot go with it",
                         where)


def parse_task_attrs(line: str, where: str) -> Dict[str, Any]:
    """A task's ``{attribute: value}`` from a JSON object or from MTME's ``attr=value attr=value`` form (values read
    as Python literals: ``refs={'refC'}``, ``k=0``; a bare word is a string)."""
    line = line.strip()
    if line.startswith("{"):
        try:
            attrs = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"expected a JSON object of task attributes ({e.msg} at column {e.colno})", where) \
                from None
        if not isinstance(attrs, dict):
            raise InputError("expected a JSON object of task attributes", where)
        return attrs
    attrs: Dict[str, Any] = {}
    for word in line.split():
        attr, eq, text = word.partition("=")
        if not eq or not attr:
            raise InputError(f"expected ATTRIBUTE=VALUE words (MTME's task names), got {word!r}", where)
        if attr in attrs:
            raise InputError(f"task attribute {attr} given twice", where)
        try:
            value: Any = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            value = text
        if text == "set()":
            value = set()
        attrs[attr] = value
    return attrs


def read_tasks(path: str, lines: Sequence[str]) -> List[Tuple[Dict[str, Any], str]]:
    """(attributes, where) of each task of a file: one per line (JSON object or ``attr=value`` words); blank lines
    and ``#`` comments skipped."""
    out = []
    for number, line in enumerate(lines, 1):
        if line.strip() and not line.lstrip().startswith("#"):
            where = f"{path}, line {number}"
            out.append((parse_task_attrs(line, where), where))
    if not out:
        raise InputError("holds no task", path)
    return out


# -- recipes: facts of MTME's tasks.WMT23 / WMT24OnWMT23 / WMT24 / WMT25 (68a481ae) --------------------------------

RECIPES = {
    # name: (default language pairs, language pairs scored with their human translations, pooled-accuracy task first)
    "WMT23": (["en-de", "he-en", "zh-en"], {"en-he", "he-en"}, True),
    "WMT24OnWMT23": (["en-de", "he-en", "zh-en"], {"en-he", "he-en"}, False),
    "WMT24": (["en-de", "en-es", "ja-zh"], {"en-de"}, False),
    "WMT25": (["cs-de_DE", "cs-uk_UA", "en-ar_EG", "en-bho_IN", "en-cs_CZ", "en-et_EE", "en-is_IS", "en-it_IT",
               "en-ja_JP", "en-ko_KR", "en-mas_KE", "en-ru_RU", "en-sr_Cyrl_RS", "en-uk_UA", "en-zh_CN", "ja-zh_CN"],
              set(), False),
}
#: the segment-level task every recipe runs per language pair (WMT23's acc-t)
_ACC_T = dict(level="seg", corr_fcn="KendallWithTiesOpt", avg_by="item", perm_test="pairs",
              corr_fcn_args={"sample_rate": 1.0})


def recipe(name: str, test_set: str, lps: Optional[Sequence[str]] = None, primary: bool = True, k: int = 0,
           gold: Optional[str] = None) -> Tuple[List[Task], List[float]]:
    """(tasks, weights) of MTME's recipe ``name`` on ``test_set``: language pairs sorted; WMT23 = pooled accuracy
    over them (weight: the number of language pairs), then per pair system Pearson, segment Pearson and segment
    acc-t (weight 1 each); WMT24OnWMT23 / WMT24 / WMT25 = per pair system SPA (``pce``) and segment acc-t, equal
    weights.  ``human`` is true where the recipe scores human translations (its multiple-reference pairs)."""
    if name not in RECIPES:
        raise UsageError(f"unknown recipe {name!r}; expected one of {', '.join(RECIPES)}")
    default_lps, with_human, pooled = RECIPES[name]
    lps = sorted(lps or default_lps)
    tasks: List[Task] = []

    def add(lang: str, human: bool, **attrs: Any) -> None:
        tasks.append(make_task(dict(test_set=test_set, lang=lang, human=human, primary=primary, k=k,
                                    **({"gold": gold} if gold else {}), **attrs), f"recipe {name}"))

    if pooled:
        tasks.append(make_task(dict(test_set=test_set, lang=",".join(lps), level="sys", corr_fcn="accuracy",
                                    human=bool(with_human & set(lps)), primary=primary, k=k,
                                    **({"gold": [gold] * len(lps)} if gold else {})), f"recipe {name}"))
    for lp in lps:
        human = lp in with_human
        if pooled:
            add(lp, human, level="sys", corr_fcn="pearson")
            add(lp, human, level="seg", corr_fcn="pearson")
        else:
            add(lp, human, level="sys", corr_fcn="pce")
        add(lp, human, **_ACC_T)
    weights = [float(len(lps))] + [1.0] * (len(tasks) - 1) if pooled else [1.0] * len(tasks)
    return tasks, [w / sum(weights) for w in weights]


# -- combining results (MTME's TaskSetResults) -----------------------------------------------------------------------

def assign_weights(tasks: Sequence[Task], attrs: Sequence[str], total: float = 1.0) -> List[float]:
    """MTME's ``AssignWeights``: ``total`` split evenly over the values of ``attrs[0]`` (in first-seen order), each
    share split the same way by the remaining attributes; no attribute left: equal shares."""
    for attr in attrs:
        if attr not in ATTRIBUTES:
            raise UsageError(f"weights by {attr!r}: not a task attribute ({', '.join(ATTRIBUTES)})")
    if not attrs:
        return [total / len(tasks)] * len(tasks)
    subsets: Dict[str, List[int]] = {}
    for i, task in enumerate(tasks):
        subsets.setdefault(str_value(getattr(task, attrs[0])), []).append(i)
    weights = [0.0] * len(tasks)
    for members in subsets.values():
        for i, w in zip(members, assign_weights([tasks[i] for i in members], attrs[1:], total / len(subsets))):
            weights[i] = w
    return weights


def average_ranks(results: Sequence[Dict[str, Any]], weights: Sequence[float]) -> Dict[str, float]:
    """Weighted sum of each metric's rank over the tasks, for metrics in every task, in increasing order."""
    sums: Dict[str, List[float]] = {}
    for result, weight in zip(results, weights):
        for metric, rank in zip(result["metrics"], result["ranks"]):
            sums.setdefault(metric, []).append(rank * weight)
    out = {m: sum(v) for m, v in sums.items() if len(v) == len(results)}
    return dict(sorted(out.items(), key=lambda x: x[1]))


def average_corrs(results: Sequence[Dict[str, Any]], tasks: Sequence[Task], weights: Sequence[float]
                  ) -> Dict[str, float]:
    """Weighted sum of each metric's value mapped to [0, 1] by its task's range, for metrics in every task, in
    decreasing order."""
    sums: Dict[str, List[float]] = {}
    for result, task, weight in zip(results, tasks, weights):
        b, e = task.range
        for metric, corr in zip(result["metrics"], result["correlations"]):
            sums.setdefault(metric, []).append((corr - b) / (e - b) * weight)
    out = {m: sum(v) for m, v in sums.items() if len(v) == len(results)}
    return dict(sorted(out.items(), key=lambda x: -x[1]))
