"""Model weights from a Hugging Face model folder, read without the network and without transformers.

* ``model.safetensors`` (or the shards a ``model.safetensors.index.json`` names): the safetensors layout -- 8 bytes
  (little-endian) giving the header's length, a JSON header mapping each tensor to its ``dtype``, ``shape`` and
  ``data_offsets`` in the data that follows -- read here directly;
* ``pytorch_model.bin`` (or the shards of ``pytorch_model.bin.index.json``): ``torch.load(weights_only=True)``.

:func:`content_id` names the weights by content: the first 12 hex digits of the sha256 of the weight files' bytes
(in the index's order), what a neural metric's signature carries.
"""
from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path
from typing import Dict, List, Optional

from evalpipe.errors import InputError

WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
                "pytorch_model.bin.index.json")
_DTYPES = {"F64": "float64", "F32": "float32", "F16": "float16", "BF16": "bfloat16", "I64": "int64", "I32": "int32",
           "I16": "int16", "I8": "int8", "U8": "uint8", "BOOL": "bool"}


def weight_files(folder: Path) -> Optional[List[Path]]:
    """The weight files of a model folder (shards in their index's order), or None when it has none."""
    for name in WEIGHT_FILES:
        path = folder / name
        if not path.is_file():
            continue
        if not name.endswith(".index.json"):
            return [path]
        try:
            index = json.loads(path.read_text(encoding="utf-8"))
            shards = list(dict.fromkeys(index["weight_map"].values()))
        except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError):
            raise InputError("expected a weight index: a JSON object with a weight_map", str(path)) from None
        missing = [s for s in shards if not (folder / s).is_file()]
        if missing:
            raise InputError(f"the index names {missing[0]}, which is not in the folder", str(path))
        return [folder / s for s in shards]
    return None


def _safetensors(path: Path) -> Dict[str, object]:
    import torch

    data = bytearray(path.read_bytes())
    try:
        (size,) = struct.unpack("<Q", bytes(data[:8]))
        header = json.loads(bytes(data[8:8 + size]).decode("utf-8"))
        if not isinstance(header, dict):
            raise ValueError("the header is not a JSON object")
    except (struct.error, ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"not a safetensors file ({exc})", str(path)) from None
    out: Dict[str, object] = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype = getattr(torch, _DTYPES[entry["dtype"]])
            begin, end = entry["data_offsets"]
            shape = [int(n) for n in entry["shape"]]
        except (KeyError, TypeError, ValueError):
            raise InputError(f"tensor {name!r}: expected dtype ({', '.join(_DTYPES)}), shape and data_offsets, "
                             f"got {str(entry)[:80]}", str(path)) from None
        count = 1
        for n in shape:
            count *= n
        start = 8 + size + int(begin)
        nbytes = count * torch.empty((), dtype=dtype).element_size()
        if int(end) - int(begin) != nbytes or 8 + size + int(end) > len(data):
            raise InputError(f"tensor {name!r}: its data_offsets do not hold a {entry['dtype']} tensor of shape "
                             f"{shape}", str(path))
        out[name] = torch.frombuffer(data, dtype=dtype, count=count, offset=start).reshape(shape) if count else \
            torch.empty(shape, dtype=dtype)
    return out


def _torch_bin(path: Path) -> Dict[str, object]:
    import torch

    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - any failure of a foreign file is one line
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise InputError(f"not a torch state dict: {type(exc).__name__}: {first}", str(path)) from None
    if not isinstance(data, dict):
        raise InputError("expected a state dict (a mapping of names to tensors)", str(path))
    return data


def load_weights(files: List[Path]) -> Dict[str, object]:
    """Every tensor of the weight files, by name."""
    out: Dict[str, object] = {}
    for path in files:
        out.update(_safetensors(path) if path.suffix == ".safetensors" else _torch_bin(path))
    return out


def content_id(files: List[Path]) -> str:
    """The first 12 hex digits of the sha256 of the weight files' bytes, in order."""
    digest = hashlib.sha256()
    for path in files:
        with open(path, "rb") as handle:
            for piece in iter(lambda: handle.read(1 << 22), b""):
                digest.update(piece)
    return digest.hexdigest()[:12]


def safetensors_bytes(tensors: Dict[str, object]) -> bytes:
    """``tensors`` (name -> torch tensor) in the safetensors layout :func:`load_weights` reads (and transformers)."""
    names = {v: k for k, v in _DTYPES.items()}
    header: Dict[str, object] = {"__metadata__": {"format": "pt"}}
    blobs, at = [], 0
    for name, tensor in tensors.items():
        data = tensor.detach().contiguous().cpu().numpy().tobytes() if str(tensor.dtype) != "torch.bfloat16" else \
            tensor.detach().contiguous().cpu().view(__import__("torch").int16).numpy().tobytes()
        header[name] = {"dtype": names[str(tensor.dtype).replace("torch.", "")], "shape": list(tensor.shape),
                        "data_offsets": [at, at + len(data)]}
        blobs.append(data)
        at += len(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)  # the data starts 8-byte aligned
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def installed_version() -> str:
    """evalpipe's installed version (what a neural metric's signature carries), read from its metadata."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("evalpipe")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree without installing
        return "unknown"
