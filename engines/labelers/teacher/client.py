"""The LLM teacher client: one commit text in, a label (or category) and confidence out.

It speaks two HTTP dialects through httpx: OpenAI-compatible chat completions
(``POST /v1/chat/completions``: vLLM, llama.cpp's server, LM Studio, hosted APIs) and
Ollama's native ``POST /api/chat``. Requests run at temperature 0 on a thread pool
(``concurrency`` at once); each must be answered within ``timeout`` seconds in all and
in at most ``MAX_RESPONSE_BYTES``. Timeouts, connection errors, 429 and 5xx answers are retried
with exponential backoff (a ``Retry-After`` header is honoured up to the cap); other
HTTP errors, refusals and replies that do not parse come back as :class:`Failure`
values with a short reason, never as labels.

The text a teacher sees is the commit's stored ``model_input`` (message || diff, the
student's input), optionally cut again to ``max_tokens`` with the student's token
counter, so teacher and student judge the same text.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from engines.commits.representation import approximate_tokens, cut_to_budget
from engines.labelers.base import Prediction
from engines.labelers.teacher.daemon_pool import DaemonPool

if TYPE_CHECKING:
    import httpx

from engines.labelers.teacher.prompt import (
    PROMPT_VERSION,
    Answer,
    ReplyError,
    category_messages,
    label_messages,
    parse_category_reply,
    parse_label_reply,
)

APIS = ("ollama", "openai")
TASKS = ("label", "category")
RAW_LIMIT = 20_000
MAX_RESPONSE_BYTES = 16 * 2**20  # a reply is a short JSON object; more is a runaway
_RETRY_STATUS = frozenset({408, 409, 425, 429})

TokenCounter = Callable[[str], int]


MAX_CONCURRENCY = 256


@dataclass(frozen=True)
class TeacherConfig:
    """Where the teacher lives and how to ask it."""

    endpoint: str
    model: str
    api: str = "ollama"
    task: str = "label"
    categories: tuple[tuple[str, str], ...] = ()
    timeout: float = 120.0
    retries: int = 3
    backoff: float = 1.0
    max_backoff: float = 30.0
    concurrency: int = 4
    max_tokens: int = 0
    api_key: str | None = None

    def __post_init__(self) -> None:
        if self.api not in APIS:
            raise ValueError(f"api {self.api!r}: use {' or '.join(APIS)}")
        if self.task not in TASKS:
            raise ValueError(f"task {self.task!r}: use {' or '.join(TASKS)}")
        if self.task == "category" and not self.categories:
            raise ValueError("the category task needs a list of categories")
        if not self.model.strip():
            raise ValueError("the model name is empty")
        if not self.model.isprintable():  # it names the labeler: stored, listed, drawn
            raise ValueError(f"model name {self.model!r} holds a control character")
        if not self.endpoint.startswith(("http://", "https://")):
            hint = "" if "://" in self.endpoint else f"; did you mean http://{self.endpoint}?"
            raise ValueError(f"endpoint {self.endpoint!r} is not an http(s) URL{hint}")
        if any(not ch.isprintable() or ch.isspace() for ch in self.endpoint):
            raise ValueError(f"endpoint {self.endpoint!r} holds a space or a control character")
        try:
            parts = urlsplit(self.endpoint)
            host, _ = parts.hostname, parts.port  # the port is checked when read
        except ValueError as exc:  # an unclosed [IPv6 bracket, a port out of range, say
            raise ValueError(f"endpoint {self.endpoint!r} is not a valid URL ({exc})") from None
        if not host:
            raise ValueError(f"endpoint {self.endpoint!r} names no host")
        try:  # what the resolver will do with it: an empty or over-long label fails there
            host.encode("idna").decode("idna")
        except UnicodeError as exc:
            raise ValueError(
                f"endpoint {self.endpoint!r}: host {host!r} is not valid ({exc})"
            ) from None
        if self.concurrency < 1 or self.retries < 0 or self.timeout <= 0:
            raise ValueError("concurrency must be >= 1, retries >= 0 and timeout > 0")
        if self.concurrency > MAX_CONCURRENCY:  # each request in flight is a thread
            raise ValueError(f"concurrency {self.concurrency} is above {MAX_CONCURRENCY}")
        for name, value in (("timeout", self.timeout), ("backoff", self.backoff)):
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} {value} is not a finite number of seconds")

    @property
    def labeler(self) -> str:
        """The name predictions are stored under, e.g. ``teacher:gpt-oss:20b``."""
        prefix = "teacher" if self.task == "label" else "teacher-category"
        return f"{prefix}:{self.model}"

    @property
    def shown_url(self) -> str:
        """:attr:`url` as messages name it: no user:password, no query (either may hold
        a secret)."""
        parts = urlsplit(self.url)
        host = parts.netloc.rpartition("@")[2]
        return urlunsplit((parts.scheme, host, parts.path, "", ""))

    @property
    def url(self) -> str:
        """The endpoint with the API's path added to its path (a query string, such as
        ``?api-version=...``, stays at the end; a #fragment is never sent)."""
        parts = urlsplit(self.endpoint)
        base = parts.path.rstrip("/")
        if self.api == "ollama":
            if base.endswith("/api/chat"):
                path = base
            else:
                path = f"{base}/chat" if base.endswith("/api") else f"{base}/api/chat"
        elif base.endswith("/chat/completions"):
            path = base
        else:
            path = (
                f"{base}/chat/completions"
                if base.endswith("/v1")
                else f"{base}/v1/chat/completions"
            )
        return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


