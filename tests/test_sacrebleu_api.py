"""sacrebleu's private API is used in one module; every symbol it needs is still there."""
from __future__ import annotations

import importlib
import re
from pathlib import Path

import sacrebleu

from conftest import ROOT
from evalpipe.evaluators import sacrebleu_api


def test_every_private_symbol_exists_in_the_installed_sacrebleu():
    missing = []
    for module_name, class_name, attribute in sacrebleu_api.PRIVATE_SYMBOLS:
        owner = importlib.import_module(module_name)
        if class_name is not None:
            owner = getattr(owner, class_name, None)
        if owner is None or not hasattr(owner, attribute):
            missing.append(f"{module_name}.{class_name + '.' if class_name else ''}{attribute}")
    assert not missing, f"sacrebleu {sacrebleu.__version__} lacks {', '.join(missing)}"


def test_installed_sacrebleu_is_a_tested_version():
    assert sacrebleu.__version__.startswith(sacrebleu_api.TESTED_VERSIONS), sacrebleu.__version__


def test_no_other_module_touches_sacrebleu_privates():
    # a private attribute of a held sacrebleu object, or a private name imported from sacrebleu
    private = re.compile(r"(sacre|sacrebleu|metric)\._[a-z]\w*|from sacrebleu[\w.]* import [^\n]*\b_[a-z]")
    offenders = []
    for folder in ("src", "evaluators", "protocol", "sufficient_stats"):
        for path in (ROOT / folder).rglob("*.py"):
            if path.name == "sacrebleu_api.py":
                continue
            text = path.read_text(encoding="utf-8")
            if private.search(text):
                offenders.append(str(path.relative_to(ROOT)))
    assert not offenders, offenders


def test_option_vocabularies_are_the_installed_sacrebleus():
    from sacrebleu.metrics.bleu import BLEU

    assert sacrebleu_api.BLEU_TOKENIZERS == tuple(BLEU.TOKENIZERS)
    assert sacrebleu_api.BLEU_SMOOTHING == tuple(BLEU.SMOOTH_DEFAULTS)


def test_log_zero_mirrors_sacrebleu():
    from sacrebleu.utils import my_log

    assert sacrebleu_api.LOG_ZERO == my_log(0)
