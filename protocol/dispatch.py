"""Turning one request line into its reply lines (no I/O).

Every request gets one reply line, except ``EVAL`` with n >= 2 vectors: n score lines, then the
aggregate line -- the score of the summed vectors (METEOR 1.5's answer, which pycocoevalcap reads).
With ``dialect="pycocoevalcap"`` a one-vector ``EVAL`` also answers two lines (score, aggregate: the
same number), as pycocoevalcap's bundled METEOR jar does.  ``strict_stats`` rejects EVAL vectors the
metric cannot have produced (:meth:`~evalpipe.sufficient_stats.metric.Metric.impossible`); ``scale``
multiplies every EVAL score (0.01 puts BLEU on cdec's 0-1 scale).

A request that cannot be served -- unknown command, missing reference, wrong vector length,
non-numeric value, bad UTF-8 -- raises an :class:`~evalpipe.errors.EvalpipeError` and gets
``ERROR ||| message`` naming what was expected and what came.  Any other exception is a bug (in a
plugin, say): it gets ``ERROR ||| internal error: ...`` and is logged with its traceback at ERROR
level on stderr.  Either way the serving loop goes on.
"""
from __future__ import annotations

import logging
from typing import Any, Callable, Dict, List, Optional, Set, Tuple, Union

from evalpipe.errors import EvalpipeError, InputError
from evalpipe.protocol.codec import decode_line, format_error, format_score, parse_request
from evalpipe.protocol.requests import score_fields
from evalpipe.sufficient_stats.vectors import format_stats, parse_stats, sum_stats

log = logging.getLogger(__name__)

COMMANDS = ("SCORE", "EVAL", "INFO")
DIALECTS = ("meteor", "pycocoevalcap")


REPLY_CACHE = 4096  # SCORE replies kept for repeated request lines


