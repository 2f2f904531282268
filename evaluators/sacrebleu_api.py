"""Every use of sacrebleu's private API, in one place.

evalpipe computes BLEU, chrF and TER with sacrebleu's own code so that numbers and signatures are
sacrebleu's to the last bit.  sacrebleu's metrics split into reference preprocessing, segment
statistics and score-from-statistics, but those methods are private (underscored) and may change in
any release.  So they are called only here, ``setup.cfg`` pins the sacrebleu versions this was
tested with (``TESTED_VERSIONS``), and ``tests/test_sacrebleu_api.py`` checks that every symbol in
``PRIVATE_SYMBOLS`` exists in the installed sacrebleu, naming any that went missing.

sacrebleu is imported on first use, not with this module (importing it takes 35-45 ms, a third of
``evalpipe serve bleu``'s start-up, and serving 13a BLEU needs it only for ``EVAL`` and ``INFO``).  So
the option vocabularies metrics declare at class level are literals here, checked equal to the
installed sacrebleu's by the same test module.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, List, Optional, Sequence

from evalpipe.evaluators.kernels.bleu_score import LOG_ZERO, SMOOTH_DEFAULTS  # noqa: F401 (sacrebleu's, for the vectorized scores)

TESTED_VERSIONS = ("2.6",)

#: (module, class or None, attribute) of every private or undocumented symbol used below
PRIVATE_SYMBOLS = (
    ("sacrebleu.metrics.bleu", None, "_get_tokenizer"),
    ("sacrebleu.metrics.bleu", "BLEU", "TOKENIZERS"),
    ("sacrebleu.metrics.bleu", "BLEU", "SMOOTH_DEFAULTS"),
    ("sacrebleu.metrics.chrf", "CHRF", "_remove_punctuation"),
    ("sacrebleu.metrics.chrf", "CHRF", "_PUNCTS"),
    ("sacrebleu.metrics.chrf", "CHRF", "_compute_f_score"),
    ("sacrebleu.metrics.base", "Metric", "_preprocess_segment"),
    ("sacrebleu.metrics.base", "Metric", "_extract_reference_info"),
    ("sacrebleu.metrics.base", "Metric", "_compute_segment_statistics"),
    ("sacrebleu.metrics.base", "Metric", "_compute_score_from_stats"),
    ("sacrebleu.utils", None, "my_log"),
    ("sacrebleu.metrics.bleu", None, "_TOKENIZERS"),
    # overridden by evalpipe.sacrebleu_compat (the engine of `evalpipe sacrebleu`)
    ("sacrebleu.metrics.base", "Metric", "_cache_references"),
    ("sacrebleu.metrics.base", "Metric", "_extract_corpus_statistics"),
    ("sacrebleu.metrics.base", "Metric", "_aggregate_and_compute"),
    ("sacrebleu.sacrebleu", None, "METRICS"),
)

#: ``BLEU.TOKENIZERS`` and ``BLEU.SMOOTH_DEFAULTS`` of sacrebleu 2.6
BLEU_TOKENIZERS = ("none", "zh", "13a", "intl", "char", "ja-mecab", "ko-mecab", "spm", "flores101", "flores200",
                   "spBLEU-1K")
BLEU_SMOOTHING = ("none", "floor", "add-k", "exp")


def metric(name: str, **options: Any) -> Any:
    """sacrebleu's metric object ``name`` (``bleu``, ``chrf`` or ``ter``) built with ``options``."""
    from sacrebleu.metrics import BLEU, CHRF, TER

    return _with_tokenizer(name, options.get("tokenize"), lambda: {"bleu": BLEU, "chrf": CHRF, "ter": TER}[name](**options))


def tokenizer(name: str) -> Callable[[str], str]:
    """sacrebleu's tokenizer called ``name`` (``13a``, ``intl``, ``char``, ...)."""
    from sacrebleu.metrics.bleu import _get_tokenizer

    return _with_tokenizer("bleu", name, lambda: _get_tokenizer(name)())


