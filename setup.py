"""The optional C kernels only; everything else about the package is declared in setup.cfg.

* ``evalpipe.evaluators._ngram_native`` counts clipped n-gram matches (BLEU, chrF, chrF++) and looks
  tokens up in a vocabulary;
* ``evalpipe.evaluators._tokenize_13a`` is sacrebleu's 13a tokenizer;
* ``evalpipe.evaluators._text_units`` cuts text into those kernels' units (chrF's characters, chrF++'s
  words);
* ``evalpipe.evaluators._ter_native`` is Tercom's edit count (TER) on word ids.

They are built when a C compiler and the Python headers are there; ``optional=True`` lets the install
go on without them, and evalpipe then uses its Python and numpy paths (and sacrebleu's own TER) for the same output.
"""
from setuptools import Extension, setup

setup(ext_modules=[
    Extension("evalpipe.evaluators._ngram_native", ["evaluators/ngram_native.c"], optional=True),
    Extension("evalpipe.evaluators._tokenize_13a", ["evaluators/tokenize_13a.c"], optional=True),
    Extension("evalpipe.evaluators._text_units", ["evaluators/text_units.c"], optional=True),
    Extension("evalpipe.evaluators._ter_native", ["evaluators/ter_native.c"], optional=True),
])
