"""Turning one request line into one reply line (no I/O).

Any failure -- unknown command, missing reference, wrong vector length, non-numeric value, bad
UTF-8, an exception inside a metric -- becomes an ``ERROR ||| ...`` reply naming what was expected
and what came, so the serving loop never stops on a bad request.
"""
from __future__ import annotations

import logging
from typing import Union

from evalpipe.protocol.codec import (decode_line, format_error, format_reply_stats, format_scores,
                                     parse_request)
from evalpipe.sufficient_stats.base import Metric
from evalpipe.sufficient_stats.vectors import parse_stats

log = logging.getLogger(__name__)

COMMANDS = ("SCORE", "EVAL", "INFO")


class Dispatcher:
    """Serves SCORE / EVAL / INFO requests for one metric."""

    def __init__(self, metric: Metric) -> None:
        self.metric = metric

    def handle(self, line: Union[str, bytes]) -> str:
        """The reply line (without line end) for one request line."""
        try:
            text = decode_line(line) if isinstance(line, bytes) else line.rstrip("\r\n")
            return self._dispatch(text)
        except Exception as exc:  # every failure is one ERROR line; the loop goes on
            log.debug("request failed", exc_info=True)
            message = str(exc) or type(exc).__name__
            return format_error(message)

    def _dispatch(self, text: str) -> str:
        request = parse_request(text)
        command = request.command.upper()
        if command == "SCORE":
            return format_reply_stats(self.metric.protocol_stats(request.fields))
        if command == "EVAL":
            return self._evaluate(request.fields)
        if command == "INFO":
            return f"{self.metric.signature()} ||| {' '.join(self.metric.stats_fields)}"
        shown = text if len(text) <= 60 else text[:57] + "..."
        raise ValueError(f"expected a request starting with {', '.join(COMMANDS)}; got {shown!r}")

    def _evaluate(self, fields: list) -> str:
        if not fields or not any(fields):
            raise ValueError(f"EVAL expects a stats vector of {self.metric.num_stats} numbers "
                             f"({' '.join(self.metric.stats_fields)}); got none")
        scores = []
        for field in fields:
            stats = parse_stats(field)
            self.metric.check_stats(stats)
            scores.append(self.metric.score(stats))
        return format_scores(scores)
