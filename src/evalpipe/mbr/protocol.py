"""The ``MBR`` request of the line protocol (``evalpipe serve METRIC``), for decoders in any language.

Two forms, one reply line each:

* ``MBR ||| cand_1 ||| cand_2 ||| ... ||| cand_N`` -- the candidates are also the pseudo-references;
* ``MBR ||| {JSON}`` -- one field, a JSON object ``{"candidates": [...], "pseudo_references": [...]
  (optional), "weights": [...] or "reference_lprobs": [...] (optional, one per pseudo-reference), "aggregate":
  false (optional), "source": "..." (for COMET, MetricX), "decoder": ..., "selector": ... (optional: a name or
  an object of the name and mbrs's options, as ``evalpipe mbr -f json`` writes them)}``, when
  the pseudo-references differ or texts hold the separator (write its ``|`` as ``\u007c`` in the JSON:
  the line is split at every ``|||`` before the field is read).

Reply: ``INDEX ||| u_1 u_2 ... u_N`` -- the chosen candidate (0-based; highest expected utility, lowest for
TER; the first on ties) and every candidate's expected utility (shortest round-trip decimals; ``undefined`` for a
candidate the pruning decoder dropped).  With a selector of ``n`` above 1 the first field is the n-best's indices,
best first, separated by spaces.  A bad request
gets ``ERROR ||| ...`` naming what was expected, and the server goes on.
"""
from __future__ import annotations

import json
from typing import Any, List

from evalpipe.errors import InputError


def reply(metric: Any, fields: List[str]) -> List[str]:
    from evalpipe import mbr
    from evalpipe.mbr import requests

    if len(fields) == 1 and fields[0].lstrip().startswith("{"):
        try:
            value = json.loads(fields[0])
        except json.JSONDecodeError as exc:
            raise InputError(f"MBR: expected a JSON object ({exc.msg})") from None
        if not isinstance(value, dict):
            raise InputError("MBR: expected a JSON object with \"candidates\"")
        request = requests.parse(value, where="MBR: ")
    else:
        request = requests.parse(fields, where="MBR: ")
    pseudo = request.pseudo_references
    requests.check_weights(request.weights, pseudo or request.candidates, "MBR: ")
    lprobs = request.reference_lprobs
    requests.check_weights(lprobs, pseudo or request.candidates, "MBR: ", "reference_lprobs")
    from evalpipe.errors import UsageError

    decoder = request.decoder
    if request.aggregate and decoder is not None and decoder.name != "aggregate":
        raise InputError(f"MBR: \"aggregate\": true is decoder aggregate, not {decoder.name}")
    if decoder is not None and decoder.name == "aggregate":
        decoder, aggregate = None, True
    else:
        aggregate = bool(request.aggregate)
    try:
        mbr.decoders.check(decoder or mbr.Decoder(), request.selector or mbr.Selector())
    except UsageError as exc:
        raise InputError(f"MBR: {exc}") from None
    (choice,) = mbr.decode(metric, [request.candidates], None if pseudo is None else [pseudo],
                           aggregate=aggregate, decoder=decoder, selector=request.selector,
                           weights=None if request.weights is None else [request.weights],
                           sources=None if request.source is None else [request.source],
                           lprobs=None if lprobs is None else [lprobs])
    ranked = " ".join(map(str, choice.ranked)) if choice.ranked else str(choice.index)
    return [f"{ranked} ||| {' '.join('undefined' if u is None else repr(float(u)) for u in choice.utilities)}"]
