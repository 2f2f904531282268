"""A COMET model folder, read without network: what must be there, and one line naming what is not.

The folder is what unbabel-comet writes for a model (``hparams.yaml``, ``checkpoints/model.ckpt``) plus the encoder's
``config.json`` and ``tokenizer.json`` (Hugging Face's files of ``xlm-roberta-large`` or ``microsoft/infoxlm-large``,
which unbabel-comet would fetch from the hub).  As unbabel-comet does, the class comes from ``hparams.yaml``
(``class_identifier``) and every other hyper-parameter from ``hyper_parameters`` inside ``model.ckpt``.  The encoder's
files are looked for in the folder itself, then in the checkpoint's ``pretrained_model`` when that is a local folder.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Optional

from evalpipe.errors import InputError, MissingDependency

#: the families scored here: unbabel-comet's class_identifier -> what users call it
FAMILIES = {"regression_metric": "RegressionMetric (wmt22-comet-da, wmt20-comet-da)",
            "referenceless_regression_metric": "ReferencelessRegression (wmt20/21 comet-qe)",
            "unified_metric": "UnifiedMetric (wmt22-cometkiwi-da, wmt23-cometkiwi-da-xl/xxl)",
            "xcomet_metric": "XCOMETMetric (XCOMET-XL, XCOMET-XXL; scores, not the error spans)"}
ENCODERS = ("XLM-RoBERTa", "XLM-RoBERTa-XL")
LAYOUT = ("a COMET model folder holds hparams.yaml, checkpoints/model.ckpt and the encoder's config.json and "
          "tokenizer.json (docs/neural.md says how to fetch them)")


@dataclass
class ModelFiles:
    """What a model folder gave: the family, the checkpoint's hyper-parameters and weights, the encoder's config
    and the path of its tokenizer."""

    folder: Path
    family: str
    hparams: Dict[str, Any]
    state_dict: Dict[str, Any]
    config: Dict[str, Any]
    tokenizer: Path
    checkpoint: Optional[Path] = None  # the model.ckpt read (its bytes name the model in signatures)


def _missing(what: Path, why: str = "") -> InputError:
    return InputError(f"{what} is missing{why}; {LAYOUT}")


def _yaml(path: Path) -> Dict[str, Any]:
    try:
        import yaml
    except ImportError:
        raise MissingDependency("reading a COMET model's hparams.yaml needs the Python package 'yaml', which is not "
                                "installed: pip install 'evalpipe[comet]'") from None
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise InputError(f"not YAML: {str(exc).splitlines()[0]}", str(path)) from None
    if not isinstance(data, dict) or "class_identifier" not in data:
        raise InputError("expected a mapping with class_identifier (unbabel-comet's hparams.yaml)", str(path))
    return data


def _checkpoint(path: Path) -> Dict[str, Any]:
    import pickle

    import torch

    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        # a checkpoint that pickles objects beside its tensors (older Lightning): the user's own file, loaded whole
        try:
            data = torch.load(path, map_location="cpu", weights_only=False)
        except Exception as exc:  # noqa: BLE001 - any failure of a foreign file is one line
            raise InputError(f"not a torch checkpoint: {type(exc).__name__}: {exc}", str(path)) from None
    except Exception as exc:  # noqa: BLE001
        raise InputError(f"not a torch checkpoint: {type(exc).__name__}: {str(exc).splitlines()[0]}", str(path)) \
            from None
    if not isinstance(data, dict) or "state_dict" not in data:
        raise InputError("expected a checkpoint with state_dict and hyper_parameters (what unbabel-comet saves)",
                         str(path))
    return data


def _encoder_folder(folder: Path, hparams: Dict[str, Any]) -> Path:
    """Where the encoder's files are: the model folder, else the checkpoint's ``pretrained_model`` -- a local folder,
    or a hub id (``xlm-roberta-large``) found in the local Hugging Face cache, where transformers leaves it the
    first time unbabel-comet loads the model."""
    from evalpipe.evaluators.neural.hub import resolve

    candidates = [folder]
    pretrained = hparams.get("pretrained_model")
    if isinstance(pretrained, str) and pretrained:
        try:
            candidates.append(resolve(pretrained, "the encoder"))
        except InputError:
            pass
    for place in candidates:
        if (place / "config.json").is_file() and (place / "tokenizer.json").is_file():
            return place
    where = f" nor in the checkpoint's pretrained_model {pretrained!r} (a folder, or a hub id in the local Hugging " \
            f"Face cache)" if pretrained else ""
    raise InputError(f"the encoder's config.json and tokenizer.json are not in {folder}{where}; {LAYOUT}")


def locate(path: str) -> ModelFiles:
    """The model at ``path``: its folder, or its ``checkpoints/model.ckpt`` (what ``comet-score --model`` takes)."""
    given = Path(path)
    if given.is_file() and given.suffix == ".ckpt":
        folder, ckpt = given.parents[1], given
    elif given.is_dir():
        folder, ckpt = given, given / "checkpoints" / "model.ckpt"
    elif not given.exists() and path.count("/") <= 1 and not path.startswith((".", "/", "~")):
        from evalpipe.evaluators.neural.hub import resolve  # a hub id (Unbabel/wmt22-comet-da): the local cache only

        folder = resolve(path, "a COMET model")
        ckpt = folder / "checkpoints" / "model.ckpt"
    else:
        raise InputError(f"no such model folder: {path}; {LAYOUT}")
    if not (folder / "hparams.yaml").is_file():
        raise _missing(folder / "hparams.yaml")
    if not ckpt.is_file():
        raise _missing(ckpt)
    family = _yaml(folder / "hparams.yaml")["class_identifier"]
    if family not in FAMILIES:
        raise InputError(f"class_identifier {family!r} is not a family scored here; evalpipe scores "
                         f"{'; '.join(FAMILIES.values())}", str(folder / "hparams.yaml"))
    data = _checkpoint(ckpt)
    hparams = dict(data.get("hyper_parameters") or {})
    encoder_model = hparams.get("encoder_model", "XLM-RoBERTa")
    if encoder_model not in ENCODERS:
        raise InputError(f"encoder_model {encoder_model!r} is not implemented here (only {', '.join(ENCODERS)})",
                         str(ckpt))
    encoder = _encoder_folder(folder, hparams)
    try:
        config = json.loads((encoder / "config.json").read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(f"not JSON: {exc}", str(encoder / "config.json")) from None
    if not isinstance(config, dict):
        raise InputError("expected a JSON object (the encoder's configuration)", str(encoder / "config.json"))
    return ModelFiles(folder, family, hparams, data["state_dict"], config, encoder / "tokenizer.json", ckpt)


def model_name(files: ModelFiles) -> Optional[str]:
    """What a signature calls the model: its folder's name and, after ``@``, the first 12 hex digits of the sha256 of
    its checkpoint's bytes (two checkpoints never sign alike, whatever their folders are called)."""
    from evalpipe.evaluators.neural.weights import content_id

    name = files.folder.resolve().name
    return f"{name}@{content_id([files.checkpoint])}" if files.checkpoint is not None else name
