"""The kernel room: every computation a metric plugin spends its time in, each with exactly two
implementations -- a C one, built at install when a compiler is there (``setup.py``), and a Python
reference that the tests compare it with and that runs when the C one was not built.

=================  ====================  ======================================================
kernel             C source (extension)  Python module: the facade and the reference
=================  ====================  ======================================================
13a tokenizer      ``tokenize_13a.c``    :mod:`.tokenize_13a` (also word ids in a vocabulary)
text units         ``text_units.c``      :mod:`.text_units` (chrF's characters), :mod:`.chrf_words`
n-gram matches     ``ngram_matches.c``   :mod:`.ngram_matches` (a block; the reference is numpy)
one-line matches   ``ngram_matches.c``   :mod:`.ngram_line` (one segment; the reference is dicts)
Tercom edits       ``tercom.c``          :mod:`.tercom` (TER's edit count on word ids)
MBR pair matches   ``pairwise_ngrams.c`` :mod:`.pairwise_ngrams` (every candidate x pseudo-reference)
edit distance      ``edit_distance.c``   :mod:`.edit_distance` (WER's edit count on word ids)
=================  ====================  ======================================================

(:mod:`.flat_lines` is the block layout the tokenizers share.)  One switch picks the implementation:
:func:`compiled` gives a kernel's extension module, or None when it was not built or the environment
variable ``EVALPIPE_IMPLEMENTATION`` is ``python`` (every kernel then runs its reference, the output is
identical).  Kernels import nothing of evalpipe but :mod:`evalpipe.errors` and :mod:`evalpipe.native`
(``setup.cfg``'s import contracts); the metric plugins in :mod:`evalpipe.evaluators` import them.  (A SimulEval
log's records are read by a C extension too, outside this room: :mod:`evalpipe.simul.log_columns`.)
"""
from __future__ import annotations

from types import ModuleType
from typing import Optional

from evalpipe.native import extension


def compiled(name: str) -> Optional[ModuleType]:
    """The C extension ``_<name>`` of this package, or None when it was not built (no compiler at install)
    or ``EVALPIPE_IMPLEMENTATION=python`` asks for the Python references (:mod:`evalpipe.native`)."""
    return extension(f"{__name__}._{name}")
