"""Reports people look at: self-contained HTML pages and plots drawn from evalpipe's JSON results.

:mod:`.figures` draws (matplotlib, the ``report`` extra), :mod:`.page` assembles a page.  Both read
the documented JSON of ``score-corpus`` only, so ``score-corpus --report`` and ``evalpipe report`` on a
saved JSON file give the same page.
"""
