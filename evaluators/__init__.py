"""Built-in metric plugins, one module each, at this level: :mod:`.bleu`, :mod:`.chrf`, :mod:`.ter`,
:mod:`.token_f1`, :mod:`.accuracy`, :mod:`.latency` (simultaneous translation) and
:mod:`.stream_metrics` (long-form streams).  They are registered through the ``evalpipe.metrics``
entry-point group exactly as a third-party plugin would be, and imported only when used;
:mod:`.sacrebleu_api` holds every call they make to sacrebleu's private API.

What they are built on lives in three rooms:

* :mod:`.kernels` -- the compiled kernels, each a C source with its Python facade and reference
  (tokenizers and unit splitters included);
* :mod:`.formulas` -- vectorised numpy formulas (latencies, scores of many stats rows);
* :mod:`.realign` -- long-form output rebuilt from streaming logs and realigned to reference sentences.
"""
