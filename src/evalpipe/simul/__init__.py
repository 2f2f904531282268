"""Simultaneous translation: the evaluation server, the agent API and the client driver.

* :mod:`evalpipe.simul.server` -- an HTTP server compatible with the IWSLT 2020 shared-task server;
* :mod:`evalpipe.simul.agent` -- the agent base class (GET/SEND policy), a wait-k agent and a
  deterministic demo translator;
* :mod:`evalpipe.simul.driver` -- runs an agent against a server with N threads;
* :mod:`evalpipe.simul.records` -- SimulEval instance records as typed input;
* :mod:`evalpipe.simul.results` -- BLEU and latency of a set of finished instances.
"""
