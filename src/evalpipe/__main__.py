"""``python -m evalpipe``: the ``evalpipe`` command line."""
from evalpipe.cli import main

main()