def _with_tokenizer(metric_name: str, tokenize: Any, build: Callable[[], Any]) -> Any:
    """``build()``, with what sacrebleu's tokenizers need and lack turned into one
    :class:`~evalpipe.errors.MissingDependency` line: MeCab (``sacrebleu[ja]``/``[ko]``), sentencepiece, or a
    sentencepiece model that sacrebleu downloads on first use (flores101, flores200, spBLEU-1K)."""
    from evalpipe.errors import MissingDependency

    what = f"{metric_name}: tokenize={tokenize}"
    try:
        return build()
    except RuntimeError as exc:
        if "requires extra dependencies" not in str(exc):
            raise
        extra = "'sacrebleu[ko]'" if "Korean" in str(exc) else "'sacrebleu[ja]'"
        raise MissingDependency(f"{what} needs MeCab and its dictionary, which are not installed: pip install "
                                f"{extra}") from None
    except ImportError as exc:
        raise MissingDependency.module(exc.name or "sentencepiece", what) from None
    except OSError as exc:  # the sentencepiece model could not be downloaded (urllib's errors are OSErrors)
        from sacrebleu.utils import SACREBLEU_DIR

        raise MissingDependency(f"{what} needs a sentencepiece model that sacrebleu downloads once into "
                                f"{SACREBLEU_DIR}/models, and it could not be fetched ({' '.join(str(exc).split())}): "
                                f"copy the model there from a machine with network, or choose another tokenizer") from None


def tokenizer_name(tokenizer: Any) -> str:
    """The name (``13a``, ``zh``, ...) under which sacrebleu's BLEU knows the class of ``tokenizer``."""
    from sacrebleu.metrics.bleu import _TOKENIZERS

    where = f"{type(tokenizer).__module__.rsplit('.', 1)[-1]}.{type(tokenizer).__name__}"
    return next(name for name, path in _TOKENIZERS.items() if path == where)


def remove_punctuation(chrf: Any, text: str) -> List[str]:
    """chrF++'s words: whitespace tokens with one leading or trailing punctuation mark split off."""
    return chrf._remove_punctuation(text)


def chrf_punctuation() -> frozenset:
    """The marks chrF++'s word split takes off a word's end (or, failing that, its start)."""
    from sacrebleu.metrics.chrf import CHRF

    return frozenset(CHRF._PUNCTS)


def chrf_f_score(chrf: Any, stats: Sequence[int]) -> float:
    """chrF of one stats vector (used to pick the best reference of a segment)."""
    return chrf._compute_f_score(stats)


def score_from_stats(metric: Any, stats: Sequence[Any]) -> float:
    """A sacrebleu metric's score of a stats vector."""
    return metric._compute_score_from_stats(list(stats)).score


def reference_info(metric: Any, references: Sequence[str]) -> Any:
    """A sacrebleu metric's preprocessed reference side of one segment."""
    prep = metric._preprocess_segment
    return metric._extract_reference_info([prep(r) for r in references])


def segment_statistics(metric: Any, hypothesis: str, info: Any) -> List[Any]:
    """A sacrebleu metric's stats of one hypothesis against a :func:`reference_info`."""
    return metric._compute_segment_statistics(metric._preprocess_segment(hypothesis), info)


def ter_words(metric: Any, text: str) -> List[str]:
    """TER's words of a segment: sacrebleu's normalization and tokenization, then whitespace split."""
    return metric._preprocess_segment(text).split()


def signature(metric: Any, nrefs: Optional[int]) -> str:
    """A sacrebleu metric's signature with the input's reference count (``?`` unknown, ``var`` varied: -1)."""
    metric.num_refs = "?" if nrefs is None else nrefs
    return metric.get_signature().format()


def bleu_13a_signature(nrefs: Optional[int], lowercase: bool, effective_order: bool, smooth_method: str,
                       smooth_value: Optional[float]) -> str:
    """:func:`signature` of sacrebleu's BLEU with the 13a tokenizer, composed as sacrebleu's ``BLEUSignature``
    composes it (fields in its order, the smoothing value in brackets for floor and add-k), without importing
    sacrebleu: scoring 13a BLEU needs nothing else from it."""
    refs = "?" if nrefs is None else "var" if nrefs == -1 else nrefs
    smooth = smooth_method
    if SMOOTH_DEFAULTS[smooth_method] is not None:
        smooth += f"[{SMOOTH_DEFAULTS[smooth_method] if smooth_value is None else smooth_value:.2f}]"
    return (f"nrefs:{refs}|case:{'lc' if lowercase else 'mixed'}|eff:{'yes' if effective_order else 'no'}|"
            f"tok:13a|smooth:{smooth}|version:{installed_version()}")


@functools.lru_cache(maxsize=None)
def installed_version() -> str:
    """The installed sacrebleu's ``__version__``, read from its ``version.py`` (the file setuptools-scm writes)
    without importing the package (importing it costs 70-250 ms); imported when the file says otherwise."""
    import importlib.util
    import re

    spec = importlib.util.find_spec("sacrebleu")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        try:
            with open(f"{folder}/version.py", encoding="utf-8") as handle:
                found = re.search(r"^__version__ = version = '([^']+)'$", handle.read(), re.MULTILINE)
        except OSError:
            found = None
        if found:
            return found.group(1)
    import sacrebleu

    return sacrebleu.__version__
