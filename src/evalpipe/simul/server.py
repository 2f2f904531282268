"""The evaluation server for simultaneous translation, compatible with the IWSLT 2020 shared task.

HTTP API (JSON replies; errors are 4xx with ``{"error": message}`` and the server keeps running):

* ``GET /`` -> ``{"num_sentences": N}``;  ``POST /`` resets every session;
* ``GET /src?sent_id=I[&segment_size=MS]`` -> ``{"sent_id", "segment_id", "segment"}``: for text
  the next source word, then ``</s>``; for speech the next ``segment_size`` ms of 16 kHz samples (a
  list of numbers), then ``</s>``;
* ``PUT /hypo?sent_id=I`` with raw UTF-8 text: each whitespace token is recorded with the source
  served so far (words, or ms) and the wall-clock time; ``</s>`` ends the hypothesis;
* ``GET /result`` -> BLEU and AL/AP/DAL/LAAL as JSON (and, with ``--output DIR``, writes
  ``instances.log`` in SimulEval's format, ``metrics.tsv`` per sentence and ``scores.json``).

With ``--output DIR`` the server also keeps a journal while it runs: every sentence that ends with
``</s>`` is appended to ``DIR/finished.jsonl`` (one whole JSON line, one ``write``), and
``DIR/progress.json`` (rewritten atomically) counts them and says ``"complete": false`` until
``/result`` has written everything.  A server killed mid-run leaves exactly the finished sentences,
and says so.

Improvements on the 2020 server: binds 127.0.0.1 by default; a sentence without hypothesis is
scored (as an empty prediction, counted in ``without_hypothesis``); a missing ``</s>`` does not drop
the last word; sessions of different sentences are independent and locked separately.

Delays are recorded as the number of source units served, where serving ``</s>`` counts one more
unit (the 2020 server's steps).  Instances report them capped at |X| (SimulEval's view) under ``delays``,
and as the 2020 server recorded them, its final ``</s>`` included, under ``server_delays``: the ``iwslt2020``
convention scores those (see :mod:`evalpipe.evaluators.latency`), so a wait-k agent's AL is k, as there.
"""
from __future__ import annotations

import json
import logging
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple
from urllib.parse import parse_qs, urlparse

from evalpipe.corpus import write_atomically
from evalpipe.errors import EvalpipeError, InputError
from evalpipe.simul.agent import EOS
from evalpipe.evaluators.formulas.target_units import target_tokens
from evalpipe.simul.results import score_instances, sentence_latency

log = logging.getLogger(__name__)
SAMPLE_RATE = 16000
MAX_BODY_BYTES = 1 << 20  # a hypothesis body; longer ones are refused (413) without being read