@dataclass(frozen=True)
class Reply:
    """A usable answer with the raw text it was read from."""

    answer: Answer
    raw: str
    attempts: int
    thinking: str | None = None


@dataclass(frozen=True)
class Failure:
    """No usable answer: ``reason`` is a counter key (``malformed``, ``refusal``,
    ``http-500``, ``timeout``...); ``raw`` the reply text when there was one."""

    reason: str
    detail: str
    attempts: int
    raw: str | None = None


class TeacherError(RuntimeError):
    """Raised by :meth:`Teacher.predict` when an answer is missing."""


class _Retryable(Exception):
    def __init__(self, reason: str, detail: str, wait_hint: float | None = None) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail
        self.wait_hint = wait_hint


class _Final(Exception):
    def __init__(self, reason: str, detail: str, raw: str | None = None) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail
        self.raw = raw


@dataclass
class _Content:
    text: str
    thinking: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def cut_text(text: str, budget: int, count_tokens: TokenCounter | None = None) -> str:
    """``text`` cut to ``budget`` tokens as the student would count them (0: no cut).

    Without a counter the project's approximate token count is used; with one (a real
    tokenizer's), whole lines are kept while they fit, as the commit representation does.
    """
    return cut_to_budget(text, budget, count_tokens or approximate_tokens)


