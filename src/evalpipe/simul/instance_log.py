"""A SimulEval log (``instances.log``, JSON lines) as an input read where the work runs.

This process reads the log's bytes once to find where each record's line starts (no JSON is parsed here but the
first record's, which says whether the log carries references and what its sources were).  :meth:`InstanceLog.split`
gives chunks that carry their byte range and the number of their first line, so a worker of a pool reads and
parses its own records and nothing else -- as :class:`~evalpipe.inputs.TextFiles` does for text files -- and only
the sums of statistics come back.  Every chunk checks its records as :func:`~evalpipe.simul.records.read_instances`
checks a whole log (the errors name the file and the line), and that they are like the first record: all with a
``reference`` or all without, the same kind of ``source``.  Where an engine computes in this process the log is
read whole, as before.
"""
from __future__ import annotations

from typing import Any, Iterator, List, Optional, Sequence

from evalpipe.corpus import decode_lines, open_binary
from evalpipe.errors import InputError
from evalpipe.inputs import Input, Segment, SimulPairs, chunk_bounds
from evalpipe.simul.records import bytes_input, parse_records, record_kind, records_input


class InstanceLog(Input):
    """The records of ``path`` whose lines start at ``starts[i]`` (bytes; ``starts[-1]``: where the last one's
    line ends), the first on line ``first_line``: build one with :meth:`open`."""

    def __init__(self, path: str, starts: Sequence[int], first_line: int, has_reference: bool,
                 kind: Optional[str], lines: Optional[Sequence[int]] = None) -> None:
        self.path, self.name, self.starts, self.first_line = path, path, list(starts), first_line
        self.has_reference, self.source_kind = has_reference, kind
        self.lines = list(lines) if lines is not None else None  # each record's line number, in the whole log
        self.nrefs = 1 if has_reference else 0

    @classmethod
    def open(cls, path: str) -> "InstanceLog":
        """The whole log: its records' line starts found (blank lines are no records), its first record read."""
        with open_binary(path) as handle:
            raw = handle.read()
        import numpy as np

        ends = np.flatnonzero(np.frombuffer(raw, dtype=np.uint8) == 10)
        if not raw.endswith(b"\n"):
            ends = np.append(ends, len(raw))  # a last line without its line end
        begins = np.r_[0, ends[:-1] + 1]
        short = np.flatnonzero(ends - begins <= 64)  # a blank line is short: only those are decoded to look
        blank = [int(i) for i in short if not raw[begins[i]:ends[i]].decode("utf-8", "replace").strip()]
        keep = np.ones(len(begins), dtype=bool)
        keep[blank] = False
        numbers = np.flatnonzero(keep)
        if not len(numbers):
            raise InputError(f"{path} holds no instances")
        starts, lines = begins[numbers].tolist(), (numbers + 1).tolist()
        end = min(int(ends[numbers[-1]]) + 1, len(raw))
        line_end = raw.find(b"\n", starts[0])
        first, _ = parse_records(decode_lines(raw[starts[0]:line_end if line_end >= 0 else len(raw)], path, lines[0]),
                                 path, lines[0])
        record = first[0] if first else None
        has_reference = isinstance(record, dict) and isinstance(record.get("reference"), str)
        return cls(path, starts + [end], lines[0], has_reference, record_kind(record), lines)

    def __getstate__(self) -> dict:
        return {**self.__dict__, "lines": None}  # a chunk travels with its byte range, not the log's line numbers

    def __len__(self) -> int:
        return len(self.starts) - 1

    def work(self) -> int:
        """About one text segment of BLEU + chrF a record (parsing included): no delays travel to a worker."""
        return len(self)

    def split(self, parts: int) -> List["Input"]:
        lines = self.lines
        return [InstanceLog(self.path, self.starts[a:b + 1], lines[a] if lines else self.first_line,
                            self.has_reference, self.source_kind, lines[a:b] if lines else None)
                for a, b in chunk_bounds(len(self), parts)]

    def read(self) -> SimulPairs:
        """The records of this range as :class:`SimulPairs`, checked (see the module docstring)."""
        with open_binary(self.path) as handle:
            handle.seek(self.starts[0])
            data = handle.read(self.starts[-1] - self.starts[0])
        pairs = bytes_input(data, self.path, self.first_line)  # (all with a reference or all without, checked)
        if pairs is None:  # what the C reader does not take: json names what is wrong
            records, numbers = parse_records(decode_lines(data, self.path, self.first_line), self.path,
                                             self.first_line)
            pairs = records_input(records, self.path, numbers)
        if bool(pairs.references) != self.has_reference:  # unlike the first record of the log: this chunk's first
            raise InputError("expected a 'reference' string in every instance (or in none)", self.path, pairs.lines[0])
        if pairs.source_kind != self.source_kind:  # (None where its records mix kinds: the first unlike the log's)
            records, numbers = parse_records(decode_lines(data, self.path, self.first_line), self.path,
                                             self.first_line)
            kind, number = next((k, n) for k, n in zip(map(record_kind, records), numbers) if k != self.source_kind)
            raise InputError(f"expected every instance's 'source' as the first's ({self.source_kind or 'none'}), "
                             f"got {kind or 'none'}", self.path, number)
        return pairs

    def rows(self, metric: Any) -> List[list]:
        return self.read().rows(metric)

    def partial(self, metric: Any) -> Any:
        return self.read().partial(metric)

    def segments(self) -> Iterator[Segment]:
        return self.read().segments()

    @classmethod
    def from_segments(cls, segments: Sequence[Segment], nrefs: int) -> Input:
        hyps = [h for h, _ in segments]
        return SimulPairs(hyps, [[refs[k] for _, refs in segments] for k in range(nrefs)])
