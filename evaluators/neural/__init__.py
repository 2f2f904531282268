"""COMET-family models on torch alone: the room the ``comet`` and ``cometkiwi`` metric plugins score through.

* :mod:`.checkpoint` -- a model folder as unbabel-comet writes it (``hparams.yaml``, ``checkpoints/model.ckpt``) plus
  the encoder's ``config.json`` and ``tokenizer.json``; every missing or foreign file is one line naming it;
* :mod:`.encoder` -- the XLM-RoBERTa encoder (Hugging Face's ``XLMRobertaModel`` layout and parameter names);
* :mod:`.estimator` -- what COMET puts on top: the layer mix (``LayerwiseAttention``), pooling and the feed-forward
  estimator of each family (``RegressionMetric``, ``ReferencelessRegression``, ``UnifiedMetric``);
* :mod:`.scorer` -- batches sorted by length, each distinct sentence encoded once, the threads and the device.

Outside the room, :mod:`evalpipe.tiny_comet` writes a tiny model with random weights in the same layout (examples,
smoke tests, benches).

Why not unbabel-comet itself: it pins numpy<2, torchmetrics<0.11 and jsonargparse 3.13.1, which cannot live beside
evalpipe's core install; so the forward pass is written here on torch and the ``tokenizers`` library, and the tests
prove it equal to unbabel-comet 2.2.7's ``load_from_checkpoint(...).predict(...)`` run in its own environment.
"""
