"""Neural metrics on torch alone: the room the ``comet``, ``cometkiwi`` and ``metricx`` plugins score through.

COMET (XLM-R encoders):

* :mod:`.checkpoint` -- a model folder as unbabel-comet writes it (``hparams.yaml``, ``checkpoints/model.ckpt``) plus
  the encoder's ``config.json`` and ``tokenizer.json``; every missing or foreign file is one line naming it;
* :mod:`.encoder` -- the XLM-RoBERTa encoder (Hugging Face's ``XLMRobertaModel`` layout and parameter names);
* :mod:`.estimator` -- what COMET puts on top: the layer mix (``LayerwiseAttention``), pooling and the feed-forward
  estimator of each family (``RegressionMetric``, ``ReferencelessRegression``, ``UnifiedMetric``);
* :mod:`.scorer` -- each distinct sentence encoded once, the vector cache, inputs cut at the encoder's limit counted.

MetricX (mT5):

* :mod:`.mt5` -- the mT5 encoder and one decoder step, read out as metricx's ``MT5ForRegression``;
* :mod:`.metricx_model` -- the model folder, its tokenizer (``tokenizer.json`` or ``spiece.model``) and input ids.

Shared:

* :mod:`.model_metric` -- what the metric plugins share (stats, fields, the reranker's own scores);
* :mod:`.batches` -- length-sorted batches, packed by inputs or padded tokens; a GPU out of memory halves them;
* :mod:`.windows` -- sentence windows for inputs past a model's limit (``on_long=window``);
* :mod:`.weights` -- safetensors and ``pytorch_model.bin`` weights, the checkpoint's content id for signatures;
* :mod:`.hub` -- a hub id found in the local Hugging Face cache, never downloaded;
* :mod:`.threads` -- CPU threads that never oversubscribe the machine.

Outside the room, :mod:`evalpipe.tiny_comet` and :mod:`evalpipe.tiny_metricx` write tiny models with random weights
in the same layouts (examples, smoke tests, benches).

Why not unbabel-comet itself: it pins numpy<2, torchmetrics<0.11 and jsonargparse 3.13.1, which cannot live beside
evalpipe's core install; so the forward pass is written here on torch and the ``tokenizers`` library, and the tests
prove it equal to unbabel-comet 2.2.7's ``load_from_checkpoint(...).predict(...)`` run in its own environment.
"""
