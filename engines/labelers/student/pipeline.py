"""Overlapped student inference: a background thread tokenizes and pads batch k+1 while
the model runs batch k.

The feeder thread orders the texts by length in characters (cheap, and close to the
order by tokens), takes them in windows of that order (small first, so the model starts
at once, then larger), tokenizes each window with the fast tokenizer's Rust batch API (which
releases the GIL), sorts the window longest first and cuts it into batches sized by
tokens, not items: a batch holds as many texts as fit ``batch_tokens`` once padded to its
longest member (rounded up to 8). Padded numpy arrays (pinned torch tensors when the
model is on a GPU) wait on a bounded queue; the caller runs the model on them in order
and scatters the probabilities back by input position, so results come out in input
order whatever the batching.

Tokenizing in threads rather than in the Rust tokenizer's own thread pool keeps
``TOKENIZERS_PARALLELISM=false`` (no fork warnings from child processes) while still
tokenizing on several cores where there are cores to spare (``tokenize_threads``).

An exception in the feeder (a text that cannot be read as a string, a tokenizer failure)
is handed to the consumer, which raises :class:`FeederError` naming the text; a consumer
that stops early (its model raised, or it was interrupted) stops and joins the thread.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from engines.labelers.student.data import padded
from engines.labelers.student.text_heads import cuts_safely, encode_heads

FIRST_WINDOW = 64
"""Texts tokenized before the first batch can start; later windows double up to
:data:`MAX_WINDOW` (bigger windows sort better and so pad less)."""
MAX_WINDOW = 8192
QUEUE_DEPTH = 4
"""Padded batches waiting ahead of the model."""
_POLL_S = 0.1


class FeederError(RuntimeError):
    """The tokenizer thread failed; the message names the text it was on."""


@dataclass(frozen=True)
class Batch:
    """One model batch: ``rows`` are the input positions of its texts, longest first;
    ``inputs`` holds ``input_ids`` and ``attention_mask`` (numpy, or pinned tensors)."""

    rows: np.ndarray
    inputs: dict[str, Any]

    @property
    def tokens(self) -> int:
        """Padded size of the batch (items times width)."""
        ids = self.inputs["input_ids"]
        return int(ids.shape[0] * ids.shape[1])


class Encoder:
    """Token ids of texts, truncated to ``max_length``, as the Hugging Face tokenizer gives
    them (special tokens included), through the Rust tokenizer's batch API when the
    tokenizer is a fast one."""

    def __init__(self, tokenizer: Any, max_length: int) -> None:
        self.max_length = max_length
        self._hf = tokenizer
        self._cut = cuts_safely(tokenizer)  # long texts are tokenized by their heads
        self._rust = None
        backend = getattr(tokenizer, "backend_tokenizer", None)
        if backend is not None:
            from tokenizers import Tokenizer

            rust = Tokenizer.from_str(backend.to_str())  # a copy: the caller's stays as it is
            rust.enable_truncation(max_length)
            rust.no_padding()
            self._rust = rust
            # without character offsets: the same ids, about a fifth faster (tokenizers >= 0.20)
            self._batch = getattr(rust, "encode_batch_fast", rust.encode_batch)

    def __call__(self, texts: list[str]) -> list[list[int]]:
        if not texts:
            return []
        if self._cut:
            return encode_heads(self._whole, texts, self.max_length)
        return self._whole(texts)

    def _whole(self, texts: list[str]) -> list[list[int]]:
        if self._rust is not None:
            return [e.ids for e in self._batch(texts)]
        encoded = self._hf(texts, truncation=True, max_length=self.max_length, padding=False)
        return list(encoded["input_ids"])


def token_batches(lengths: Sequence[int], batch_tokens: int) -> list[np.ndarray]:
    """Positions sorted longest first (ties in input order), cut so that each batch's
    padded size (items times the longest length rounded up to 8) stays within
    ``batch_tokens``; a text longer than the budget gets a batch of its own."""
    if batch_tokens < 1:
        raise ValueError("batch_tokens must be at least 1")
    lengths_np = np.asarray(lengths, dtype=np.int64)
    order = np.argsort(-lengths_np, kind="stable")
    batches: list[np.ndarray] = []
    start = 0
    while start < len(order):
        width = -(-max(1, int(lengths_np[order[start]])) // 8) * 8
        take = max(1, batch_tokens // width)
        batches.append(order[start : start + take])
        start += take
    return batches


def _as_text(value: object) -> str:
    from engines.labelers.student.infer import as_text

    return as_text(value)


class BatchFeeder:
    """Iterate over the padded batches of ``texts`` while a thread prepares the next.

    Use as a context manager (leaving it stops and joins the thread)::

        with BatchFeeder(texts, encoder, pad_id, 4096) as feeder:
            for batch in feeder:
                ...
    """

    def __init__(
        self,
        texts: Sequence[object],
        encode: Callable[[list[str]], list[list[int]]],
        pad_id: int,
        batch_tokens: int,
        convert: Callable[[dict[str, np.ndarray]], dict[str, Any]] | None = None,
        tokenize_threads: int = 1,
        depth: int = QUEUE_DEPTH,
        first_window: int = FIRST_WINDOW,
    ) -> None:
        if batch_tokens < 1:
            raise ValueError("batch_tokens must be at least 1")
        self._texts = texts
        self._encode = encode
        self._pad_id = pad_id
        self._batch_tokens = batch_tokens
        self._convert = convert
        self._threads = max(1, tokenize_threads)
        self._first = max(1, first_window)
        self._queue: queue.Queue[Batch | BaseException | None] = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="student-tokenizer", daemon=True)

    def __enter__(self) -> BatchFeeder:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the thread (it may be blocked on a full queue) and wait for it."""
        self._stop.set()
        while self._thread.is_alive():
            try:
                self._queue.get_nowait()
            except queue.Empty:
                self._thread.join(_POLL_S)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def __iter__(self) -> Iterator[Batch]:
        while True:
            item = self._queue.get()
            if item is None:
                return
            if isinstance(item, BaseException):
                raise FeederError(f"student tokenizer thread: {item}") from item
            yield item

    def _put(self, item: Batch | BaseException | None) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=_POLL_S)
                return True
            except queue.Full:
                continue
        return False

    def _windows(self) -> Iterator[tuple[int, int]]:
        start, size, n = 0, self._first, len(self._texts)
        while start < n:
            yield start, min(n, start + size)
            start += size
            size = min(MAX_WINDOW, size * 2)

    def _encode_window(self, texts: list[str], pool: ThreadPoolExecutor | None) -> list[list[int]]:
        if pool is None or len(texts) < 64 * self._threads:
            return self._encode(texts)
        step = -(-len(texts) // self._threads)
        parts = pool.map(self._encode, [texts[i : i + step] for i in range(0, len(texts), step)])
        return [ids for part in parts for ids in part]

    def _run(self) -> None:
        pool = ThreadPoolExecutor(self._threads) if self._threads > 1 else None
        try:
            texts: list[str] = []
            for i in range(len(self._texts)):
                try:
                    texts.append(_as_text(self._texts[i]))
                except Exception as exc:
                    raise FeederError(f"text {i}: cannot be read as text ({exc})") from exc
            # Windows follow the texts sorted by characters, longest first (a cheap proxy
            # for tokens), so that small windows still hold texts of similar length.
            order = np.argsort(-np.fromiter(map(len, texts), np.int64, len(texts)), kind="stable")
            for lo, hi in self._windows():
                rows = order[lo:hi]
                window = [texts[i] for i in rows]
                try:
                    ids = self._encode_window(window, pool)
                except Exception as exc:
                    names = f"texts {sorted(int(i) for i in rows)[:5]}..."
                    raise FeederError(f"{names}: tokenizer failed ({exc})") from exc
                for local in token_batches([len(x) for x in ids], self._batch_tokens):
                    arrays = padded([ids[i] for i in local], self._pad_id)
                    inputs = self._convert(arrays) if self._convert else arrays
                    if not self._put(Batch(rows[local], inputs)):
                        return
            self._put(None)
        except BaseException as exc:
            self._put(exc)
        finally:
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)


