"""Long-form output, rebuilt and realigned: not metrics, not kernels.

* :mod:`.stream_output` rebuilds a talk's final output, and when each unit was emitted, from a
  streaming log's steps;
* :mod:`.mwer` (simulstream's way, mweralign) and :mod:`.soft` (OmniSTEval's way) cut that output into
  the reference's sentences;
* :mod:`.talks` gives a talk's realigned sentences by the talk's resegmenter, once per talk and process.

The long-form metric plugins (:mod:`evalpipe.evaluators.stream_metrics`) score what this package gives.
"""