class RequestError(InputError):
    """A bad request: ``status`` is the HTTP status to answer."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Session:
    """What the server knows of one sentence."""

    served: float = 0          # source units served (words, or ms); serving </s> adds one word
    segments: int = 0
    tokens: List[str] = field(default_factory=list)
    delays: List[float] = field(default_factory=list)
    elapsed: List[float] = field(default_factory=list)
    eos_delay: Optional[float] = None
    started: Optional[float] = None
    lock: threading.Lock = field(default_factory=threading.Lock)


class Corpus:
    """Sources (text words, or 16 kHz audio) and references."""

    def __init__(self, references: Sequence[str], sources: Optional[Sequence[str]] = None,
                 audio: Optional[Sequence[Sequence[float]]] = None) -> None:
        if (sources is None) == (audio is None):
            raise InputError("give either text sources or audio sources")
        n_src = len(sources) if sources is not None else len(audio)
        if n_src != len(references):
            raise InputError(f"{n_src} sources but {len(references)} references")
        self.references = list(references)
        self.words = [s.split() for s in sources] if sources is not None else None
        self.audio = list(audio) if audio is not None else None
        self.unit = "text" if sources is not None else "speech"

    def __len__(self) -> int:
        return len(self.references)

    def source_length(self, i: int) -> float:
        return len(self.words[i]) if self.unit == "text" else len(self.audio[i]) * 1000 / SAMPLE_RATE

    @classmethod
    def from_files(cls, tgt_file: str, src_file: Optional[str] = None, wav_list: Optional[str] = None) -> "Corpus":
        from evalpipe.corpus import check_same_length, read_lines

        refs = read_lines(tgt_file)
        if src_file:
            sources = read_lines(src_file)
            check_same_length([(src_file, sources), (tgt_file, refs)])
            return cls(refs, sources=sources)
        if wav_list:
            import soundfile  # a real audio library, imported only for speech

            paths = read_lines(wav_list)
            check_same_length([(wav_list, paths), (tgt_file, refs)])
            audio = []
            for path in paths:
                data, rate = soundfile.read(path, dtype="int16", always_2d=False)
                if rate != SAMPLE_RATE:
                    raise InputError(f"expected {SAMPLE_RATE} Hz audio, got {rate} Hz", path)
                if getattr(data, "ndim", 1) != 1:
                    raise InputError(f"expected mono audio, got {data.shape[1]} channels", path)
                audio.append(data.tolist())
            return cls(refs, audio=audio)
        raise InputError("give --src-file (text) or --wav-list (speech)")


class Evaluator:
    """The server's state and operations, independent of HTTP."""

    def __init__(self, corpus: Corpus, convention: str = "simuleval", tokenize: str = "13a",
                 output: Optional[str] = None, target_unit: str = "word", spm_model: str = "") -> None:
        self.corpus, self.convention, self.tokenize, self.output = corpus, convention, tokenize, output
        #: SimulEval's --eval-latency-unit: how a hypothesis is cut into target units, each with its delay
        self.target_unit, self.spm_model = target_unit, spm_model
        self._lock = threading.Lock()
        self._journal_lock = threading.Lock()
        self.sessions: Dict[int, Session] = {}
        self._finished = 0
        if output:
            self._start_journal()

    def reset(self) -> None:
        with self._lock:
            self.sessions = {}
        if self.output:
            with self._journal_lock:
                self._start_journal()

    def _session(self, sent_id: Any) -> Tuple[int, Session]:
        try:
            i = int(sent_id)
        except (TypeError, ValueError):
            raise RequestError(f"expected an integer sent_id, got {sent_id!r}") from None
        if not 0 <= i < len(self.corpus):
            raise RequestError(f"sent_id {i} out of range: expected 0 to {len(self.corpus) - 1}", 404)
        with self._lock:
            return i, self.sessions.setdefault(i, Session())

    def source(self, sent_id: Any, segment_size: Any = None) -> Dict[str, Any]:
        i, session = self._session(sent_id)
        with session.lock:
            if session.started is None:
                session.started = time.monotonic()
            segment_id = session.segments
            if self.corpus.unit == "text":
                words = self.corpus.words[i]
                if session.served < len(words):
                    segment: Any = words[int(session.served)]
                    session.served += 1
                else:
                    segment, session.served = EOS, len(words) + 1
            else:
                try:
                    ms = float(segment_size)
                except (TypeError, ValueError):
                    raise RequestError(f"speech needs segment_size in ms, got {segment_size!r}") from None
                if ms <= 0:
                    raise RequestError(f"segment_size must be positive, got {segment_size!r}")
                audio = self.corpus.audio[i]
                start = int(round(session.served * SAMPLE_RATE / 1000))
                if start < len(audio):
                    end = min(len(audio), start + int(round(ms * SAMPLE_RATE / 1000)))
                    segment = audio[start:end]
                    session.served = end * 1000 / SAMPLE_RATE
                else:
                    segment = EOS
            session.segments += 1
        return {"sent_id": i, "segment_id": segment_id, "segment": segment}

    def hypothesis(self, sent_id: Any, text: str) -> Dict[str, Any]:
        i, session = self._session(sent_id)
        with session.lock:
            if session.eos_delay is not None:
                raise RequestError(f"sentence {i} already ended with {EOS}", 409)
            now = (time.monotonic() - (session.started or time.monotonic())) * 1000
            for word in text.split():
                if word == EOS:
                    session.eos_delay = session.served
                    if self.output:
                        self._journal(i, session)
                    break
                for token in target_tokens(word, self.target_unit):
                    session.tokens.append(token)
                    session.delays.append(session.served)
                    # elapsed: source consumed (ms) plus the wall-clock time the agent has spent
                    session.elapsed.append(now + (session.served if self.corpus.unit == "speech" else 0))
        return {"sent_id": i, "received": len(text.split())}

    def _text(self, tokens: List[str]) -> str:
        """The hypothesis text of target units, as SimulEval joins them for its unit."""
        if self.target_unit == "char":
            return "".join(tokens)
        if self.target_unit == "spm":
            return "".join(tokens).replace("\u2581", " ").strip()
        return " ".join(tokens)

    def _instance(self, i: int, s: Session) -> Dict[str, Any]:
        src_len = self.corpus.source_length(i)
        record = {"index": i, "prediction": self._text(s.tokens), "delays": [min(d, src_len) for d in s.delays],
                  "elapsed": list(s.elapsed), "prediction_length": len(s.tokens),
                  "reference": self.corpus.references[i], "source_length": src_len, "finished": s.eos_delay is not None}
        if self.corpus.unit == "text" and (s.delays or s.eos_delay is not None):
            # the 2020 server's view: its steps, |X| + 1 once </s> was served, and the final </s> with its own
            record["server_delays"] = list(s.delays) + ([s.eos_delay] if s.eos_delay is not None else [])
        return record

    def instances(self) -> List[Dict[str, Any]]:
        with self._lock:
            sessions = dict(self.sessions)
        return [self._instance(i, sessions.get(i, Session())) for i in range(len(self.corpus))]

    # -- the journal of finished sentences (with --output) ------------------------------------
    def _start_journal(self) -> None:
        """An empty ``finished.jsonl`` and a ``progress.json`` saying nothing is finished yet."""
        os.makedirs(self.output, exist_ok=True)
        write_atomically(os.path.join(self.output, "finished.jsonl"), "")
        self._finished = 0
        self._progress(complete=False)

    def _progress(self, complete: bool) -> None:
        write_atomically(os.path.join(self.output, "progress.json"), json.dumps({
            "finished_sentences": self._finished, "sentences": len(self.corpus), "complete": complete,
            "note": "finished.jsonl holds every sentence finished so far, one complete JSON line each; "
                    "instances.log, metrics.tsv and scores.json are written by GET /result"}, indent=1))

    def _journal(self, i: int, session: Session) -> None:
        """Append sentence i, just finished, to ``finished.jsonl`` in one ``write`` (a process killed at any
        moment leaves whole lines), then count it in ``progress.json``."""
        line = (json.dumps(self._instance(i, session), ensure_ascii=False) + "\n").encode("utf-8")
        with self._journal_lock:
            handle = os.open(os.path.join(self.output, "finished.jsonl"), os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            try:
                os.write(handle, line)
            finally:
                os.close(handle)
            self._finished += 1
            self._progress(complete=False)

    def result(self) -> Dict[str, Any]:
        instances = self.instances()
        scores = score_instances(instances, convention=self.convention, tokenize=self.tokenize, unit=self.corpus.unit,
                                 target_unit=self.target_unit, spm_model=self.spm_model)
        if self.output:
            self._write(instances, scores)
        return scores

    def _write(self, instances: List[Dict[str, Any]], scores: Dict[str, Any]) -> None:
        os.makedirs(self.output, exist_ok=True)
        rows = sentence_latency(instances, self.convention, self.corpus.unit, self.target_unit, self.spm_model)
        log_lines = [json.dumps({**ins, "metric": row}, ensure_ascii=False) + "\n" for ins, row in zip(instances, rows)]
        table = ["index\t" + "\t".join(rows[0] if rows else ()) + "\n"]
        table += [f"{ins['index']}\t" + "\t".join("" if v is None else repr(v) for v in row.values()) + "\n"
                  for ins, row in zip(instances, rows)]
        write_atomically(os.path.join(self.output, "instances.log"), "".join(log_lines))
        write_atomically(os.path.join(self.output, "metrics.tsv"), "".join(table))
        write_atomically(os.path.join(self.output, "scores.json"), json.dumps(scores, indent=1))
        with self._journal_lock:
            self._progress(complete=True)


class Handler(BaseHTTPRequestHandler):
    """Maps the HTTP API onto an :class:`Evaluator` (``server.evaluator``)."""

    protocol_version = "HTTP/1.1"
    timeout = 60  # a connection idle (or trickling) this long is closed: stuck clients do not pin threads
    # replies are written as headers then body; on a kept-alive connection Nagle's algorithm would hold
    # the body back until the client's delayed acknowledgement (~40 ms a request)
    disable_nagle_algorithm = True

    def log_message(self, fmt: str, *args: Any) -> None:  # access logs to the logger, not stderr
        log.debug("%s " + fmt, self.address_string(), *args)

    def _reply(self, status: int, body: Any) -> None:
        data = json.dumps(body).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if status >= 400:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError) as exc:  # the client left; nothing to answer
            log.debug("client gone before the reply: %s", exc)
            self.close_connection = True

    def _body(self) -> Optional[str]:
        """The request body as text; a missing, malformed, negative or too large Content-Length is a
        :class:`RequestError` (400 / 413) and the body is not read."""
        header = self.headers.get("Content-Length")
        if header is None or not header.strip():
            return None
        try:
            length = int(header)
        except ValueError:
            raise RequestError(f"expected Content-Length to be a number of bytes, got {header!r}") from None
        if length < 0:
            raise RequestError(f"expected a non-negative Content-Length, got {length}")
        if length > MAX_BODY_BYTES:
            raise RequestError(f"expected a body of at most {MAX_BODY_BYTES} bytes, got Content-Length {length}", 413)
        raw = self.rfile.read(length)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise RequestError("expected a UTF-8 request body") from None

    def do_GET(self) -> None:  # and POST, PUT: every request goes through ROUTES
        route = ROUTES.get((self.command, urlparse(self.path).path))
        query = {k: v[-1] for k, v in parse_qs(urlparse(self.path).query).items()}
        try:
            body = self._body()
            if route is None:
                raise RequestError(f"no such endpoint: {self.command} {urlparse(self.path).path}; expected "
                                   f"{', '.join(f'{m} {p}' for m, p in ROUTES)}", 404)
            self._reply(200, route(self.server.evaluator, query, body))  # type: ignore[attr-defined]
        except RequestError as exc:
            self._reply(exc.status, {"error": str(exc)})
        except EvalpipeError as exc:
            self._reply(422, {"error": str(exc)})
        except Exception as exc:  # never let one request take the server down
            log.exception("request failed")
            self._reply(500, {"error": f"{type(exc).__name__}: {exc}"})

    do_POST = do_PUT = do_GET


