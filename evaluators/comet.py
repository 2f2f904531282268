"""COMET-family models as metrics: ``comet`` (with the reference the model reads) and ``cometkiwi`` (without one).

Stats ``[sum, count]``: ``[score, 1]`` per segment, the score the model gives; the corpus score is the mean, the
``system_score`` unbabel-comet's ``predict`` reports.  So intervals, paired tests, all pairs with Holm clusters,
comet-compare's paired t-test and reports work as on any metric.

A segment's fields are the **source first**, then the reference, then the hypothesis:
``SCORE ||| source ||| reference ||| hypothesis`` (``SCORE ||| source ||| hypothesis`` for ``cometkiwi`` and for
referenceless models), and ``references`` is ``(source, reference)`` in the Python API.  ``score-corpus`` takes the
sources with ``--source``.

Options: ``model`` (the model folder, :mod:`evalpipe.evaluators.neural.checkpoint`; required), ``batch_size``
(inputs per forward pass, default 64), ``batch_tokens`` (padded tokens per pass at most; 0: off), ``device``
(``auto``: the GPU torch sees, else the CPU), ``threads`` (CPU threads; 0: every core for a batch of 16 inputs or
more, one below).  ``block_stats`` scores many segments in one pass (``serve`` batches the SCORE lines that arrive
together; score-corpus whole corpora), each distinct sentence encoded once.  The forward pass and its
equality to unbabel-comet 2.2.7: :mod:`evalpipe.evaluators.neural`.
"""
from __future__ import annotations

from typing import Any, List, Optional, Sequence

from evalpipe.errors import InputError, OptionError, UsageError
from evalpipe.evaluators.neural.model_metric import ModelMetric, on_long_option, running_options
from evalpipe.sufficient_stats.options import Option


