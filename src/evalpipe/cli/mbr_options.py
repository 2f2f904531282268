"""``evalpipe mbr``'s decoder and selector options (mbrs 0.1.8's, under its names), their table of options that act
only beside another (``RULES``), and the :class:`~evalpipe.mbr.decoders.Decoder` and
:class:`~evalpipe.mbr.decoders.Selector` they make."""
from __future__ import annotations

from typing import Any, Callable, Dict, Tuple

import click

from evalpipe.cli import options as opt
from evalpipe.cli.base import Flag, Rules
from evalpipe.errors import UsageError
from evalpipe.mbr.decoders import DECODER_OPTIONS, DECODERS, SELECTOR_OPTIONS, SELECTORS, Decoder, Selector

D, S = Decoder(), Selector()

#: flag -> (field of Decoder or Selector, click type, help)
FLAGS: Dict[str, Tuple[str, Any, str]] = {
    "--ncentroids": ("ncentroids", click.IntRange(min=1), f"centroid: k-means clusters of the pseudo-references "
                                                          f"[default: {D.ncentroids}]"),
    "--kmeans-iterations": ("kmeans_iterations", click.IntRange(min=1), f"centroid: k-means rounds at most "
                                                                         f"[default: {D.kmeans_iterations}]"),
    "--count-weight": ("count_weight", None, "centroid: weigh each centroid by the pseudo-references assigned to it"),
    "--reduction-factor": ("reduction_factor", float, f"probabilistic: compute 1/F of the utility matrix's cells "
                                                      f"[default: {D.reduction_factor:g}]"),
    "--rank": ("rank", click.IntRange(min=1), f"probabilistic: rank of the low-rank completion [default: {D.rank}]"),
    "--regularization-weight": ("regularization_weight", float, f"probabilistic: L2 weight of the completion "
                                                                f"[default: {D.regularization_weight:g}]"),
    "--iterations": ("iterations", click.IntRange(min=1), f"probabilistic: alternating least-squares rounds at most "
                                                          f"[default: {D.iterations}]"),
    "--alpha": ("alpha", float, f"pruning: confidence of keeping a candidate [default: {D.alpha:g}]"),
    "--sampling-scheduler": ("sampling_scheduler", str, "pruning: growing pseudo-reference counts, comma-separated "
                                                        f"[default: {','.join(map(str, D.sampling_scheduler))}]"),
    "--bootstrap-samples": ("bootstrap_samples", click.IntRange(min=1), f"pruning: bootstrap resamples a step "
                                                                        f"[default: {D.bootstrap_samples}]"),
    "--diversity-metric": ("diversity_metric", str, f"diverse: the metric of the candidates' similarity "
                                                    f"[default: {S.diversity_metric}, with effective order]"),
    "--diversity-lambda": ("diversity_lambda", float, f"diverse: weight of diversity in the objective "
                                                      f"[default: {S.diversity_lambda:g}]"),
    "--local-search-iterations": ("local_search_iterations", click.IntRange(min=0),
                                  f"diverse: rounds of local search [default: {S.local_search_iterations}]"),
    "--local-search-neighbors": ("local_search_neighbors", click.IntRange(min=1),
                                 f"diverse: candidates swapped a round [default: {S.local_search_neighbors}]"),
}
SPELLING = {field: flag for flag, (field, _, _) in FLAGS.items()}
SPELLING.update(seed="--seed", n="--top")


def decoder_options(f: Callable) -> Callable:
    """The decoder and selector options, in the order of ``FLAGS`` after ``--decoder``, ``--select``, ``--top``."""
    for flag, (field, kind, help_) in reversed(list(FLAGS.items())):
        if kind is None:
            f = click.option(flag, field, is_flag=True, default=None, help=help_)(f)
        else:
            f = click.option(flag, field, type=kind, default=None, help=help_)(f)
    f = opt.seed("seed of the randomized decoders (centroid's k-means++, probabilistic, pruning) and of the diverse "
                 "selector's local search; torch's generator where installed, as mbrs's draws", default=0)(f)
    f = click.option("--top", "top", type=click.IntRange(min=1), default=None,
                     help="candidates each segment returns, best first (mbrs's nbest; --nbest here reads a Moses "
                          "n-best list) [default: 1]")(f)
    f = click.option("--select", "selector", type=click.Choice(list(SELECTORS)), default=None,
                     help="the selection: the n best, or a diverse n-best (mbrs's selectors) [default: nbest]")(f)
    f = click.option("--decoder", "decoder", type=click.Choice(list(DECODERS)), default=None,
                     help="exact MBR, reference aggregation, centroid, probabilistic or pruning MBR, or reranking by a "
                          "metric that reads no reference (mbrs's decoders) [default: mbr; rerank for cometkiwi]")(f)
    return f


def _rules() -> Rules:
    F = Flag
    requires = []
    for flag, (field, _, _) in FLAGS.items():
        owners = [name for name, fields in DECODER_OPTIONS.items() if field in fields]
        if owners:
            requires.append((F(flag), (F("--decoder", tuple(owners)),), f"it is an option of the {owners[0]} decoder"))
        else:
            requires.append((F(flag), (F("--select", ("diverse",)),), "it is an option of the diverse selector"))
    requires.append((F("--seed"), (F("--decoder", ("centroid", "probabilistic", "pruning")), F("--select", ("diverse",))),
                     "it seeds the randomized decoders and the diverse selector, and nothing is drawn"))
    requires.append((F("--select", ("diverse",)), (F("--top"),),
                     "a diverse n-best needs n above 1 (a diverse list of one is the best candidate)"))
    return Rules(conflicts=((F("--decoder", ("pruning",)), F("--select", ("diverse",)),
                             "the pruning decoder keeps the best candidates only (as mbrs)"),
                            (F("--aggregate"), F("--decoder"), "--aggregate is --decoder aggregate: give one")),
                 requires=tuple(requires))


RULES = _rules()


def build(values: Dict[str, Any], aggregate: bool) -> Tuple[Any, Selector]:
    """``(Decoder or None for the default, Selector)`` from the command's parameters (checked: out-of-range values
    and a scheduler that does not grow are one usage error)."""
    from evalpipe.mbr import decoders as dec

    given = {k: v for k, v in values.items() if v is not None}
    if "sampling_scheduler" in given:
        try:
            given["sampling_scheduler"] = tuple(int(s) for s in given["sampling_scheduler"].split(","))
        except ValueError:
            raise UsageError(f"--sampling-scheduler: expected comma-separated integers such as 8,16,32, got "
                             f"{values['sampling_scheduler']!r}") from None
    name = given.pop("decoder", None) or ("aggregate" if aggregate else None)
    seed = given.pop("seed", 0)
    sel = Selector(given.pop("selector", None) or "nbest", given.pop("top", None) or 1, seed=seed,
                   **{k: given.pop(k) for k in list(given) if k in SELECTOR_OPTIONS["diverse"]})
    if sel.name == "diverse" and sel.n < 2:
        raise UsageError("--select diverse needs --top above 1: a diverse list of one is the best candidate")
    decoder = None if name is None else Decoder(name, seed=seed, **given)
    dec.check(decoder or Decoder(), sel, spell=lambda field: SPELLING.get(field, field))
    return decoder, sel

