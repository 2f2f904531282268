"""A model named by a Hugging Face hub id, found in the local cache: nothing is ever downloaded.

The cache is where ``huggingface_hub`` (and so transformers and ``comet.download_model``) leaves models:
``$HF_HUB_CACHE``, else ``$HF_HOME/hub``, else ``~/.cache/huggingface/hub``; a model ``ORG/NAME`` is the folder
``models--ORG--NAME/snapshots/REVISION``, the revision that ``refs/main`` names (else the only snapshot there).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import List

from evalpipe.errors import InputError


def cache_roots() -> List[Path]:
    """Where the Hugging Face cache is, as huggingface_hub decides it."""
    if os.environ.get("HF_HUB_CACHE"):
        return [Path(os.environ["HF_HUB_CACHE"])]
    home = Path(os.environ["HF_HOME"]) if os.environ.get("HF_HOME") else Path.home() / ".cache" / "huggingface"
    return [home / "hub"]


def resolve(name: str, what: str) -> Path:
    """``name`` itself when it is a folder, else the cached snapshot of the hub id ``name``; one line when neither."""
    given = Path(name).expanduser()
    if given.is_dir():
        return given
    if given.exists():
        raise InputError(f"expected a folder ({what}), got a file", name)
    looked = []
    if name.count("/") <= 1 and not name.startswith((".", "/", "~")):
        for root in cache_roots():
            repo = root / ("models--" + name.replace("/", "--"))
            looked.append(str(repo))
            snapshots = repo / "snapshots"
            ref = repo / "refs" / "main"
            if ref.is_file() and (snapshots / ref.read_text(encoding="utf-8").strip()).is_dir():
                return snapshots / ref.read_text(encoding="utf-8").strip()
            found = sorted(p for p in snapshots.iterdir() if p.is_dir()) if snapshots.is_dir() else []
            if len(found) == 1:
                return found[0]
            if found:
                raise InputError(f"the cache holds {len(found)} snapshots of {name} and no refs/main: give the "
                                 f"snapshot folder itself", str(repo))
    where = f"; not in the Hugging Face cache either (looked in {', '.join(looked)})" if looked else ""
    raise InputError(f"no such folder ({what}){where}; nothing is downloaded: fetch it once with huggingface-cli "
                     f"download (or give its folder)", name)
