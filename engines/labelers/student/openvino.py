"""Student inference on OpenVINO's CPU runtime: the fastest CPU path measured here.

The student's PyTorch model is converted once to OpenVINO IR with dynamic batch and
sequence dimensions and cached in ``<student dir>/openvino/`` (written to a temporary
directory and renamed, so a half-written cache is never read). Inference runs in
bfloat16 where the CPU has it (AMX or AVX-512 BF16), else fp32, in throughput mode:
one stream per core, batches queued asynchronously, each padded only to its longest
text (rounded up to a multiple of 8, as the torch path does).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from engines.labelers.student.data import length_sorted_batches, padded
from engines.labelers.student.pipeline import BatchFeeder

CACHE_DIR = "openvino"
MODEL_FILE = "model.xml"


def openvino_available() -> bool:
    try:
        import openvino  # noqa: F401
    except ImportError:
        return False
    return True


def cpu_precision(core: Any) -> str:
    """``bf16`` where the CPU computes in bfloat16 natively, else ``f32``."""
    capabilities = core.get_property("CPU", "OPTIMIZATION_CAPABILITIES")
    return "bf16" if "BF16" in capabilities else "f32"


def convert(model: Any, target: Path) -> None:
    """Write ``model`` (a torch sequence classifier) as OpenVINO IR into ``target``,
    atomically; a concurrent writer that got there first wins."""
    import openvino as ov
    import torch

    example = {
        "input_ids": torch.ones((2, 8), dtype=torch.long),
        "attention_mask": torch.ones((2, 8), dtype=torch.long),
    }
    inputs = [
        ("input_ids", [-1, -1], ov.Type.i64),
        ("attention_mask", [-1, -1], ov.Type.i64),
    ]
    with torch.inference_mode(), warnings.catch_warnings():
        # Tracing warns about data-dependent branches that the dynamic shapes cover.
        warnings.simplefilter("ignore")
        converted = ov.convert_model(model.eval(), example_input=example, input=inputs)
    staging = Path(tempfile.mkdtemp(prefix=".openvino-", dir=target.parent))
    try:
        ov.save_model(converted, str(staging / MODEL_FILE), compress_to_fp16=False)
        try:
            os.replace(staging, target)
        except OSError:
            if not (target / MODEL_FILE).is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


class OpenVinoClassifier:
    """A student compiled for OpenVINO's CPU plugin; :meth:`positive_probabilities` has
    the torch path's contract."""

    def __init__(
        self,
        student_dir: str | Path,
        load_torch_model: Callable[[], Any],
        cache_name: str = CACHE_DIR,
    ) -> None:
        import openvino as ov

        cache = Path(student_dir) / cache_name
        if not (cache / MODEL_FILE).is_file():
            convert(load_torch_model(), cache)
        core = ov.Core()
        self.precision = cpu_precision(core)
        self.compiled = core.compile_model(
            str(cache / MODEL_FILE),
            "CPU",
            {"INFERENCE_PRECISION_HINT": self.precision, "PERFORMANCE_HINT": "THROUGHPUT"},
        )
        count = int(self.compiled.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS"))
        # Plain requests, no Python callback: OpenVINO's threads then never need the
        # GIL, so dropping the compiled model cannot deadlock with them.
        self.requests = [self.compiled.create_infer_request() for _ in range(max(1, count))]

    def positive_probabilities(
        self, ids: Sequence[Sequence[int]], pad_id: int, batch_size: int
    ) -> list[float]:
        """P(class 1) of pre-tokenized texts, in batches of ``batch_size`` items (the
        sequential path: every text tokenized before the first batch runs)."""
        batches = length_sorted_batches([len(x) for x in ids], batch_size)
        return self._run(
            len(ids), ((np.asarray(b), padded([ids[i] for i in b], pad_id)) for b in batches)
        )

    def overlapped_probabilities(
        self,
        texts: Sequence[object],
        encode: Callable[[list[str]], list[list[int]]],
        pad_id: int,
        batch_tokens: int,
        tokenize_threads: int = 1,
    ) -> list[float]:
        """P(class 1) per text, in input order, tokenized by a
        :class:`~engines.labelers.student.pipeline.BatchFeeder` thread while the infer
        requests run."""
        with BatchFeeder(
            texts, encode, pad_id, batch_tokens, tokenize_threads=tokenize_threads
        ) as feeder:
            return self._run(len(texts), ((b.rows, b.inputs) for b in feeder))

    def _run(
        self, n: int, batches: Iterator[tuple[np.ndarray, dict[str, np.ndarray]]]
    ) -> list[float]:
        """Run ``(positions, inputs)`` batches on the infer requests in turn, each started
        asynchronously; probabilities scattered back by position."""
        out = np.zeros(n, dtype=np.float64)
        in_flight: list[tuple[Any, np.ndarray] | None] = [None] * len(self.requests)

        def collect(slot: int) -> None:
            started = in_flight[slot]
            if started is None:
                return
            request, rows = started
            request.wait()
            logits = request.get_output_tensor(0).data.astype(np.float64)
            shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
            out[rows] = shifted[:, 1] / shifted.sum(axis=1)
            in_flight[slot] = None

        try:
            for k, (rows, inputs) in enumerate(batches):
                slot = k % len(self.requests)
                collect(slot)
                request = self.requests[slot]
                request.start_async(inputs)
                in_flight[slot] = (request, rows)
        finally:
            for slot in range(len(self.requests)):
                collect(slot)
        return out.tolist()
