"""Scoring with a COMET model: tokenization, length-sorted batches, each distinct input encoded once.

:class:`CometModel` loads a model folder (:mod:`.checkpoint`) into the encoder (:mod:`.encoder`) and head
(:mod:`.estimator`), float32 throughout, on the CPU (:mod:`.threads`: every core for large batches, one for small
ones) or the GPU torch sees.

* Regression families encode each sentence alone, so a sentence's vector is computed once whatever its role (source,
  hypothesis, reference) and however many rows share it; vectors are kept in a bounded LRU cache (``cache`` entries)
  so a served model or an MBR decoder reuses them across calls.
* Unified models encode the joint sequence of a row, so identical rows are scored once.
* Batches hold ``batch_size`` inputs sorted by token length (less padding), or ``batch_tokens`` padded tokens; on a
  GPU that runs out of memory a batch is split in halves down to one input before the error is one line
  (:mod:`evalpipe.evaluators.neural.batches`).  Scores move by ~1e-6 with batch composition, as
  unbabel-comet's own do.

Tokenization is the encoder's ``tokenizer.json`` through the ``tokenizers`` library (what ``XLMRobertaTokenizerFast``
runs): ``<s> pieces </s>`` truncated to ``max_position_embeddings - 4`` pieces, as COMET's ``max_length`` is; joint
sequences are ``<s> a </s></s> b </s>`` (``[... </s></s> c </s>]``), cut to ``max_position_embeddings - 2`` tokens when
too long, as COMET's ``concat_sequences`` does.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Dict, Hashable, List, Optional, Sequence, Tuple

import numpy as np

from evalpipe.errors import InputError, MissingDependency, UsageError
from evalpipe.evaluators.neural.checkpoint import ModelFiles, locate
from evalpipe.optional_torch import load



def _torch():
    return load("COMET models need the Python package 'torch', which is not installed: pip install 'evalpipe[comet]'")


class CometModel:
    """A COMET model ready to score (see the module docstring)."""

    def __init__(self, path: str, device: str = "auto", batch_size: int = 64, threads: int = 0,
                 cache: int = 8192) -> None:
        torch = _torch()
        try:
            from tokenizers import Tokenizer
        except ImportError:
            raise MissingDependency.module("tokenizers", "a COMET model") from None
        from evalpipe.evaluators.neural.encoder import XLMREncoder, check_config
        from evalpipe.evaluators.neural.estimator import Head

        files: ModelFiles = locate(path)
        self.files = files
        self.family = files.family
        segments = files.hparams.get("input_segments", ["mt", "src", "ref"])
        if self.family == "xcomet_metric":
            segments = ["mt", "src", "ref"]  # as XCOMETMetric sets them
        self.joint_input = self.family in ("unified_metric", "xcomet_metric")
        self.reads_reference = self.family == "regression_metric" or (self.joint_input and "ref" in segments)
        self.needs_reference = self.family == "regression_metric"
        self.unified_reads_source = "src" in segments
        try:
            check_config(files.config, str(files.tokenizer.parent / "config.json"))
            self.encoder = XLMREncoder(files.config, xl=files.hparams.get("encoder_model") == "XLM-RoBERTa-XL")
            self.head = Head(files.family, files.hparams, self.encoder.hidden_size, self.encoder.num_layers)
        except (KeyError, ValueError, TypeError) as exc:
            raise InputError(f"cannot build the model: {type(exc).__name__}: {exc}", str(files.folder)) from None
        self._load(files.state_dict)
        files.state_dict = {}
        try:
            self.tokenizer = Tokenizer.from_file(str(files.tokenizer))
        except Exception as exc:  # noqa: BLE001 - a foreign tokenizer file is one line
            raise InputError(f"not a tokenizers file: {exc}", str(files.tokenizer)) from None
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()
        ids = {t: self.tokenizer.token_to_id(t) for t in ("<s>", "</s>", "<pad>")}
        if None in ids.values():
            raise InputError(f"expected XLM-R's special tokens <s>, </s>, <pad>; found {ids}", str(files.tokenizer))
        self.bos, self.eos, self.pad = ids["<s>"], ids["</s>"], ids["<pad>"]
        if self.pad != self.encoder.padding_idx:
            raise InputError(f"<pad> is id {self.pad} but the encoder's pad_token_id is {self.encoder.padding_idx}",
                             str(files.tokenizer))
        from evalpipe.evaluators.neural.devices import resolve as devices

        self.devices = devices(torch, device)
        self.device = self.devices[0]  # where vectors are kept and the estimator runs
        from evalpipe.evaluators.neural.threads import Threads

        self.threads = Threads(torch, threads, self.device)
        self.encoder.to(self.device).eval()
        self.head.to(self.device).eval()
        #: the encoder and the pooling of each device (evaluators/neural/devices.py); the first is the model's own
        self.replicas = [(self.device, self.encoder, self.head)]
        if len(self.devices) > 1:
            import copy

            self.replicas += [(d, copy.deepcopy(self.encoder).to(d), copy.deepcopy(self.head).to(d))
                              for d in self.devices[1:]]
        self.batch_size = batch_size
        self.batch_tokens = 0  # padded tokens a batch holds at most (0: batch_size inputs only)
        self._cache: "OrderedDict[Hashable, object]" = OrderedDict()
        self._cache_size = cache
        self.timings: Dict[str, float] = {"tokenize": 0.0, "encode": 0.0, "estimate": 0.0}
        #: texts (and joint inputs) cut at the encoder's limit so far: score() flags the rows that hold one
        #: (``last_cut``); rare, so kept whole, and a cached vector's text was tokenized, hence seen, before
        self.long_texts: set = set()
        self.long_rows: set = set()
        self.last_cut: List[bool] = []

    def _load(self, state: Dict[str, object]) -> None:
        enc, head = {}, {}
        for key, value in state.items():
            if key.startswith("encoder.model."):
                enc[key[len("encoder.model."):]] = value
            elif key.startswith(("layerwise_attention.", "estimator.", "hidden2tag.")):
                head[key] = value
        where = str(self.files.folder / "checkpoints" / "model.ckpt")
        for module, part in ((self.encoder, enc), (self.head, head)):
            wanted = module.state_dict()
            missing = sorted(set(wanted) - set(part))
            prefix = "encoder.model." if module is self.encoder else ""
            if missing:
                raise InputError(f"the checkpoint lacks {prefix}{missing[0]} (and {len(missing) - 1} more) of a "
                                 f"{self.family} model", where)
            for key in wanted:
                if tuple(part[key].shape) != tuple(wanted[key].shape):
                    raise InputError(f"{prefix}{key} has shape {tuple(part[key].shape)}, the configuration makes "
                                     f"{tuple(wanted[key].shape)}", where)
            module.load_state_dict({k: part[k].float() for k in wanted}, strict=True)

    # -- tokens ---------------------------------------------------------------------------------
    def tokens(self, texts: Sequence[str]) -> List[List[int]]:
        """``<s> pieces </s>`` of each text, truncated as COMET's tokenizer call is."""
        import time

        start = time.perf_counter()
        keep = self.encoder.max_positions - 4
        encoded = self.tokenizer.encode_batch(list(texts), add_special_tokens=False)
        self.long_texts.update(t for t, e in zip(texts, encoded) if len(e.ids) > keep)
        out = [[self.bos, *e.ids[:keep], self.eos] for e in encoded]
        self.timings["tokenize"] += time.perf_counter() - start
        return out

    def joint(self, parts: Sequence[List[int]]) -> List[int]:
        """COMET's ``concat_sequences`` of tokenized inputs (each ``<s> ... </s>``)."""
        seq = parts[0]
        for other in parts[1:]:
            seq = [self.bos, *seq[1:-1], self.eos, self.eos, *other[1:-1], self.eos]
        if self.joint_too_long(parts):
            seq = seq[:self.encoder.max_positions]
        return seq

    def joint_too_long(self, parts: Sequence[List[int]]) -> bool:
        """Whether COMET cuts the joint input of ``parts`` at the encoder's positions."""
        return sum(len(p) - 2 for p in parts) > self.encoder.max_positions - (1 + 2 * len(parts))

    # -- encoding -----------------------------------------------------------------------------
    def _run(self, sequences: List[List[int]], mt_lens: Optional[List[int]] = None):
        """Position-pooled vectors of token sequences (one tensor row each), in length-sorted batches; for xCOMET
        ``(vector, tag probabilities of the first mt_lens[i] tokens)``."""
        from evalpipe.evaluators.neural.devices import run_on_devices

        return run_on_devices(_torch(), len(self.replicas), [len(q) for q in sequences], self.batch_size,
                              self.batch_tokens,
                              lambda r, chunk: self._batch([sequences[i] for i in chunk],
                                                           None if mt_lens is None else [mt_lens[i] for i in chunk], r))

    def _batch(self, batch: List[List[int]], mt_lens: Optional[List[int]] = None, replica: int = 0):
        torch = _torch()
        import time

        start = time.perf_counter()
        width = max(map(len, batch))
        ids = torch.full((len(batch), width), self.pad, dtype=torch.long)
        for row, seq in enumerate(batch):
            ids[row, :len(seq)] = torch.tensor(seq, dtype=torch.long)
        mask = ids.ne(self.pad).long()
        device, encoder, head = self.replicas[replica]
        ids, mask = ids.to(device), mask.to(device)
        self.threads.for_batch(len(batch))
        with torch.inference_mode():
            states = encoder(ids, mask)
            vectors = head.pool(states, ids, mask, self.pad).to(self.device)
            tags = head.tag_probabilities(states).to(self.device) if mt_lens is not None else None
        self.timings["encode"] += time.perf_counter() - start
        if tags is None:
            return list(vectors.unbind(0))
        return [(v, t[:n]) for v, t, n in zip(vectors.unbind(0), tags.unbind(0), mt_lens)]

    def embed(self, texts: Sequence[str]):
        """Sentence vectors of ``texts`` (regression families), each distinct text encoded once (LRU cached)."""
        torch = _torch()
        found = self._cached(dict.fromkeys(texts))
        todo = [t for t in dict.fromkeys(texts) if t not in found]
        if todo:
            for text, vector in zip(todo, self._run(self.tokens(todo))):
                found[text] = vector
                self._remember(text, vector)
        return torch.stack([found[t] for t in texts]) if texts else torch.zeros(0, self.encoder.hidden_size)

    def _cached(self, keys) -> Dict[Hashable, object]:
        """The cached vectors of ``keys`` (each found one becomes the most recent); the cache may hold fewer
        entries than one call needs, so a call keeps its own vectors and the cache only what fits."""
        found = {}
        for key in keys:
            vector = self._cache.get(key)
            if vector is not None:
                self._cache.move_to_end(key)
                found[key] = vector
        return found

    def _remember(self, key: Hashable, value: object) -> None:
        self._cache[key] = value
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)

    def estimate(self, table, mt, src=None, ref=None) -> np.ndarray:
        """Scores (float32) of rows given as indices into ``table`` (sentence vectors, one a row): row k is
        ``mt[k]`` against ``src[k]`` and ``ref[k]``; gathered and estimated 4096 rows at a time, so memory is bounded
        by the block, not the number of rows (an MBR matrix)."""
        torch = _torch()
        import time

        start = time.perf_counter()
        parts = []
        mt = torch.as_tensor(np.asarray(mt, dtype=np.int64), device=table.device)
        src = None if src is None else torch.as_tensor(np.asarray(src, dtype=np.int64), device=table.device)
        ref = None if ref is None else torch.as_tensor(np.asarray(ref, dtype=np.int64), device=table.device)
        self.threads.for_batch(len(mt))
        with torch.inference_mode():
            for lo in range(0, len(mt), 4096):
                hi = lo + 4096
                parts.append(self.head.estimate(table[mt[lo:hi]], None if src is None else table[src[lo:hi]],
                                                None if ref is None else table[ref[lo:hi]]).float().cpu().numpy())
        self.timings["estimate"] += time.perf_counter() - start
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)

    def table(self, texts: Sequence[str]):
        """``(vectors, index)``: one vector per distinct text (regression families) and each text's row."""
        distinct = list(dict.fromkeys(texts))
        return self.embed(distinct), {t: i for i, t in enumerate(distinct)}

    # -- scores -------------------------------------------------------------------------------
    def score(self, sources: Sequence[str], hypotheses: Sequence[str],
              references: Optional[Sequence[str]] = None, chunk: int = 16384) -> np.ndarray:
        """Each row's score (float32), as unbabel-comet's ``predict`` gives it; ``references`` None scores without
        (a referenceless or unified model).  Rows are taken ``chunk`` at a time, so memory is bounded by the chunk and
        the vector cache, not the corpus."""
        if references is None and self.needs_reference:
            raise InputError(f"this {self.family} model needs references")
        out, self.last_cut = [], []
        for lo in range(0, len(hypotheses), chunk):
            hi = lo + chunk
            src, mt = sources[lo:hi], hypotheses[lo:hi]
            ref = None if references is None else references[lo:hi]
            out.append(self._score_chunk(src, mt, ref))
        return np.concatenate(out) if out else np.zeros(0, dtype=np.float32)

    def _score_chunk(self, src: Sequence[str], mt: Sequence[str], ref: Optional[Sequence[str]]) -> np.ndarray:
        if not self.joint_input:
            vectors, index = self.table([*mt, *src, *(ref or [])])
            rows = (lambda texts: [index[t] for t in texts])
            self.last_cut += self._texts_cut(src, mt, ref)
            return self.estimate(vectors, rows(mt), rows(src),
                                 rows(ref) if self.family == "regression_metric" else None)
        layouts = self._layouts(ref is not None)
        texts = {"mt": mt, "src": src, "ref": ref}
        rows = [tuple((name, texts[name][i]) for name in layout) for layout in layouts for i in range(len(mt))]
        distinct = list(dict.fromkeys(rows))
        found = self._cached(distinct)
        todo = [r for r in distinct if r not in found]
        xcomet = self.family == "xcomet_metric"
        if todo:
            words = sorted({text for r in todo for _, text in r})
            ids = dict(zip(words, self.tokens(words)))
            sequences = [self.joint([ids[text] for _, text in r]) for r in todo]
            self.long_rows.update(r for r in todo if self.joint_too_long([ids[text] for _, text in r]))
            mt_lens = [min(len(ids[r[0][1]]), len(q)) for r, q in zip(todo, sequences)] if xcomet else None
            for r, vector in zip(todo, self._run(sequences, mt_lens)):
                found[r] = vector
                self._remember(r, vector)
        torch = _torch()
        vectors = torch.stack([found[r][0] if xcomet else found[r] for r in distinct])
        scores = self.estimate(vectors, range(len(distinct)))
        where = {r: i for i, r in enumerate(distinct)}
        long_rows = [r in self.long_rows or any(text in self.long_texts for _, text in r) for r in rows]
        self.last_cut += [any(long_rows[k * len(mt) + i] for k in range(len(layouts))) for i in range(len(mt))]
        per_layout = np.array([scores[where[r]] for r in rows], dtype=np.float32).reshape(len(layouts), len(mt))
        if xcomet:
            return self._xcomet_scores(per_layout, [[found[rows[k * len(mt) + i]][1] for k in range(len(layouts))]
                                                    for i in range(len(mt))])
        if len(layouts) == 1:
            return per_layout[0]
        return torch.from_numpy(per_layout).mean(dim=0).numpy()

    def _layouts(self, with_reference: bool) -> Tuple[Tuple[str, ...], ...]:
        """The joint inputs a unified model reads of a row (unbabel-comet's): their scores are averaged."""
        use_ref = with_reference and self.reads_reference
        if self.unified_reads_source and use_ref:
            return (("mt", "src"), ("mt", "ref"), ("mt", "src", "ref"))
        return (("mt", "ref"),) if use_ref else (("mt", "src"),)

    def _texts_cut(self, src: Sequence[str], mt: Sequence[str], ref: Optional[Sequence[str]]) -> List[bool]:
        """Families that encode each text alone: whether a text the model reads of each row was cut (its
        tokenization seen before, :meth:`tokens`)."""
        reads_ref = ref is not None and self.family == "regression_metric"
        return [m in self.long_texts or s in self.long_texts or (reads_ref and r in self.long_texts)
                for m, s, r in zip(mt, src, ref or mt)]

    def cut_flags(self, sources: Sequence[str], hypotheses: Sequence[str],
                  references: Optional[Sequence[str]] = None) -> List[bool]:
        """Whether COMET would cut anything the model reads of each row (tokenization only, no model run)."""
        words = sorted(set(hypotheses) | set(sources) | set(references or ()))
        ids = dict(zip(words, self.tokens(words)))
        if not self.joint_input:
            return self._texts_cut(sources, hypotheses, references)
        texts = {"mt": hypotheses, "src": sources, "ref": references}
        return [any(self.joint_too_long([ids[texts[name][i]] for name in layout]) or
                    any(texts[name][i] in self.long_texts for name in layout)
                    for layout in self._layouts(references is not None)) for i in range(len(hypotheses))]

    #: xCOMET's weights: the regression scores of [mt;src], [mt;ref], [mt;src;ref], then the MQM score of the spans
    XCOMET_SCORE_WEIGHTS = (0.12, 0.33, 0.33, 0.22)
    #: and of each input's tag probabilities
    XCOMET_SPAN_WEIGHTS = (0.1667, 0.3333, 0.5)

    def _xcomet_scores(self, per_layout: np.ndarray, probabilities: List[List[object]]) -> np.ndarray:
        """XCOMETMetric's ``predict_step``: each input's regression score capped at 1, weighted, plus 0.22 x the MQM
        score of the error spans decoded from the tag probabilities (weighted over the inputs; a token's tag is the
        most probable one; a span is a run of I- tags, of its first token's severity, counted when an O ends it;
        minor 1, major 5, critical 10, at most 25, scaled to (25 - sum) / 25)."""
        torch = _torch()
        three = per_layout.shape[0] == 3
        regression = torch.from_numpy(per_layout)
        mqm = []
        for parts in probabilities:
            if three:
                weights = torch.tensor(self.XCOMET_SPAN_WEIGHTS)
                probs = torch.sum(torch.stack([p * w for p, w in zip(parts, weights)]), dim=0)
            else:
                probs = parts[0]
            labels = torch.topk(probs, 1).indices[:, 0].tolist()
            total, in_span, severity = 0, False, 0
            for label in labels:
                if label and not in_span:
                    in_span, severity = True, label
                elif not label and in_span:
                    total += (0, 1, 5, 10)[severity]
                    in_span = False
            mqm.append(min(total, 25))
        mqm_scores = (torch.tensor(mqm) * -1 + 25) / 25
        capped = torch.where(regression > 1.0, 1.0, regression)
        w = self.XCOMET_SCORE_WEIGHTS
        if three:
            final = torch.stack([c * wk for c, wk in zip(capped, w[:3])], dim=0).sum(dim=0) + mqm_scores * w[3]
        else:
            final = capped[0] * sum(w[:3]) + mqm_scores * w[3]
        return final.float().numpy()

    # -- MBR ------------------------------------------------------------------------------------
    def mbr_vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Sentence vectors (float32, one a row) for centroid MBR: what mbrs 0.1.8's ``MetricCOMET.encode`` gives."""
        if self.family != "regression_metric":
            raise UsageError(f"centroid MBR clusters sentence vectors: a {self.family} model has none (it encodes "
                             f"each pair jointly)")
        return self.embed(list(texts)).float().cpu().numpy()

    def mbr_against(self, sources: Sequence[str], candidates: Sequence[Sequence[str]],
                    centroids: Sequence[np.ndarray]) -> List[np.ndarray]:
        """For each segment, ``candidates x centroids`` (float32): each candidate's score against each centroid
        vector, with the segment's source (mbrs's ``pairwise_scores_from_ir`` against k-means centroids)."""
        torch = _torch()
        vectors, index = self.table([t for cands, src in zip(candidates, sources) for t in (*cands, src)])
        extra = [torch.as_tensor(np.asarray(c, dtype=np.float32)).to(vectors) for c in centroids]
        base = len(vectors)
        vectors = torch.cat([vectors, *extra]) if extra else vectors
        blocks = []
        for cands, src, c in zip(candidates, sources, centroids):
            blocks.append((cands, src, list(range(base, base + len(c)))))
            base += len(c)
        return self._blocks(vectors, index, blocks)

    def _blocks(self, vectors, index: Dict[str, int], blocks: Sequence[Tuple[Sequence[str], str, List[int]]]
                ) -> List[np.ndarray]:
        """Each block's ``candidates x columns`` scores (float32): ``(candidates, source, columns)`` a segment, the
        columns rows of ``vectors`` that stand as references; one estimator run for every block."""
        mt, src_rows, ref_rows, shapes = [], [], [], []
        for cands, src, columns in blocks:
            for h in cands:
                mt += [index[h]] * len(columns)
                ref_rows += columns
            src_rows += [index[src]] * (len(cands) * len(columns))
            shapes.append((len(cands), len(columns)))
        scores = self.estimate(vectors, mt, src_rows, ref_rows)
        out, at = [], 0
        for n, m in shapes:
            out.append(scores[at:at + n * m].reshape(n, m))
            at += n * m
        return out

    def mbr_matrices(self, candidates: Sequence[Sequence[str]], pseudo_references: Sequence[Sequence[str]],
                     sources: Sequence[str], aggregate: bool = False) -> List[np.ndarray]:
        """For each segment, the float32 matrix of ``score(source, candidate i, pseudo-reference j)`` (mbrs 0.1.8's
        ``MetricCOMET.pairwise_scores``), or with ``aggregate`` the column of each candidate against the mean of the
        pseudo-references' sentence vectors (its ``expected_scores_reference_aggregation``).  Every distinct sentence
        of the segments given is encoded once; the estimator runs on every pair (regression families; a unified model
        encodes each pair's joint sequence, and aggregation needs sentence vectors)."""
        torch = _torch()
        if self.family != "regression_metric":
            if aggregate:
                raise UsageError(f"reference aggregation averages sentence vectors: a {self.family} model has none "
                                 f"(it encodes each pair jointly)")
            out = []
            for cands, refs, src in zip(candidates, pseudo_references, sources):
                rows_h = [h for h in cands for _ in refs]
                rows_r = [r for _ in cands for r in refs]
                out.append(self.score([src] * len(rows_h), rows_h, rows_r).reshape(len(cands), len(refs)))
            return out
        vectors, index = self.table([t for cands, refs, src in zip(candidates, pseudo_references, sources)
                                     for t in (*cands, *refs, src)])
        if aggregate:
            extra = []
            for refs in pseudo_references:
                extra.append(vectors[[index[r] for r in refs]].mean(dim=0, keepdim=True))
            base = len(vectors)
            vectors = torch.cat([vectors, *extra]) if extra else vectors
        return self._blocks(vectors, index, [(cands, src, [base + g] if aggregate else [index[r] for r in refs])
                                             for g, (cands, refs, src) in enumerate(zip(candidates, pseudo_references,
                                                                                        sources))])
