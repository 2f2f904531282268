"""The client driver: runs an agent against an evaluation server over HTTP with N threads.

Each thread keeps one HTTP/1.1 connection open (keep-alive) for all its requests; a reused
connection that the server closed while idle is reopened once.
"""
from __future__ import annotations

import http.client
import json
import queue
import threading
from typing import Any, Callable, Dict, Optional
from urllib.parse import urlparse

from evalpipe.errors import EvalpipeError
from evalpipe.simul.agent import EOS, Agent


class ServerError(EvalpipeError):
    """The server answered with an error or could not be reached."""


class HTTPClient:
    """Tiny JSON client for the server API (standard library only), one kept-alive connection per thread."""

    def __init__(self, base_url: str, timeout: float = 60) -> None:
        self.base = base_url.rstrip("/")
        url = urlparse(self.base)
        if url.scheme != "http" or not url.hostname:
            raise ServerError(f"expected a server URL such as http://127.0.0.1:12321, got {base_url!r}")
        self.host, self.port, self.prefix = url.hostname, url.port or 80, url.path
        self.timeout = timeout
        self._local = threading.local()

    def call(self, method: str, path: str, body: Optional[str] = None) -> Dict[str, Any]:
        data = body.encode("utf-8") if body is not None else None
        for attempt in (1, 2):
            connection = getattr(self._local, "connection", None)
            reused = connection is not None
            if connection is None:
                connection = self._local.connection = http.client.HTTPConnection(self.host, self.port,
                                                                                 timeout=self.timeout)
            try:
                connection.request(method, self.prefix + path, body=data)
                reply = connection.getresponse()
                payload = reply.read()
            except OSError as exc:
                connection.close()
                self._local.connection = None
                if reused and attempt == 1 and isinstance(exc, (ConnectionResetError, BrokenPipeError)):
                    continue  # the server closed an idle connection before reading this request
                raise ServerError(f"cannot reach {self.base}: {exc}") from None
            if reply.status >= 400:
                raise ServerError(f"{method} {path}: HTTP {reply.status}: {payload.decode('utf-8', 'replace')}")
            return json.loads(payload.decode("utf-8"))
        raise AssertionError("unreachable")


def run_sentence(client: HTTPClient, agent: Agent, sent_id: int, max_steps: int = 100000) -> None:
    """Drive one sentence to its end: GET segments and PUT words as the agent's policy says."""
    states = agent.init_states()
    size = f"&segment_size={agent.segment_size}" if agent.segment_size else ""
    for _ in range(max_steps):
        action = agent.policy(states)
        if action.kind == "GET":
            if states["finished_source"]:
                raise RuntimeError(f"sentence {sent_id}: the agent asked for more source after {EOS}")
            agent.update_states(states, client.call("GET", f"/src?sent_id={sent_id}{size}"))
        else:
            client.call("PUT", f"/hypo?sent_id={sent_id}", action.value)
            states["target"].append(action.value)
        if agent.finish_eval(states):
            return
    raise RuntimeError(f"sentence {sent_id}: no {EOS} after {max_steps} actions")


def evaluate(make_agent: Callable[[], Agent], base_url: str, num_threads: int = 1, reset: bool = True) -> Dict[str, Any]:
    """Run every sentence (``num_threads`` at once, one agent per thread) and return the scores."""
    if num_threads < 1:
        raise ValueError(f"expected at least one thread, got {num_threads}")
    client = HTTPClient(base_url)
    if reset:
        client.call("POST", "/")
    todo: "queue.Queue[int]" = queue.Queue()
    for i in range(client.call("GET", "/")["num_sentences"]):
        todo.put(i)
    errors = []

    def worker() -> None:
        agent = make_agent()
        while True:
            try:
                i = todo.get_nowait()
            except queue.Empty:
                return
            try:
                agent.reset()
                run_sentence(client, agent, i)
            except Exception as exc:  # reported after the other threads finish
                errors.append(f"sentence {i}: {exc}")

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(num_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise ServerError(f"{len(errors)} sentence(s) failed; first: {errors[0]}")
    return client.call("GET", "/result")
