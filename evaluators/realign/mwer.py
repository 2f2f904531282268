"""Realign a talk's output to its reference sentences with mweralign, as simulstream 1.0.0 does.

mweralign (Matt Post's Python packaging of Matusov et al.'s mwerSegmenter; GPL-3.0-or-later, so an
optional extra: ``pip install 'evalpipe[mweralign]'``, pinned to 1.4.1) cuts the talk's output into
as many lines as there are reference sentences, minimising the word error rate.  simulstream does
not pin it, and its results move with the version (before 1.1.1 word-level StreamLAAL moves by up
to 0.21 s; from 1.3 the character-level output keeps ``▁``), so evalpipe pins the version simulstream
was checked against here.

Units: at the word level the output and references go to mweralign as they are; at the character
level both are first cut by mweralign's ``CJSegmenter`` (CJK characters one by one, other runs kept,
spaces as ``▁``) and the realigned lines have their spaces removed and ``_`` turned back into spaces
(simulstream's rule).  simulstream strips the hypothesis before the character-level cut for quality
but not for latency; :func:`realign` takes ``strip`` for that.  The delays are then dealt to the
realigned lines in order, as many as each line has units (:func:`split_delays`).
"""
from __future__ import annotations

import logging
import os
import tempfile
from contextlib import contextmanager
from typing import Any, Iterator, List, Sequence

from evalpipe.errors import InputError, MissingDependency
from evalpipe.evaluators.realign.stream_output import units_of

VERSION = "1.4.1"
log = logging.getLogger(__name__)


@contextmanager
def _cpp_stderr_to_debug_log() -> Iterator[None]:
    """mweralign's C++ core prints two lines per call on the process's stderr (file descriptor 2); they
    go to this module's DEBUG log instead, so a run over hundreds of talks keeps stderr readable."""
    with tempfile.TemporaryFile() as sink:
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            text = sink.read().decode("utf-8", "replace").strip()
            if text:
                log.debug("mweralign: %s", text)


def _module() -> Any:
    try:
        from mweralign import mweralign
        from mweralign.segmenter import CJSegmenter
    except ImportError as exc:
        raise MissingDependency("the mweralign resegmenter needs the mweralign package (GPL-3.0-or-later): "
                                f"pip install 'evalpipe[mweralign]' (mweralign=={VERSION}); got: {exc}") from None
    return mweralign, CJSegmenter


def _cut(text: str, segmenter: Any) -> str:
    return " ".join(segmenter.encode(text)) if segmenter is not None else text


def realign(hypothesis: str, references: Sequence[str], unit: str = "word", strip: bool = False,
            where: str = "") -> List[str]:
    """The talk's output cut into one line per reference sentence (see the module docstring)."""
    mweralign, cj = _module()
    segmenter = cj() if unit == "char" else None
    for number, ref in enumerate(references, 1):
        if "\n" in ref or "\r" in ref:
            raise InputError(f"reference {number} holds a line break", where)
        if segmenter is not None and (" ### " in ref or "\t" in ref):
            raise InputError(f"reference {number} holds ' ### ' or a tab, which mweralign reads as a "
                             f"sentence break", where)
    if segmenter is not None and (" ### " in hypothesis or "\t" in hypothesis):
        raise InputError("the output holds ' ### ' or a tab, which mweralign reads as a sentence break", where)
    hyp = _cut(hypothesis.strip() if strip else hypothesis, segmenter)
    refs = "\n".join(_cut(r, segmenter) for r in references)
    with _cpp_stderr_to_debug_log():
        lines = mweralign.align_texts(refs, hyp).split("\n")
    if len(lines) != len(references):
        raise InputError(f"mweralign returned {len(lines)} lines for {len(references)} reference sentences", where)
    if segmenter is not None:
        lines = [line.replace(" ", "").replace("_", " ") for line in lines]
    return lines


def split_delays(delays: Sequence[float], lines: Sequence[str], unit: str, where: str = "") -> List[List[float]]:
    """The delays of each realigned line, in order: as many as the line has units."""
    out, used = [], 0
    for line in lines:
        n = len(units_of(line, unit))
        out.append(list(delays[used:used + n]))
        used += n
    if used != len(delays):
        raise InputError(f"the realigned lines hold {used} {unit}s, the output has {len(delays)} delays "
                         f"(the realigner changed the text)", where)
    return out