class Teacher:
    """Asks one model about commit texts; thread-safe, one HTTP connection pool."""

    input_field = "model_input"

    def __init__(
        self,
        config: TeacherConfig,
        count_tokens: TokenCounter | None = None,
        transport: httpx.BaseTransport | None = None,
        window: Callable[[str], str] | None = None,
        window_name: str | None = None,
    ) -> None:
        """``count_tokens`` counts like the student for ``config.max_tokens``; ``window``
        instead cuts a text exactly as a student's tokenizer does (see ``teacher.window``)."""
        # Imported here: httpx loads when a teacher is built, not when the CLI starts.
        import httpx

        self.config = config
        self.name = config.labeler
        self.count_tokens = count_tokens
        self.window = window
        self.window_name = window_name
        key = config.api_key
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._http = httpx.Client(
            timeout=httpx.Timeout(config.timeout),
            headers=headers,
            transport=transport,
            limits=httpx.Limits(max_connections=config.concurrency),
        )
        self._stop = threading.Event()
        self._allowed = [slug for slug, _ in config.categories]

    def close(self) -> None:
        self._stop.set()
        self._http.close()

    def __enter__(self) -> Teacher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def prepare(self, text: str) -> str:
        if self.window is not None:
            text = self.window(text)
        return cut_text(text, self.config.max_tokens, self.count_tokens)

    def messages(self, text: str) -> list[dict[str, str]]:
        prepared = self.prepare(text)
        if self.config.task == "category":
            return category_messages(prepared, self.config.categories)
        return label_messages(prepared)

    def body(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        if self.config.api == "ollama":
            return {
                "model": self.config.model,
                "messages": messages,
                "stream": False,
                "format": "json",
                "options": {"temperature": 0, "seed": 0},
            }
        return {
            "model": self.config.model,
            "messages": messages,
            "temperature": 0,
            "seed": 0,
            "stream": False,
        }

    def ask(self, text: str) -> Reply | Failure:
        """One question with retries; never raises for HTTP or reply problems."""
        body = self.body(self.messages(text))
        attempts = 0
        while True:
            attempts += 1
            try:
                content = self._post(body)
            except _Final as exc:
                return Failure(exc.reason, exc.detail, attempts, exc.raw)
            except _Retryable as exc:
                if attempts > self.config.retries or self._stop.is_set():
                    return Failure(exc.reason, exc.detail, attempts)
                delay = min(self.config.backoff * 2 ** (attempts - 1), self.config.max_backoff)
                if exc.wait_hint is not None:
                    delay = max(delay, min(exc.wait_hint, self.config.max_backoff))
                if self._stop.wait(delay):
                    return Failure(exc.reason, exc.detail, attempts)
                continue
            try:
                answer = self._parse(content.text)
            except ReplyError as exc:
                return Failure(exc.reason, exc.detail, attempts, content.text[:RAW_LIMIT])
            return Reply(answer, content.text[:RAW_LIMIT], attempts, content.thinking)

    def _parse(self, text: str) -> Answer:
        if self.config.task == "category":
            return parse_category_reply(text, self._allowed)
        return parse_label_reply(text)

    def _post(self, body: dict[str, Any]) -> _Content:
        import httpx  # loaded by __init__ already; this binds the name here

        try:
            status, reason, headers, payload = self._exchange(body)
        except httpx.TimeoutException as exc:
            raise _Retryable("timeout", f"no answer within {self.config.timeout:g} s") from exc
        except httpx.TransportError as exc:
            raise _Retryable("connection", f"{type(exc).__name__}: {exc}") from exc
        except httpx.DecodingError as exc:  # a body that does not match its Content-Encoding
            raise _Final(
                "bad-response", f"the server's answer could not be decoded: {exc}"
            ) from exc
        if status in _RETRY_STATUS or status >= 500:
            raise _Retryable(
                f"http-{status}", _error_text(status, reason, payload), _retry_after(headers)
            )
        if status >= 400:
            raise _Final(f"http-{status}", _error_text(status, reason, payload))
        if status >= 300:  # not followed: a POST's body would not go along
            where = headers.get("location") or "nowhere"
            raise _Final(
                f"http-{status}", f"HTTP {status}: redirected to {where}; give that as --endpoint"
            )
        try:
            data = json.loads(payload)
        except (ValueError, RecursionError) as exc:  # nested too deep, digits past the cap
            raise _Final("bad-response", "the server's answer is not JSON") from exc
        return self._content(data)

    def _exchange(self, body: dict[str, Any]) -> tuple[int, str, httpx.Headers, bytes]:
        """One request: the status, its reason phrase, the headers and the body, read
        within ``timeout`` seconds in all (a server trickling bytes cannot stretch it) and
        at most ``MAX_RESPONSE_BYTES`` long."""
        import httpx

        deadline = time.monotonic() + self.config.timeout
        with self._http.stream("POST", self.config.url, json=body) as response:
            chunks: list[bytes] = []
            size = 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > MAX_RESPONSE_BYTES:
                    raise _Final(
                        "too-large", f"the answer is over {MAX_RESPONSE_BYTES // 2**20} MiB"
                    )
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout("the whole answer took too long")
                chunks.append(chunk)
            return response.status_code, response.reason_phrase, response.headers, b"".join(chunks)

    def _content(self, data: Any) -> _Content:
        if not isinstance(data, dict):
            raise _Final("bad-response", "the server's answer is not a JSON object")
        if self.config.api == "ollama":
            message = data.get("message")
        else:
            choices = data.get("choices")
            first = choices[0] if isinstance(choices, list) and choices else None
            message = first.get("message") if isinstance(first, dict) else None
        if not isinstance(message, dict):
            error = data.get("error")
            detail = f"server error: {error}" if error else "no message in the answer"
            raise _Final("bad-response", str(detail)[:300])
        refusal = message.get("refusal")
        if isinstance(refusal, str) and refusal.strip():
            raise _Final("refusal", refusal.strip()[:300], refusal[:RAW_LIMIT])
        text = message.get("content")
        thinking = message.get("thinking") or message.get("reasoning_content")
        if not isinstance(text, str) or not text.strip():
            raise _Final("empty", "the model returned no content")
        return _Content(text, thinking if isinstance(thinking, str) else None)

    def ask_many(self, texts: Iterable[str]) -> Iterator[tuple[int, Reply | Failure]]:
        """(index, result) for every text, in completion order, ``concurrency`` at a time.

        ``texts`` is consumed lazily (a few ahead of the requests in flight). Stopping the
        iteration early (or an interrupt) cancels what has not started.
        """
        pool = DaemonPool(self.config.concurrency, "teacher")
        pending: dict[Future[Reply | Failure], int] = {}
        queue = iter(enumerate(texts))
        window = 2 * self.config.concurrency
        try:
            self._submit(pool, queue, pending, window)
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    index = pending.pop(future)
                    yield index, future.result()
                self._submit(pool, queue, pending, window)
        finally:
            if pending:
                # Stopped early: no new retries, nothing queued starts, nobody waits (a
                # request in flight ends on its own; its thread does not hold the exit).
                self._stop.set()
                for future in pending:
                    future.cancel()
            pool.shutdown()

    def _submit(
        self,
        pool: DaemonPool,
        queue: Iterator[tuple[int, str]],
        pending: dict[Future[Reply | Failure], int],
        window: int,
    ) -> None:
        while len(pending) < window:
            nxt = next(queue, None)
            if nxt is None:
                return
            pending[pool.submit(self.ask, nxt[1])] = nxt[0]

    def prediction(self, reply: Reply) -> Prediction:
        """The stored form of an answer: score = confidence / 100, raw reply in details."""
        details: dict[str, Any] = {
            "confidence": reply.answer.confidence,
            "raw": reply.raw,
            "model": self.config.model,
            "api": self.config.api,
            "prompt_version": PROMPT_VERSION,
            "attempts": reply.attempts,
        }
        if self.config.max_tokens:
            details["max_tokens"] = self.config.max_tokens
        if self.window_name:
            details["window"] = self.window_name
        if reply.answer.reasoning:
            details["reasoning"] = reply.answer.reasoning
        if reply.thinking:
            details["thinking"] = reply.thinking[:RAW_LIMIT]
        return Prediction(reply.answer.label, reply.answer.confidence / 100.0, details)

    def predict(self, texts: Sequence[str]) -> list[Prediction]:
        """The :class:`~engines.labelers.base.Labeler` form; raises on any failure."""
        if isinstance(texts, str):
            raise TypeError("predict() takes a sequence of texts, not a single string")
        results: list[Prediction | None] = [None] * len(texts)
        for index, result in self.ask_many(texts):
            if isinstance(result, Failure):
                raise TeacherError(f"text {index}: {result.reason}: {result.detail}")
            results[index] = self.prediction(result)
        return [p for p in results if p is not None]


def _retry_after(headers: httpx.Headers) -> float | None:
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def _error_text(status: int, reason: str, payload: bytes) -> str:
    body = " ".join(payload[:2000].decode("utf-8", "replace").split())[:200]
    return f"HTTP {status} {reason or 'error'}" + (f": {body}" if body else "")