class Comet(ModelMetric):
    """A COMET model's segment scores and their mean (module docstring)."""

    name = "comet"
    OPTIONS = {"model": Option(str, "", "the model folder: hparams.yaml, checkpoints/model.ckpt, the encoder's "
                                        "config.json and tokenizer.json"),
               **running_options(64),
               "on_long": on_long_option("the encoder's limit", "unbabel-comet")}
    #: False: scores without a reference (``cometkiwi``)
    with_reference = True
    #: the contract tests run it with a tiny model of this family (src/evalpipe/tiny_comet.py)
    CONTRACT_TINY_MODEL = "regression"

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        if not self.options["model"]:
            raise OptionError(f"{self.name}: give the model folder, -o {self.name}.model=DIR (docs/neural.md)")
        device = self.options["device"]
        from evalpipe.evaluators.neural.devices import check

        check(device, self.name)
        from evalpipe.evaluators.neural.scorer import CometModel

        self.model = CometModel(self.options["model"], device, self.options["batch_size"], self.options["threads"])
        self.model.batch_tokens = self.options["batch_tokens"]
        self.max_length = self.model.encoder.max_positions - 2  # tokens the encoder reads (<s> and </s> included)
        self.uses_reference = self.with_reference and self.model.reads_reference
        if self.with_reference and not self.model.reads_reference:
            raise OptionError(f"{self.name}: the model {self.options['model']} ({self.model.family}) reads no "
                              f"reference (a quality-estimation model, CometKiwi-like): use -m cometkiwi")
        if not self.with_reference and self.model.needs_reference:
            raise OptionError(f"{self.name}: the model {self.options['model']} ({self.model.family}) needs a "
                              f"reference; use -m comet")
        self.min_references = self.max_references = 2 if self.uses_reference else 1

    def _fields(self) -> str:
        return "the source and one reference" if self.uses_reference else "the source (no reference)"

    def block_stats(self, hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> List[List[Any]]:
        scores = self.score_rows(references[0], hypotheses, references[1] if self.uses_reference else None)
        return [[float(s), 1] for s in scores]

    def score_rows(self, sources: Sequence[str], hypotheses: Sequence[str],
                   references: Optional[Sequence[str]]) -> Any:
        """The model's score of each row (float32 numpy array); inputs past the encoder's limit counted, and cut,
        refused or scored in sentence windows as ``on_long`` says."""
        src, mt = list(sources), list(hypotheses)
        ref = None if references is None else list(references)
        on_long = self.options["on_long"]
        if on_long == "truncate":
            scores = self.model.score(src, mt, ref)
            self.last_cut, self.last_windowed = self.model.last_cut, [False] * len(mt)
            return scores
        cut = self.model.cut_flags(src, mt, ref)
        if on_long == "error" and any(cut):
            raise InputError(f"{self.name}: segment {cut.index(True) + 1}'s input is longer than the encoder's "
                             f"{self.max_length} tokens; -o {self.name}.on_long=truncate cuts it as unbabel-comet "
                             f"does, -o {self.name}.on_long=window scores it in sentence windows")
        self.last_cut, self.last_windowed = list(cut), [False] * len(mt)
        if on_long == "error" or not any(cut):
            return self.model.score(src, mt, ref)
        return self._windowed(src, mt, ref, cut)

    def _windowed(self, src: List[str], mt: List[str], ref: Optional[List[str]], cut: List[bool]) -> Any:
        """``on_long=window`` (evaluators/neural/windows.py): each row with a cut input scored in sentence windows
        of the fields the model reads, the windows' scores weighted by hypothesis characters."""
        import numpy as np

        from evalpipe.evaluators.neural.windows import combine, windows

        reads_src = not self.model.joint_input or self.model.unified_reads_source
        used = (1,) + ((0,) if reads_src else ()) + ((2,) if ref is not None else ())
        rows = list(zip(src, mt, ref if ref is not None else [None] * len(mt)))

        def fits(row: Any) -> bool:
            return not self.model.cut_flags([row[0]], [row[1]], None if ref is None else [row[2]])[0]

        parts = {i: found for i in range(len(rows)) if cut[i]
                 for found in [windows(rows[i], used, fits)] if found is not None}
        keep = [i for i in range(len(rows)) if i not in parts]
        flat = [rows[i] for i in keep] + [p for i in sorted(parts) for p in parts[i]]
        scores = self.model.score([r[0] for r in flat], [r[1] for r in flat],
                                  None if ref is None else [r[2] for r in flat])
        out, window_cut = combine(len(rows), keep, parts, scores.tolist(), self.model.last_cut[len(keep):])
        for i, was_cut in window_cut.items():
            self.last_cut[i], self.last_windowed[i] = was_cut, True
        return np.asarray(out, dtype=np.float32)

    def utility_matrices(self, candidates: Sequence[Sequence[str]],
                         pseudo_references: Optional[Sequence[Sequence[str]]], sources: Sequence[str],
                         aggregate: bool = False) -> List[Any]:
        """MBR utilities of each segment (float32): ``candidates x pseudo-references`` model scores, or one column
        against the mean of the pseudo-references' vectors (``aggregate``), as mbrs 0.1.8's ``MetricCOMET``; for
        ``cometkiwi`` each candidate's own score (a column: a reranker, as mbrs's ``MetricCOMETkiwi``)."""
        if not self.uses_reference:
            if self.with_reference:
                raise UsageError(f"{self.name}: the model {self.options['model']} ({self.model.family}) reads no "
                                 f"reference, so MBR has nothing to compare candidates against; rank them by their "
                                 f"own scores with -m cometkiwi")
            if pseudo_references is not None or aggregate:
                raise UsageError(f"{self.name} ranks each candidate by its own score: pseudo-references and "
                                 f"aggregation are not used (use -m comet for MBR against pseudo-references)")
            return self.own_scores(candidates, sources)
        refs = candidates if pseudo_references is None else pseudo_references
        return self.model.mbr_matrices(candidates, refs, sources, aggregate)

    def sentence_vectors(self, texts: Sequence[str]) -> Any:
        """The model's sentence vectors (float32 numpy, one a row): what centroid MBR clusters."""
        if not self.uses_reference:
            raise UsageError(f"{self.name} reads no reference: centroid MBR has no pseudo-references to cluster")
        return self.model.mbr_vectors(texts)

    def scores_against(self, sources: Sequence[str], candidates: Sequence[Sequence[str]], centroids: Sequence[Any]) -> Any:
        """Each segment's ``candidates x centroids`` scores (float32): centroid vectors in place of references."""
        return self.model.mbr_against(sources, candidates, centroids)

    def signature(self, nrefs: Optional[int] = None) -> str:
        from evalpipe.evaluators.neural.checkpoint import model_name
        from evalpipe.evaluators.neural.weights import installed_version

        if not hasattr(self, "_model_name"):
            self._model_name = model_name(self.model.files)  # (hashed once: signatures are asked for often)
        return (f"{self.name}|model:{self._model_name}|{self.model.family}"
                f"|ref:{'yes' if self.uses_reference else 'no'}|fp32"
                + ("|long:window" if self.options["on_long"] == "window" else "") + f"|version:{installed_version()}")


class CometKiwi(Comet):
    """A COMET model scoring without references (CometKiwi, referenceless models; a unified model in QE mode)."""

    name = "cometkiwi"
    with_reference = False
    CONTRACT_TINY_MODEL = "unified"
    CONTRACT_EXAMPLES = [("the cat sat on the mat .", ["die Katze sass auf der Matte ."]),
                         ("a dog barks", ["ein Hund"]), ("", ["leer"]), ("Ünïcödé words, ok?", ["Wörter, ok?"])]
