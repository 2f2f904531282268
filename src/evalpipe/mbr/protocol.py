"""The ``MBR`` request of the line protocol (``evalpipe serve METRIC``), for decoders in any language.

Two forms, one reply line each:

* ``MBR ||| cand_1 ||| cand_2 ||| ... ||| cand_N`` -- the candidates are also the pseudo-references;
* ``MBR ||| {JSON}`` -- one field, a JSON object ``{"candidates": [...], "pseudo_references": [...]
  (optional), "weights": [...] (optional, one per pseudo-reference), "aggregate": false (optional)}``, when
  the pseudo-references differ or texts hold the separator (write its ``|`` as ``\u007c`` in the JSON:
  the line is split at every ``|||`` before the field is read).

Reply: ``INDEX ||| u_1 u_2 ... u_N`` -- the chosen candidate (0-based; highest expected utility, lowest for
TER; the first on ties) and every candidate's expected utility (shortest round-trip decimals).  A bad request
gets ``ERROR ||| ...`` naming what was expected, and the server goes on.
"""
from __future__ import annotations

import json
from typing import Any, List

from evalpipe.errors import InputError


def reply(metric: Any, fields: List[str]) -> List[str]:
    from evalpipe import mbr

    options: dict = {}
    if len(fields) == 1 and fields[0].lstrip().startswith("{"):
        try:
            request = json.loads(fields[0])
        except json.JSONDecodeError as exc:
            raise InputError(f"MBR: expected a JSON object ({exc.msg})") from None
        if not isinstance(request, dict):
            raise InputError("MBR: expected a JSON object with \"candidates\"")
        unknown = set(request) - {"candidates", "pseudo_references", "weights", "aggregate"}
        if unknown:
            raise InputError(f"MBR: unknown keys {sorted(unknown)}; expected candidates, pseudo_references, weights, "
                             f"aggregate")
        candidates, pseudo = request.get("candidates"), request.get("pseudo_references")
        options = {"weights": request.get("weights"), "aggregate": request.get("aggregate", False)}
    else:
        candidates, pseudo = fields, None
    for name, texts in (("candidates", candidates), ("pseudo_references", pseudo)):
        if texts is None and name == "pseudo_references":
            continue
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            raise InputError(f"MBR: expected {name} as a non-empty list of strings, got {str(texts)[:60]}")
    if not isinstance(options.get("aggregate", False), bool):
        raise InputError("MBR: expected \"aggregate\" true or false")
    weights = options.get("weights")
    if weights is not None:
        if not isinstance(weights, list) or not all(isinstance(w, (int, float)) and not isinstance(w, bool)
                                                    for w in weights):
            raise InputError(f"MBR: expected \"weights\" as a list of numbers, got {str(weights)[:60]}")
        weights = [weights]
    (choice,) = mbr.decode(metric, [candidates], None if pseudo is None else [pseudo],
                           aggregate=options.get("aggregate", False), weights=weights)
    return [f"{choice.index} ||| {' '.join(repr(float(u)) for u in choice.utilities)}"]
