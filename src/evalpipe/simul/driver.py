"""The client driver: runs an agent against an evaluation server over HTTP with N threads."""
from __future__ import annotations

import json
import queue
import threading
import urllib.error
import urllib.request
from typing import Any, Callable, Dict, Optional

from evalpipe.errors import EvalpipeError
from evalpipe.simul.agent import EOS, Agent


class ServerError(EvalpipeError):
    """The server answered with an error or could not be reached."""


class HTTPClient:
    """Tiny JSON client for the server API (standard library only)."""

    def __init__(self, base_url: str, timeout: float = 60) -> None:
        self.base = base_url.rstrip("/")
        self.timeout = timeout

    def call(self, method: str, path: str, body: Optional[str] = None) -> Dict[str, Any]:
        data = body.encode("utf-8") if body is not None else None
        request = urllib.request.Request(self.base + path, data=data, method=method)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as reply:
                return json.loads(reply.read().decode("utf-8"))
        except urllib.error.HTTPError as exc:
            raise ServerError(f"{method} {path}: HTTP {exc.code}: {exc.read().decode('utf-8', 'replace')}") from None
        except urllib.error.URLError as exc:
            raise ServerError(f"cannot reach {self.base}: {exc.reason}") from None


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
