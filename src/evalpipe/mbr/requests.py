"""The one reader of MBR requests in JSON: the line protocol's ``MBR ||| {...}``, the lines of ``evalpipe mbr
--samples`` and of ``--pseudo-references``.  The same keys everywhere, unknown keys refused:

* ``candidates`` -- a non-empty list of strings;
* ``pseudo_references`` -- a non-empty list of strings (default: the candidates);
* ``weights`` -- one non-negative number per pseudo-reference, with a positive sum (default: uniform);
* ``reference_lprobs`` -- one finite number per pseudo-reference, their log-probabilities: each weighted by their
  softmax (mbrs's ``reference_lprobs``; not with ``weights``);
* ``aggregate`` -- ``true`` or ``false``: reference aggregation (the protocol; the command's flag is ``--aggregate``);
* ``source`` -- the segment's source, a string (the protocol; read by metrics that run a model on it, COMET);
* ``decoder`` -- a decoder's name or ``{"name": ..., OPTION: value}`` with mbrs's option names, the keys of
  ``evalpipe mbr -f json``'s ``decoder`` (the protocol; :mod:`evalpipe.mbr.decoders`);
* ``selector`` -- ``"nbest"``, ``"diverse"`` or ``{"name": ..., "n": N, OPTION: value}``, as ``-f json``'s
  ``selector`` (the protocol).

A bare JSON list of strings is the value of the reader's main key (``candidates``, or ``pseudo_references`` for a
pseudo-references file).
"""
from __future__ import annotations

from typing import Any, List, NamedTuple, Optional, Sequence

from evalpipe.errors import InputError

KEYS = ("candidates", "pseudo_references", "weights", "reference_lprobs", "aggregate", "source", "decoder", "selector")


class Request(NamedTuple):
    """One segment's MBR request; a key not given is None."""

    candidates: Optional[List[str]] = None
    pseudo_references: Optional[List[str]] = None
    weights: Optional[List[float]] = None
    aggregate: Optional[bool] = None
    source: Optional[str] = None
    reference_lprobs: Optional[List[float]] = None
    decoder: Optional[Any] = None
    selector: Optional[Any] = None


def _texts(value: Any, key: str, where: str) -> List[str]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise InputError(f"{where}expected \"{key}\" as a non-empty list of strings, got {str(value)[:60]}")
    return value


def parse(value: Any, main: str = "candidates", allowed: Sequence[str] = KEYS, where: str = "") -> Request:
    """The request in a decoded JSON ``value``: an object with some of ``allowed`` (``main`` required), or a bare
    list, the value of ``main``.  ``where`` prefixes messages (``"MBR: "``)."""
    if isinstance(value, list):
        value = {main: value}
    if not isinstance(value, dict):
        raise InputError(f"{where}expected a JSON object with \"{main}\" or a list of strings, got {str(value)[:60]}")
    unknown = sorted(set(value) - set(allowed))
    if unknown:
        raise InputError(f"{where}unknown keys {unknown}; expected {', '.join(allowed)}")
    if main not in value:
        raise InputError(f"{where}expected \"{main}\", got only {sorted(value)}")
    got = {k: _texts(value[k], k, where) for k in ("candidates", "pseudo_references") if k in value}
    weights = value.get("weights")
    if weights is not None:
        if not isinstance(weights, list) or not all(isinstance(w, (int, float)) and not isinstance(w, bool)
                                                    and w >= 0 for w in weights) or not sum(weights) > 0:
            raise InputError(f"{where}expected \"weights\" as a list of non-negative numbers with a positive sum, got "
                             f"{str(weights)[:60]}")
        got["weights"] = [float(w) for w in weights]
    lprobs = value.get("reference_lprobs")
    if lprobs is not None:
        import math

        if not isinstance(lprobs, list) or not lprobs or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in lprobs):
            raise InputError(f"{where}expected \"reference_lprobs\" as a list of finite numbers, got "
                             f"{str(lprobs)[:60]}")
        if weights is not None:
            raise InputError(f"{where}give \"weights\" or \"reference_lprobs\", not both")
        got["reference_lprobs"] = [float(v) for v in lprobs]
    if "aggregate" in value:
        if not isinstance(value["aggregate"], bool):
            raise InputError(f"{where}expected \"aggregate\" true or false, got {str(value['aggregate'])[:20]}")
        got["aggregate"] = value["aggregate"]
    if "source" in value:
        if not isinstance(value["source"], str):
            raise InputError(f"{where}expected \"source\" as a string, got {str(value['source'])[:60]}")
        got["source"] = value["source"]
    for key in ("decoder", "selector"):
        if key in value:
            got[key] = _config(value[key], key, where)
    return Request(**got)


def _config(value: Any, key: str, where: str) -> Any:
    """A ``decoder`` or ``selector`` value: its name, or an object of its name and options (checked by type; the
    options that act with it by :func:`evalpipe.mbr.decoders.check`)."""
    from dataclasses import fields

    from evalpipe.errors import UsageError
    from evalpipe.mbr.decoders import Decoder, Selector, check

    cls = Decoder if key == "decoder" else Selector
    if isinstance(value, str):
        value = {"name": value}
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        raise InputError(f"{where}expected \"{key}\" as a name or an object with \"name\", got {str(value)[:60]}")
    types = {f.name: f.type for f in fields(cls)}
    unknown = sorted(set(value) - set(types) - {"draws"} if key == "decoder" else set(value) - set(types))
    if unknown:
        raise InputError(f"{where}unknown {key} keys {unknown}; expected {', '.join(types)}")
    out = {}
    for name, v in value.items():
        want = types[name]
        if name == "sampling_scheduler":
            ok = isinstance(v, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in v)
            v = tuple(v) if ok else v
        elif want == "bool":
            ok = isinstance(v, bool)
        elif want == "int":
            ok = isinstance(v, int) and not isinstance(v, bool)
        elif want == "float":
            ok = isinstance(v, (int, float)) and not isinstance(v, bool)
        else:
            ok = isinstance(v, str) or v is None
        if not ok:
            wanted = "a list of integers" if name == "sampling_scheduler" else \
                {"int": "an integer", "float": "a number", "bool": "true or false"}.get(want, "a string")
            raise InputError(f"{where}{key} {name}: expected {wanted}, got {str(v)[:40]}")
        out[name] = v
    config = cls(**out)
    try:
        check(config if key == "decoder" else Decoder(), config if key == "selector" else Selector(), set(out) - {"name"})
    except UsageError as exc:
        raise InputError(f"{where}{exc}") from None
    return config


def check_weights(weights: Optional[Sequence[float]], pseudo_references: Sequence[str], where: str = "",
                  key: str = "weights") -> None:
    """One weight (``key``: or log-probability, ``reference_lprobs``) per pseudo-reference."""
    if weights is not None and len(weights) != len(pseudo_references):
        raise InputError(f"{where}{len(weights)} {key} for {len(pseudo_references)} pseudo-references")