def _sent_id(query: Dict[str, str]) -> str:
    if "sent_id" not in query:
        raise RequestError("expected ?sent_id=I")
    return query["sent_id"]


#: (method, path) -> what answers it, from the evaluator, the query and the body
ROUTES: Dict[Tuple[str, str], Callable[[Evaluator, Dict[str, str], Optional[str]], Any]] = {
    ("GET", "/"): lambda evaluator, query, body: {"num_sentences": len(evaluator.corpus)},
    ("POST", "/"): lambda evaluator, query, body: evaluator.reset() or {"reset": True},
    ("GET", "/src"): lambda evaluator, query, body: evaluator.source(_sent_id(query), query.get("segment_size")),
    ("PUT", "/hypo"): lambda evaluator, query, body: evaluator.hypothesis(_sent_id(query), body or ""),
    ("POST", "/hypo"): lambda evaluator, query, body: evaluator.hypothesis(_sent_id(query), body or ""),
    ("GET", "/result"): lambda evaluator, query, body: evaluator.result(),
}


class _Server(ThreadingHTTPServer):
    # many agents connect at once: a short listen queue resets them
    request_queue_size = 1024

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that left or stalled is not an error of the server: logged at DEBUG, not printed."""
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError)):
            log.debug("connection from %s ended: %s", client_address, exc)
        else:
            log.error("request from %s failed", client_address, exc_info=True)


def make_server(evaluator: Evaluator, host: str = "127.0.0.1", port: int = 12321) -> ThreadingHTTPServer:
    """A threaded HTTP server for ``evaluator`` (port 0 picks a free port: ``server.server_port``)."""
    server = _Server((host, port), Handler)
    server.daemon_threads = True
    server.evaluator = evaluator  # type: ignore[attr-defined]
    return server