def positive_softmax(logits: Any) -> Any:
    """P(class 1) from two-class logits (a torch tensor), in float32."""
    import torch

    return torch.softmax(logits.float(), dim=-1)[:, 1]


def torch_probabilities(
    model: Any,
    texts: Sequence[object],
    encode: Callable[[list[str]], list[list[int]]],
    pad_id: int,
    batch_tokens: int,
    device: Any,
    tokenize_threads: int = 1,
) -> list[float]:
    """P(positive class) per text, in input order, with tokenization overlapped with the
    model. On a GPU the feeder pins each batch and copies it without blocking, and the
    probabilities stay on the device until the end (no synchronisation per batch)."""
    import torch

    out = np.zeros(len(texts), dtype=np.float64)
    if not len(texts):
        return []
    on_gpu = getattr(device, "type", str(device)) == "cuda"

    def pinned(arrays: dict[str, np.ndarray]) -> dict[str, Any]:
        return {k: torch.from_numpy(v).pin_memory() for k, v in arrays.items()}

    was_training = model.training
    model.eval()
    pending: list[tuple[np.ndarray, Any]] = []
    try:
        with (
            torch.inference_mode(),
            BatchFeeder(
                texts, encode, pad_id, batch_tokens, pinned if on_gpu else None, tokenize_threads
            ) as feeder,
        ):
            for batch in feeder:
                if on_gpu:
                    inputs = {k: v.to(device, non_blocking=True) for k, v in batch.inputs.items()}
                    pending.append((batch.rows, positive_softmax(model(**inputs).logits)))
                else:
                    inputs = {k: torch.from_numpy(v) for k, v in batch.inputs.items()}
                    out[batch.rows] = positive_softmax(model(**inputs).logits).numpy()
            for rows, probs in pending:
                out[rows] = probs.cpu().numpy()
    finally:
        if was_training:
            model.train()
    return out.tolist()
