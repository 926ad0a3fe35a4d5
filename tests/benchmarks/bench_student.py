"""Throughput of student inference against a naive per-item transformers pipeline.

Usage (from the repository root)::

    python tests/benchmarks/bench_student.py [--quick] [--model DIR] [--data DIR] [--json OUT]

In one run, on the same model and the same texts (commit messages from the shared
perf-commit-messages data when present, generated messages otherwise), it times:

* naive: ``transformers.pipeline("text-classification")`` called once per message;
* batch 1: :class:`StudentLabeler` called once per message (tokenize, pad, forward);
* batched: one ``predict`` over all messages (length-sorted batches, dynamic padding);
* batched int8: the same with dynamic int8 quantization (CPU);
* batched bf16: the same with bfloat16 weights (fast where the CPU has AMX/AVX-512 BF16);
* batched OpenVINO: the same model converted to OpenVINO IR, on its CPU runtime (bf16
  where the CPU has it), when openvino is installed;
* on a GPU, when torch sees one: batch 1 and batched again on the GPU.

It reports requests (messages) per second, tokens per second (tokens after truncation,
special tokens included), the speed-up of each over the naive loop, and how many
labels agree with the naive loop's (they must all agree in fp32).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from engines.labelers.student.infer import (  # noqa: E402
    META_FILE,
    StudentLabeler,
    default_base,
    keep_layers,
    load_encoder,
    tokenize,
    use_all_cores,
)
from engines.labelers.student.openvino import openvino_available  # noqa: E402

DEFAULT_DATA = REPO.parent / "shared" / "data" / "perf-commit-messages"
_VOCABULARY = (
    "fix cache loop speed allocation parser memory reduce latency refactor docs test update "
    "avoid copy vector lock thread buffer query index hot path string build"
)
WORDS = _VOCABULARY.split()


def messages(data: Path, count: int, seed: int = 0) -> tuple[list[str], str]:
    """``count`` commit messages: the shared data's, else generated ones."""
    found: list[str] = []
    for name in ("train.jsonl", "test.jsonl", "extra.jsonl"):
        path = data / name
        if path.is_file():
            with path.open(encoding="utf-8") as handle:
                found.extend(
                    str(json.loads(line)["commit_message"]) for line in handle if line.strip()
                )
    rng = random.Random(seed)
    if found:
        rng.shuffle(found)
        source = f"{data} ({len(found)} messages)"
    else:
        found = [
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 60))) for _ in range(count)
        ]
        source = "generated messages"
    while len(found) < count:
        found.extend(found[: count - len(found)])
    return found[:count], source


def untrained_student(where: Path, max_length: int, layers: int | None = None) -> Path:
    """The packaged encoder with a fresh two-class head, saved as a student directory
    (speed does not depend on what the head learned); ``layers`` shrinks it as
    ``curator train --layers`` does."""
    tokenizer, model = load_encoder(default_base())
    if layers is not None:
        keep_layers(model, layers)
    model.save_pretrained(str(where))
    tokenizer.save_pretrained(str(where))
    meta = {"format": 1, "base": default_base(), "input_field": "message", "max_length": max_length}
    (where / META_FILE).write_text(json.dumps(meta), encoding="utf-8")
    return where


def _timed(fn: Any) -> tuple[Any, float]:
    started = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - started


