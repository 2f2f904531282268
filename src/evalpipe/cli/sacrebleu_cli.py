"""``evalpipe sacrebleu ARGS...``: sacrebleu 2.6's command line, byte for byte, on evalpipe's statistics.

The arguments, the reading of files and stdin, every message, exit code and output format are
sacrebleu's own: its command-line front end (``sacrebleu.sacrebleu``, a dependency) runs unchanged,
with its metric table pointing at :mod:`evalpipe.sacrebleu_compat` (sacrebleu's classes,
statistics from evalpipe's compiled kernels).  So ``alias sacrebleu='evalpipe sacrebleu'`` changes
the time and nothing else.  One difference by design: an error that sacrebleu would show as a Python
traceback (a missing file, undecodable input) is one line on stderr, with the same exit status 1.
"""
from __future__ import annotations

import sys
from typing import List

import click


def run(argv: List[str]) -> int:
    """Run sacrebleu's command line on ``argv`` with evalpipe's metrics; the exit status."""
    import sacrebleu.sacrebleu as front

    from evalpipe.errors import EvalpipeError
    from evalpipe.sacrebleu_compat import METRICS

    saved_argv, saved_metrics = sys.argv, front.METRICS
    sys.argv, front.METRICS = ["sacrebleu", *argv], METRICS
    try:
        front.main()
        return 0
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except OSError as exc:
        print(f"Error: {exc.filename}: {exc.strerror or exc}" if exc.filename else f"Error: {exc}", file=sys.stderr)
        return 1
    except EvalpipeError as exc:  # a missing tokenizer package or model: what to install
        print(f"Error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 - sacrebleu would end in a traceback (status 1): one line instead
        print(f"Error: {type(exc).__name__}: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    finally:
        sys.argv, front.METRICS = saved_argv, saved_metrics
        try:
            sys.stdout.flush()
        except (BrokenPipeError, ValueError):
            pass


@click.command("sacrebleu", add_help_option=False,
               context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def sacrebleu_command(args) -> None:
    """sacrebleu 2.6's command line (every argument is sacrebleu's; `evalpipe sacrebleu -h` shows them),
    byte-identical output, computed with evalpipe's kernels."""
    sys.exit(run(list(args)))
