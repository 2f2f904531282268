"""The optional C kernels only; everything else about the package is declared in setup.cfg.

* ``evalpipe.evaluators.kernels._ngram_matches`` counts clipped n-gram matches (BLEU, chrF, chrF++) and looks
  tokens up in a vocabulary;
* ``evalpipe.evaluators.kernels._tokenize_13a`` is sacrebleu's 13a tokenizer;
* ``evalpipe.evaluators.kernels._text_units`` cuts text into those kernels' units (chrF's characters, chrF++'s
  words);
* ``evalpipe.evaluators.kernels._tercom`` is Tercom's edit count (TER) on word ids;
* ``evalpipe.evaluators.kernels._pairwise_ngrams`` counts the matches of every MBR candidate against every
  pseudo-reference of its segment (or their mean counts);
* ``evalpipe.evaluators.kernels._edit_distance`` is the Levenshtein distance of word-id sequences (WER);
* ``evalpipe.simul._log_columns`` reads the fields of a SimulEval log's records from its bytes.

They are built when a C compiler and the Python headers are there; ``optional=True`` lets the install
go on without them, and evalpipe then uses the Python references for the same output.
"""
from setuptools import Extension, setup

KERNELS = ("ngram_matches", "tokenize_13a", "text_units", "tercom", "pairwise_ngrams", "edit_distance")

setup(ext_modules=[Extension(f"evalpipe.evaluators.kernels._{name}", [f"evaluators/kernels/{name}.c"], optional=True,
                             depends=["evaluators/kernels/int64_buffer.h"])  # (the sdist carries what is listed)
                   for name in KERNELS]
      + [Extension("evalpipe.simul._log_columns", ["src/evalpipe/simul/log_columns.c"], optional=True)])