class Dispatcher:
    """Serves SCORE / EVAL / INFO requests for one metric; remembers the reference counts it saw
    (the signature's ``nrefs``)."""

    def __init__(self, metric: Any, dialect: str = "meteor", strict_stats: bool = False, scale: float = 1.0,
                 forms: Optional[Dict[str, Callable[[Any, str], List[Any]]]] = None,
                 verbs: Optional[Dict[str, Callable[[Any, List[str]], List[str]]]] = None) -> None:
        """``forms``: extra SCORE forms a front end adds, ``SCORE ||| KEYWORD ||| PAYLOAD`` answered by
        ``forms[KEYWORD](metric, PAYLOAD)`` (a stats vector); ``evalpipe serve --talks`` adds ``talk``.
        ``verbs``: extra requests ``VERB ||| field ||| ...`` answered by ``verbs[VERB](metric, fields)`` (reply
        lines); ``evalpipe serve`` adds ``MBR`` (:mod:`evalpipe.mbr.protocol`)."""
        if dialect not in DIALECTS:
            raise InputError(f"expected a dialect among {', '.join(DIALECTS)}, got {dialect!r}")
        self.metric, self.dialect, self.strict_stats, self.scale = metric, dialect, strict_stats, scale
        self.forms = dict(forms or {})
        self.verbs = {verb.upper(): answer for verb, answer in (verbs or {}).items()}
        self.reference_counts: Set[int] = set()
        # Replies to SCORE lines seen before, by the request line as it came (an n-best list repeats
        # hypotheses): a SCORE reply depends on nothing but its line.  Oldest first out.
        self._replies: Dict[Union[str, bytes], List[str]] = {}

    def handle(self, line: Union[str, bytes]) -> List[str]:
        """The reply lines (without line ends) for one request line; an error is one ``ERROR`` line."""
        reply = self._replies.get(line)
        if reply is not None:
            return reply
        try:
            reply, repeatable = self._dispatch(_text(line))
            if repeatable:
                self._remember(line, reply)
            return reply
        except EvalpipeError as exc:
            return [format_error(str(exc) or type(exc).__name__)]
        except Exception as exc:  # a bug, not bad input: say so, keep the traceback, go on
            shown = line if len(line) <= 200 else line[:200] + (b"..." if isinstance(line, bytes) else "...")
            log.error("internal error while serving %r", shown, exc_info=True)
            return [format_error(f"internal error: {type(exc).__name__}: {exc}")]

    def prefetch(self, lines: List[Union[str, bytes, int]]) -> None:
        """For a metric that scores many segments in one pass (``batched``: COMET), the SCORE lines that arrived
        together are scored as one batch (``block_stats``) and their replies cached, so :meth:`handle` answers
        each from the cache, in order.  A line that does not parse, or a batch that fails, is left to
        :meth:`handle`, which answers it (or its error) alone."""
        if not getattr(self.metric, "batched", False):
            return
        groups: Dict[int, List[Tuple[Union[str, bytes], Any, Tuple[str, ...]]]] = {}
        for line in lines:
            if type(line) is int or line in self._replies:
                continue
            try:
                command, fields = parse_request(_text(line))
                if command.upper() != "SCORE" or self._is_form(fields):
                    continue
                hypothesis, references = score_fields(self.metric, fields)
                hypothesis = self.metric.check_hypothesis(hypothesis)
                refs = self.metric.check_references(references)
            except EvalpipeError:
                continue
            groups.setdefault(len(refs), []).append((line, hypothesis, refs))
        for count, items in groups.items():
            if len(items) < 2:
                continue
            try:
                rows = self.metric.block_stats([h for _, h, _ in items], [[r[k] for _, _, r in items]
                                                                          for k in range(count)])
            except EvalpipeError:
                continue
            log.debug("%d SCORE lines that arrived together scored as one batch", len(items))
            self.reference_counts.add(count)
            for (line, _, _), row in zip(items, rows):
                self._remember(line, [format_stats(row)])

    def _remember(self, line: Union[str, bytes], reply: List[str]) -> None:
        """Keep a SCORE line's reply (the oldest goes first past ``REPLY_CACHE``)."""
        if len(self._replies) >= REPLY_CACHE:
            del self._replies[next(iter(self._replies))]
        self._replies[line] = reply

    def _is_form(self, fields: List[str]) -> bool:
        """A SCORE of one of the front end's own forms (``SCORE ||| KEYWORD ||| PAYLOAD``)."""
        return bool(self.forms) and len(fields) == 2 and fields[0] in self.forms

    def nrefs(self) -> Any:
        """The reference count seen so far: None before any, -1 when it varied."""
        counts = self.reference_counts
        return None if not counts else next(iter(counts)) if len(counts) == 1 else -1

    def _dispatch(self, text: str) -> Tuple[List[str], bool]:
        """The reply, and whether the same line always gets it (a plain SCORE)."""
        command, fields = parse_request(text)
        command = command.upper()
        if command == "SCORE":
            if self._is_form(fields):
                return [format_stats(self.forms[fields[0]](self.metric, fields[1]))], False
            hypothesis, references = score_fields(self.metric, fields)
            stats = self.metric.stats(hypothesis, references)
            self.reference_counts.add(len(references))
            return [format_stats(stats)], True
        if command == "EVAL":
            return self._evaluate(fields), False
        if command == "INFO":
            return [f"{self.metric.signature(self.nrefs())} ||| {' '.join(self.metric.stats_fields)}"], False
        if command in self.verbs:
            return self.verbs[command](self.metric, fields), False
        shown = text if len(text) <= 60 else text[:57] + "..."
        raise InputError(f"expected a request starting with {', '.join(COMMANDS + tuple(self.verbs))}; got {shown!r}")

    def _evaluate(self, fields: List[str]) -> List[str]:
        if not fields or not any(fields):
            raise InputError(f"EVAL expects a stats vector of {self.metric.num_stats} numbers "
                             f"({' '.join(self.metric.stats_fields)}); got none")
        vectors = [self.metric.check_stats(parse_stats(field)) for field in fields]
        if self.strict_stats:
            for i, vector in enumerate(vectors):
                problem = self.metric.impossible(vector)
                if problem:
                    raise InputError(f"EVAL vector {i + 1}: {problem} (--strict-stats)")
        scores = [self._shown(self.metric.score_from_stats(v)) for v in vectors]  # checked above
        if len(vectors) == 1 and self.dialect == "meteor":
            return scores
        return scores + [self._shown(self.metric.score(sum_stats(vectors, self.metric.num_stats)))]

    def _shown(self, score: float) -> str:
        return format_score(score if self.scale == 1.0 else score * self.scale)


def _text(line: Union[str, bytes]) -> str:
    """A request line as text, without its line end (bytes decoded, bad UTF-8 an error naming it)."""
    return decode_line(line) if type(line) is bytes else line.rstrip("\r\n")
