"""A small, deterministic LLM server for the teacher tests: real HTTP on 127.0.0.1.

It answers both ``POST /v1/chat/completions`` (OpenAI-compatible) and ``POST /api/chat``
(Ollama). What it answers depends on markers in the commit text it is sent:

- ``faster``, ``speed``, ``cache`` or ``leak`` (any case): Perf, confidence 92; else Non-perf, 70
- ``GARBLED``: prose with no JSON; ``REFUSE``: a refusal; ``BADLABEL``: an unknown label
- ``FENCED``: the JSON inside a Markdown code fence
- ``FLAKY``: HTTP 500 twice, then an answer; ``THROTTLED``: 429 (Retry-After: 0) twice
- ``ALWAYS500``: HTTP 500 every time; ``SLOW``: the first attempt sleeps past the client's
  timeout, later attempts answer at once
- ``MOVED``: HTTP 301 to ``MOVED_TO`` (a proxy sending plain HTTP to HTTPS)
- ``TRICKLE``: the answer's bytes one at a time, ``TRICKLE_SECONDS`` apart (each read is
  quick, the whole answer slow); ``HUGE``: an answer of ``HUGE_BYTES`` of content
- ``PAIRED``: waits until a second PAIRED request is in flight (a barrier), so it only
  succeeds when requests really run concurrently
- category prompts: ``leak`` -> memory-inefficiency/memory-leak, ``NOWHERE`` -> a slug
  outside the taxonomy, else inefficient-algorithm-data-structure/unnecessary-computations
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SLOW_SECONDS = 1.0
TRICKLE_SECONDS = 0.2
HUGE_BYTES = 1_000_000
MOVED_TO = "https://llm.example.org/v1/chat/completions"
Reply = tuple[int, dict[str, Any], dict[str, str] | None]


class FakeLLM:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.attempts: Counter[str] = Counter()
        self.inflight = 0
        self.max_inflight = 0
        self.barrier = threading.Barrier(2, timeout=10)
        self.latency = 0.0  # seconds every answer takes (benchmarks: a model's think time)
        # requests after the first ``hold_after`` wait until ``released`` is set (at most a
        # minute): a client stopped mid-run can then never have finished first
        self.hold_after: int | None = None
        self.released = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if len(raw) < length:
                    return  # the client hung up before sending its whole request
                server.handle(self, json.loads(raw))

        self.errors: list[BaseException] = []

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: object, client_address: object) -> None:
                # A client that gave up (a stopped run) closes its socket mid-answer; other
                # failures are kept for the tests instead of printed, since the CLI under
                # test shares this process's stderr.
                error = sys.exc_info()[1]
                if error is not None and not isinstance(error, ConnectionError):
                    server.errors.append(error)

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeLLM:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def texts(self) -> list[str]:
        return [body["messages"][-1]["content"] for _, body in self.requests]

    def handle(self, h: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        system = body["messages"][0]["content"]
        text = body["messages"][-1]["content"]
        with self.lock:
            self.requests.append((h.path, body))
            self.attempts[text] += 1
            attempt = self.attempts[text]
            self.inflight += 1
            self.max_inflight = max(self.max_inflight, self.inflight)
        try:
            if self.hold_after is not None and len(self.requests) > self.hold_after:
                self.released.wait(timeout=60)
            if self.latency:
                time.sleep(self.latency)
            reply = self._answer(h, body, system, text, attempt)
        finally:
            # Counted out before the answer leaves, so a client that sends its next
            # request on receipt is never seen overlapping this one.
            with self.lock:
                self.inflight -= 1
        _send(h, *reply, trickle="TRICKLE" in text)

    def _answer(
        self, h: BaseHTTPRequestHandler, body: dict[str, Any], system: str, text: str, attempt: int
    ) -> Reply:
        if h.path not in ("/v1/chat/completions", "/api/chat"):
            return _reply(404, {"error": "no such route"})
        if body.get("temperature", body.get("options", {}).get("temperature")) != 0:
            return _reply(400, {"error": "the teacher must run at temperature 0"})
        if "ALWAYS500" in text or ("FLAKY" in text and attempt <= 2):
            return _reply(500, {"error": "overloaded"})
        if "MOVED" in text:
            return _reply(301, {}, {"Location": MOVED_TO})
        if "THROTTLED" in text and attempt <= 2:
            return _reply(429, {"error": "slow down"}, {"Retry-After": "0"})
        if "SLOW" in text and attempt == 1:
            time.sleep(SLOW_SECONDS)
        if "PAIRED" in text:
            try:
                self.barrier.wait()
            except threading.BrokenBarrierError:
                return _reply(400, {"error": "no concurrent partner"})
        refusal = None
        if "taxonomy" in system:
            category = "inefficient-algorithm-data-structure/unnecessary-computations"
            if "leak" in text:
                category = "memory-inefficiency/memory-leak"
            if "NOWHERE" in text:
                category = "quantum-effects/spooky"
            content = json.dumps(
                {
                    "reasoning": "The change frees what it allocates.",
                    "category": category,
                    "confidence": 75,
                }
            )
        elif "GARBLED" in text:
            content = "Well, this looks like it could be about performance, hard to say."
        elif "REFUSE" in text:
            content, refusal = "I'm sorry, I can't help with that.", "I can't help with that."
        elif "HUGE" in text:
            content = "x" * HUGE_BYTES
        elif "BADLABEL" in text:
            content = json.dumps({"label": "Maybe", "confidence": 50})
        else:
            perf = any(w in text.lower() for w in ("faster", "speed", "cache", "leak"))
            content = json.dumps(
                {"label": "Perf" if perf else "Non-perf", "confidence": 92 if perf else 70}
            )
            if "FENCED" in text:
                content = f"Here is my answer:\n```json\n{content}\n```"
        if h.path == "/api/chat":
            return _reply(
                200,
                {
                    "model": body["model"],
                    "message": {"role": "assistant", "content": content},
                    "done": True,
                },
            )
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if refusal:
            message = {"role": "assistant", "content": None, "refusal": refusal}
        return _reply(
            200,
            {
                "id": "x",
                "object": "chat.completion",
                "model": body["model"],
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            },
        )


def _reply(status: int, data: dict[str, Any], headers: dict[str, str] | None = None) -> Reply:
    return status, data, headers


def _send(
    h: BaseHTTPRequestHandler,
    status: int,
    data: dict[str, Any],
    headers: dict[str, str] | None = None,
    trickle: bool = False,
) -> None:
    payload = json.dumps(data).encode()
    h.send_response(status)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", str(len(payload)))
    for k, v in (headers or {}).items():
        h.send_header(k, v)
    h.end_headers()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        if not trickle:
            h.wfile.write(payload)
            return
        for byte in payload:
            h.wfile.write(bytes([byte]))
            h.wfile.flush()
            time.sleep(TRICKLE_SECONDS)
