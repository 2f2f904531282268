"""evalpipe: machine-translation evaluators built on sufficient statistics.

``load_metric(name, **options)`` returns a metric plugin; ``list_metrics()`` names the installed
ones without importing them.
"""
__version__ = "0.1.0"

from evalpipe.registry import list_metrics, load_metric  # noqa: E402

__all__ = ["__version__", "list_metrics", "load_metric"]
