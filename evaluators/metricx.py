"""MetricX-23 and MetricX-24 (google-research/metricx) from a local checkpoint: ``metricx``.

Stats ``[sum, count]``: ``[score, 1]`` per segment; the corpus score is the mean of the segment scores.  **Lower is
better** (a predicted error score in [0, 25], MQM-like), and the direction travels with the scores: rankings, MBR's
choice and the MTME files read it.

A segment's fields are the **source first**, then the reference when there is one: ``SCORE ||| source |||
reference ||| hypothesis``, or ``SCORE ||| source ||| hypothesis`` to score without a reference (QE).  The model's
input is google-research/metricx's ``predict.py``'s:

* MetricX-24 (``metricx24/``): ``source: S candidate: H reference: R``, QE ``source: S candidate: H``; inputs of at most
  1536 tokens;
* MetricX-23 (``metricx23/``): ``candidate: H reference: R``, QE ``candidate: H source: S``; at most 1024 tokens.

The score is the logit of token 250089 (``<extra_id_10>``) after one decoder step from token 0, clipped to [0, 25]
(:mod:`evalpipe.evaluators.neural.mt5`, equal to metricx's ``MT5ForRegression`` within ~1e-6 in fp32).

Options: ``model`` (the model folder or a hub id in the local Hugging Face cache; required), ``tokenizer`` (the folder
of the mT5 tokenizer when the model folder has none), ``version`` (``23`` or ``24``; ``auto`` reads it from the model's
name, ``metricx-23...``/``metricx-24...``), ``qe`` (score without references), ``max_input_length`` (0: the
version's), ``on_long`` (``truncate``: cut as predict.py does, counted; ``error``: refuse an input that does not fit;
``window``: score it in sentence windows, :mod:`evalpipe.evaluators.neural.windows`),
``inputs`` (``predict``, the default: the whole text tokenized, its final EOS removed, at most ``max_input_length -
1`` tokens, as predict.py feeds the model; ``mbrs``: as mbrs 0.1.8's ``MetricMetricX`` feeds it, each part --
``source: S``, `` candidate: H``, `` reference: R`` -- tokenized on its own by ``spiece.model`` as transformers'
slow ``T5Tokenizer`` does, joined, at most ``max_input_length`` tokens; the two differ past the limit by one token
and, rarely, where sentencepiece meets an exact tie between two segmentations), ``batch_size``, ``batch_tokens``
(:mod:`evalpipe.evaluators.neural.batches`), ``device``, ``threads``, ``dtype`` (``fp32``; ``bf16``/``fp16`` on a GPU).
"""
from __future__ import annotations

import re
from typing import Any, List, Optional, Sequence, Tuple

from evalpipe.errors import InputError, OptionError, UsageError
from evalpipe.evaluators.neural.model_metric import ModelMetric, on_long_option, running_options
from evalpipe.sufficient_stats.options import Option

#: the input lengths google-research/metricx's README runs each version with
MAX_LENGTH = {"23": 1024, "24": 1536}


def input_parts(version: str, source: str, hypothesis: str, reference: Optional[str]) -> Tuple[str, ...]:
    """The parts mbrs 0.1.8's ``MetricMetricX`` tokenizes one by one (their concatenation is :func:`input_text`)."""
    if version == "24":
        parts = ("source: " + source, " candidate: " + hypothesis)
        return parts if reference is None else parts + (" reference: " + reference,)
    if reference is None:
        return ("candidate: " + hypothesis, " source: " + source)
    return ("candidate: " + hypothesis, " reference: " + reference)


def input_text(version: str, source: str, hypothesis: str, reference: Optional[str]) -> str:
    """The text MetricX reads (predict.py's ``_make_input``)."""
    if version == "24":
        text = f"source: {source} candidate: {hypothesis}"
        return text if reference is None else f"{text} reference: {reference}"
    if reference is None:
        return f"candidate: {hypothesis} source: {source}"
    return f"candidate: {hypothesis} reference: {reference}"


