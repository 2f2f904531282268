"""The CPU threads torch runs a batch on.

``threads=N`` is honoured as given.  The default (0) never oversubscribes: every core this process may use
(``os.sched_getaffinity``) for a batch of 16 inputs or more, one thread for a smaller one -- a served model
answering one SCORE line at a time, where torch's threads would wait on each other and on whatever else runs
(measured: ``serve comet`` on a busy 2-core machine, 15 s for 50 lines with 2 threads, 0.5 s with one).
"""
from __future__ import annotations

import os
from typing import Any

#: inputs from which a batch gets every core
SMALL_BATCH = 16


class Threads:
    def __init__(self, torch: Any, threads: int, device: Any) -> None:
        self.torch, self.auto = torch, threads == 0
        self.most = threads or len(os.sched_getaffinity(0))
        self.cpu = device.type == "cpu"
        self.now = 0
        if self.cpu:
            self.use(self.most)

    def use(self, count: int) -> None:
        if count != self.now:
            self.torch.set_num_threads(count)
            self.now = count

    def for_batch(self, rows: int) -> None:
        """Set the threads for a batch of ``rows`` inputs."""
        if self.cpu and self.auto:
            self.use(self.most if rows >= SMALL_BATCH else 1)