def run(
    model_dir: Path | None = None,
    data: Path = DEFAULT_DATA,
    naive_n: int = 300,
    batched_n: int = 2000,
    batch: int = 64,
    max_length: int = 128,
    small_layers: int | None = 3,
) -> dict[str, Any]:
    import torch
    from transformers import pipeline

    use_all_cores()
    with tempfile.TemporaryDirectory() as tmp:
        path = model_dir or untrained_student(Path(tmp) / "student", max_length)
        texts, source = messages(data, max(naive_n, batched_n))
        few, many = texts[:naive_n], texts[:batched_n]
        cpu = StudentLabeler(path, "bench", batch_size=batch, device="cpu")
        token_counts = [len(ids) for ids in tokenize(cpu.tokenizer, many, cpu.max_length)]
        few_tokens = sum(token_counts[:naive_n])
        many_tokens = sum(token_counts)
        pipe = pipeline("text-classification", model=cpu.model, tokenizer=cpu.tokenizer, device=-1)
        pipe(few[0], truncation=True, max_length=cpu.max_length)  # warm-up
        cpu.predict(few[:4])
        naive, naive_s = _timed(
            lambda: [pipe(t, truncation=True, max_length=cpu.max_length)[0] for t in few]
        )
        naive_labels = [r["label"] for r in naive]
        rows: dict[str, dict[str, Any]] = {}

        def record(name: str, labels: list[str], seconds: float, n: int, tokens: int) -> None:
            agree = sum(1 for a, b in zip(labels[:naive_n], naive_labels, strict=False) if a == b)
            rows[name] = {
                "items": n,
                "seconds": round(seconds, 3),
                "req_per_s": n / seconds,
                "tokens_per_s": tokens / seconds,
                "speedup_vs_naive": (n / seconds) / (naive_n / naive_s),
                "agree_with_naive": f"{agree}/{min(n, naive_n)}",
            }

        record("naive pipeline, per item", naive_labels, naive_s, naive_n, few_tokens)
        one, one_s = _timed(lambda: [cpu.predict([t])[0].label for t in few])
        record("student, batch 1", one, one_s, naive_n, few_tokens)
        batched, batched_s = _timed(lambda: [p.label for p in cpu.predict(many)])
        record(f"student, batched ({batch})", batched, batched_s, batched_n, many_tokens)
        int8 = StudentLabeler(path, "bench-int8", batch_size=batch, quantized=True)
        int8.predict(few[:4])
        q, q_s = _timed(lambda: [p.label for p in int8.predict(many)])
        record(f"student int8, batched ({batch})", q, q_s, batched_n, many_tokens)
        bf16 = StudentLabeler(path, "bench-bf16", batch_size=batch, device="cpu", bf16=True)
        bf16.predict(few[:4])
        h, h_s = _timed(lambda: [p.label for p in bf16.predict(many)])
        record(f"student bf16, batched ({batch})", h, h_s, batched_n, many_tokens)
        if openvino_available():
            ov = StudentLabeler(path, "bench-openvino", batch_size=batch, openvino=True)
            ov.predict(few[:4])
            o, o_s = _timed(lambda: [p.label for p in ov.predict(many)])
            record(
                f"student OpenVINO {ov.openvino.precision}, batched ({batch})",  # type: ignore[union-attr]
                o,
                o_s,
                batched_n,
                many_tokens,
            )
        if torch.cuda.is_available():
            gpu = StudentLabeler(path, "bench-gpu", batch_size=batch, device="cuda")
            gpu.predict(few[:8])
            g1, g1_s = _timed(lambda: [gpu.predict([t])[0].label for t in few])
            record("student GPU, batch 1", g1, g1_s, naive_n, few_tokens)
            gpu_batch = StudentLabeler(path, "bench-gpu", batch_size=256, device="cuda")
            gb, gb_s = _timed(lambda: [p.label for p in gpu_batch.predict(many)])
            record("student GPU, batched (256)", gb, gb_s, batched_n, many_tokens)
        if small_layers and model_dir is None:
            small_path = untrained_student(Path(tmp) / "small", max_length, small_layers)
            small_fp32 = StudentLabeler(small_path, "bench-small-fp32", device="cpu")
            small_pipe = pipeline(
                "text-classification",
                model=small_fp32.model,
                tokenizer=small_fp32.tokenizer,
                device=-1,
            )
            small_pipe(few[0], truncation=True, max_length=max_length)
            _, sn_s = _timed(
                lambda: [small_pipe(t, truncation=True, max_length=max_length) for t in few]
            )
            name = f"naive pipeline, per item, --layers {small_layers}"
            record(name, naive_labels, sn_s, naive_n, few_tokens)
            rows[name]["agree_with_naive"] = "other model"
            small = StudentLabeler(small_path, "bench-small", batch_size=batch, bf16=True)
            small.predict(few[:4])
            sm, sm_s = _timed(lambda: [p.label for p in small.predict(many)])
            name = f"student --layers {small_layers}, bf16, batched ({batch})"
            record(name, sm, sm_s, batched_n, many_tokens)
            rows[name]["agree_with_naive"] = "other model"
            if openvino_available():
                small_ov = StudentLabeler(
                    small_path, "bench-small-ov", batch_size=batch, openvino=True
                )
                small_ov.predict(few[:4])
                so, so_s = _timed(lambda: [p.label for p in small_ov.predict(many)])
                name = f"student --layers {small_layers}, OpenVINO, batched ({batch})"
                record(name, so, so_s, batched_n, many_tokens)
                rows[name]["agree_with_naive"] = "other model"
    return {
        "machine": {
            "cpus": os.cpu_count(),
            "torch_threads": torch.get_num_threads(),
            "python": platform.python_version(),
            "torch": torch.__version__,
            "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        },
        "texts": source,
        "max_length": max_length,
        "rows": rows,
    }


def print_report(result: dict[str, Any]) -> None:
    print(f"machine: {result['machine']}")
    print(f"texts: {result['texts']}, max_length {result['max_length']}")
    print("| run | items | req/s | tokens/s | speed-up vs naive | labels agree |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, r in result["rows"].items():
        print(
            f"| {name} | {r['items']} | {r['req_per_s']:.1f} | {r['tokens_per_s']:.0f}"
            f" | {r['speedup_vs_naive']:.2f}x | {r['agree_with_naive']} |"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="A few dozen messages only.")
    parser.add_argument("--model", type=Path, default=None, help="A trained student directory.")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--naive", type=int, default=300, help="Messages for the slow loops.")
    parser.add_argument("--items", type=int, default=2000, help="Messages for batched runs.")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--small-layers", type=int, default=3, help="Also time a student of N layers (0: skip)."
    )
    args = parser.parse_args(argv)
    naive_n, items = (24, 64) if args.quick else (args.naive, args.items)
    result = run(
        args.model,
        args.data,
        naive_n,
        items,
        args.batch,
        args.max_length,
        args.small_layers or None,
    )
    print_report(result)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