class MetricX(ModelMetric):
    """A MetricX model's segment scores and their mean (module docstring)."""

    name = "metricx"
    label = "MetricX"
    higher_is_better = False
    OPTIONS = {"model": Option(str, "", "the model folder (config.json, the weights, the mT5 tokenizer) or a hub id "
                                        "in the local Hugging Face cache"),
               "tokenizer": Option(str, "", "the folder of the mT5 tokenizer (tokenizer.json or spiece.model) when "
                                            "the model folder has none"),
               "version": Option(str, "auto", "23 or 24 (auto: from the model's name)", choices=("auto", "23", "24")),
               "qe": Option(bool, False, "score without references (MetricX-24 hybrid, MetricX-23 QE models)"),
               "max_input_length": Option(int, 0, "input tokens at most (0: 1536 for MetricX-24, 1024 for -23)",
                                          minimum=0),
               "on_long": on_long_option("max_input_length", "predict.py"),
               "inputs": Option(str, "predict", "how inputs become token ids: predict (metricx's predict.py) or "
                                                "mbrs (mbrs 0.1.8's MetricMetricX)", choices=("predict", "mbrs")),
               **running_options(16),
               "dtype": Option(str, "fp32", "fp32, bf16 or fp16", choices=("fp32", "bf16", "fp16"))}
    #: without -r, score-corpus scores in QE mode (as if -o metricx.qe=true)
    reference_optional = True
    CONTRACT_TINY_MODEL = "metricx"

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        o = self.options
        if not o["model"]:
            raise OptionError("metricx: give the model folder, -o metricx.model=DIR (docs/neural.md)")
        from evalpipe.evaluators.neural.devices import check

        check(o["device"], "metricx")
        from evalpipe.evaluators.neural.metricx_model import MetricXModel

        self.model = MetricXModel(o["model"], o["tokenizer"], o["device"], o["batch_size"], o["threads"], o["dtype"])
        self.model.batch_tokens = o["batch_tokens"]
        self.version = o["version"] if o["version"] != "auto" else self._version_from_name()
        self.max_length = o["max_input_length"] or MAX_LENGTH[self.version]
        self.uses_reference = not o["qe"]
        self.min_references, self.max_references = (1, 1) if o["qe"] else (1, 2)

    def _version_from_name(self) -> str:
        names = [str(self.model.folder), str(self.options["model"]), str(self.model.config.get("_name_or_path", ""))]
        found = {m for n in names for m in re.findall(r"metricx[-_]?(23|24)", n.lower())}
        if len(found) != 1:
            raise OptionError(f"metricx: which MetricX is {self.options['model']}? Its name says "
                              f"{'nothing' if not found else ' and '.join(sorted(found))}: give -o metricx.version=23 "
                              f"or 24")
        return found.pop()

    def _fields(self) -> str:
        return "the source" if self.options["qe"] else "the source, and the reference unless scoring without one"

    def block_stats(self, hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> List[List[Any]]:
        if len(references) > self.max_references:
            raise InputError("metricx with qe=true scores without a reference: give the source and the hypothesis "
                             "only")
        scores = self.score_rows(references[0], hypotheses, references[1] if len(references) > 1 else None)
        return [[float(s), 1] for s in scores]

    def score_rows(self, sources: Sequence[str], hypotheses: Sequence[str],
                   references: Optional[Sequence[str]]) -> Any:
        """The model's score of each row (float32 numpy array); inputs past max_input_length cut and counted."""
        if references is not None and self.options["qe"]:
            raise InputError("metricx: qe=true scores without a reference, and a reference came; give none (or drop "
                             "-o metricx.qe=true)")
        rows = list(zip(sources, hypotheses, references if references is not None else [None] * len(hypotheses)))
        inputs, cut = self._encode(rows)
        self.last_cut, self.last_windowed = cut, [False] * len(rows)  # score-corpus counts both (notes, JSON)
        if not any(cut):
            return self.model.score(inputs)
        if self.options["on_long"] == "error":
            first = cut.index(True)
            raise InputError(f"metricx: segment {first + 1}'s input is longer than max_input_length "
                             f"({self.max_length} tokens); -o metricx.on_long=truncate cuts it as predict.py does, "
                             f"-o metricx.on_long=window scores it in sentence windows")
        if self.options["on_long"] == "window":
            return self._windowed(rows, inputs, cut)
        self.model.truncated += sum(cut)
        return self.model.score(inputs)

    def _encode(self, rows: Sequence[Tuple[str, str, Optional[str]]]) -> Tuple[List[List[int]], List[bool]]:
        """Each row's input ids (as ``inputs`` says) and whether it was cut at max_input_length."""
        if self.options["inputs"] == "mbrs":
            return self.model.part_inputs([input_parts(self.version, *r) for r in rows], self.max_length)
        return self.model.inputs([input_text(self.version, *r) for r in rows], self.max_length)

    def _windowed(self, rows: List[Tuple[str, str, Optional[str]]], inputs: List[List[int]], cut: List[bool]) -> Any:
        """``on_long=window``: each cut row scored in sentence windows (evaluators/neural/windows.py)."""
        import numpy as np

        from evalpipe.evaluators.neural.windows import combine, windows

        parts = {}
        for i in (i for i, c in enumerate(cut) if c):
            s, h, r = rows[i]
            used = (0, 1, 2) if self.version == "24" else (1, 2) if r is not None else (1, 0)
            found = windows(rows[i], used, lambda row: not self._encode([row])[1][0])
            if found is not None:
                parts[i] = found
        flat = [p for i in sorted(parts) for p in parts[i]]
        window_inputs, window_cut = self._encode(flat)
        keep = [i for i in range(len(rows)) if i not in parts]
        scores = self.model.score([inputs[i] for i in keep] + window_inputs)
        out, split_cut = combine(len(rows), keep, parts, scores.tolist(), window_cut)
        for i, was_cut in split_cut.items():
            cut[i], self.last_windowed[i] = was_cut, True
        self.model.truncated += sum(cut)
        return np.asarray(out, dtype=np.float32)

    def utility_matrices(self, candidates: Sequence[Sequence[str]],
                         pseudo_references: Optional[Sequence[Sequence[str]]], sources: Sequence[str],
                         aggregate: bool = False) -> List[Any]:
        """MBR utilities of each segment: the ``candidates x pseudo-references`` MetricX scores (lower is better)."""
        import numpy as np

        if aggregate:
            raise UsageError("metricx has no aggregate form (no sentence vectors to average): MBR with it is pairwise")
        if self.options["qe"]:
            if pseudo_references is not None:
                raise UsageError("metricx with qe=true ranks each candidate by its own score: give no "
                                 "pseudo-references")
            return self.own_scores(candidates, sources)
        refs = candidates if pseudo_references is None else pseudo_references
        rows_src, rows_hyp, rows_ref = [], [], []
        for cands, pseudo, src in zip(candidates, refs, sources):
            for c in cands:
                for r in pseudo:
                    rows_src.append(src)
                    rows_hyp.append(c)
                    rows_ref.append(r)
        scores = self.score_rows(rows_src, rows_hyp, rows_ref)
        out, at = [], 0
        for cands, pseudo in zip(candidates, refs):
            size = len(cands) * len(pseudo)
            out.append(np.asarray(scores[at:at + size], dtype=np.float32).reshape(len(cands), len(pseudo)))
            at += size
        return out

    def signature(self, nrefs: Optional[int] = None) -> str:
        from evalpipe.evaluators.neural.weights import installed_version

        installed = installed_version()
        ref = "no" if self.options["qe"] or nrefs == 0 else "yes"
        return (f"metricx|model:{self.model.folder.resolve().name}@{self.model.content_id()}|v{self.version}"
                f"|ref:{ref}|{self.options['dtype']}|maxlen:{self.max_length}"
                + ("|inputs:mbrs" if self.options["inputs"] == "mbrs" else "")
                + ("|long:window" if self.options["on_long"] == "window" else "") + f"|version:{installed}")
