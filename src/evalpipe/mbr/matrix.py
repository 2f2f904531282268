"""The utility matrix as data: what an MBR decoder reads, saved once and decoded again without computing anything.

:class:`UtilityMatrix` is one segment's: ``values`` (candidates x pseudo-references, float64; one column under
reference aggregation: each candidate against the aggregate), ``computed`` (which cells were computed: every cell
for the exact decoders) and the sha256 of the segment's candidate texts and of its pseudo-reference texts (each
text UTF-8, the texts joined by NUL), so a matrix is never read against other texts.

``evalpipe mbr --save-utilities FILE.npz`` writes every segment's (numpy's npz, no pickled objects):

* ``values`` (float64) and ``computed`` (bool): every segment's cells, row by row, one segment after another;
* ``shapes`` (int64, segments x 2): each segment's rows and columns;
* ``candidates``, ``references``: the texts' hashes, one a segment;
* ``meta``: JSON -- the metric, its signature, ``higher_is_better``, ``aggregate``, evalpipe's version.

``evalpipe mbr --utilities FILE.npz`` reads it back (:func:`load`) and checks it against the candidates given
(:func:`check`): the segment count, each segment's shape and hashes; a mismatch is one line naming the segment.
"""
from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass
from typing import Any, Dict, List, Sequence, Tuple

import numpy as np

from evalpipe.errors import InputError

FORMAT = "evalpipe-utilities/1"


def texts_hash(texts: Sequence[str]) -> str:
    """sha256 (hex) of the texts, UTF-8, joined by NUL."""
    return hashlib.sha256("\0".join(texts).encode("utf-8")).hexdigest()


@dataclass
class UtilityMatrix:
    """One segment's utilities (module docstring)."""

    values: np.ndarray
    computed: np.ndarray
    candidates: str
    references: str

    @classmethod
    def of(cls, values: np.ndarray, candidates: Sequence[str], references: Sequence[str]) -> "UtilityMatrix":
        """A fully computed matrix of these texts."""
        values = np.asarray(values, dtype=np.float64)
        return cls(values, np.ones(values.shape, dtype=bool), texts_hash(candidates), texts_hash(references))


def dumps(matrices: Sequence[UtilityMatrix], meta: Dict[str, Any]) -> bytes:
    """The npz bytes of ``matrices`` and ``meta`` (module docstring)."""
    out = io.BytesIO()
    np.savez_compressed(
        out, values=np.concatenate([m.values.ravel() for m in matrices]) if matrices else np.zeros(0),
        computed=np.concatenate([m.computed.ravel() for m in matrices]) if matrices else np.zeros(0, dtype=bool),
        shapes=np.array([m.values.shape for m in matrices], dtype=np.int64).reshape(-1, 2),
        candidates=np.array([m.candidates for m in matrices], dtype="U64"),
        references=np.array([m.references for m in matrices], dtype="U64"),
        meta=np.array(json.dumps(dict(meta, format=FORMAT))))
    return out.getvalue()


def load(path: str) -> Tuple[List[UtilityMatrix], Dict[str, Any]]:
    """The matrices and meta of a file :func:`dumps` wrote; anything else is one line naming the file."""
    import zipfile

    if not zipfile.is_zipfile(path):
        raise InputError("not a utilities file of evalpipe mbr --save-utilities (not an npz archive)", path)
    try:
        with np.load(path, allow_pickle=False) as npz:
            parts = {k: npz[k] for k in ("values", "computed", "shapes", "candidates", "references", "meta")}
        meta = json.loads(str(parts["meta"]))
    except KeyError as exc:
        raise InputError(f"not a utilities file of evalpipe mbr --save-utilities: it lacks {exc}", path) from None
    except (OSError, ValueError, EOFError) as exc:
        raise InputError(f"not a utilities file of evalpipe mbr --save-utilities ({exc})", path) from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise InputError(f"expected a utilities file of format {FORMAT}", path)
    shapes = parts["shapes"]
    sizes = [int(r) * int(c) for r, c in shapes]
    if shapes.ndim != 2 or sum(sizes) != len(parts["values"]) or len(parts["computed"]) != len(parts["values"]) \
            or not len(parts["candidates"]) == len(parts["references"]) == len(shapes):
        raise InputError("the utilities file is inconsistent (its shapes do not match its cells)", path)
    out, at = [], 0
    for (rows, cols), size, cand, ref in zip(shapes, sizes, parts["candidates"], parts["references"]):
        out.append(UtilityMatrix(parts["values"][at:at + size].reshape(int(rows), int(cols)),
                                 parts["computed"][at:at + size].reshape(int(rows), int(cols)), str(cand), str(ref)))
        at += size
    return out, meta


def check(matrices: Sequence[UtilityMatrix], candidates: Sequence[Sequence[str]],
          references: Sequence[Sequence[str]], path: str) -> None:
    """Refuse (one line) a file whose matrices are not those of these candidates and pseudo-references."""
    if len(matrices) != len(candidates):
        raise InputError(f"holds {len(matrices)} segments, the candidates {len(candidates)}", path)
    for g, (m, cands, refs) in enumerate(zip(matrices, candidates, references), 1):
        if m.values.shape[0] != len(cands):
            raise InputError(f"segment {g} has {m.values.shape[0]} candidates in the file, {len(cands)} given", path)
        if m.candidates != texts_hash(cands):
            raise InputError(f"segment {g}'s candidates are not the texts the file was computed on", path)
        if m.references != texts_hash(refs):
            raise InputError(f"segment {g}'s pseudo-references are not the texts the file was computed on", path)
        if not np.isfinite(m.values[m.computed]).all():
            raise InputError(f"segment {g} holds a utility that is not a finite number", path)
