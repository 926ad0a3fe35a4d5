"""Throughput of student inference: the overlapped pipeline against its ceiling (the bare
forward pass on pre-tokenized batches), and everything against a naive per-item
transformers pipeline.

Usage (from the repository root)::

    python tests/benchmarks/bench_student.py [--quick] [--model DIR] [--data DIR] [--json OUT]

In one run, on the same model and the same texts (commit messages from the shared
perf-commit-messages data when present, generated messages otherwise), the first table
times, per backend (torch fp32 on CPU, torch bf16, OpenVINO when installed; torch bf16
on the GPU when torch sees one):

* ceiling: the model alone over the very batches the pipeline builds, tokenized and
  padded beforehand (nothing but forward passes, and for OpenVINO its async requests);
* pipeline: :class:`StudentLabeler`'s ``predict`` as shipped (tokenization of batch k+1
  in a thread while the model runs batch k, batches sized by tokens), and its ratio to
  the ceiling;
* sequential: the path before it (tokenize everything, then batches of N items).

Ceiling and pipeline are timed back to back ``--repeats`` times, the order swapped each
round; the ratio is the median of the rounds' ratios and the rates the best of each (the
machine is shared, so its load drifts between runs). ``--pipeline-only`` stops there
(with the peers). The second table, against the naive loop, times:

* naive: ``transformers.pipeline("text-classification")`` called once per message;
* batch 1: :class:`StudentLabeler` called once per message (tokenize, pad, forward);
* batched: one ``predict`` over all messages (length-sorted batches, dynamic padding);
* batched int8: the same with dynamic int8 quantization (CPU);
* batched bf16: the same with bfloat16 weights (fast where the CPU has AMX/AVX-512 BF16);
* batched OpenVINO: the same model converted to OpenVINO IR, on its CPU runtime (bf16
  where the CPU has it), when openvino is installed;
* on a GPU, when torch sees one: batch 1 and batched again on the GPU;
* peers: sentence-transformers ``encode`` (embeddings only, no head: what a user would
  try first) and the transformers pipeline given every message in batches.

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
import statistics
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
from engines.labelers.student.pipeline import BatchFeeder  # noqa: E402

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


def prepared_batches(labeler: StudentLabeler, texts: list[str]) -> list[Any]:
    """The batches the pipeline builds from ``texts``, built beforehand (pinned on GPU)."""
    with BatchFeeder(texts, labeler.encoder, labeler.pad_id, labeler.batch_tokens) as feeder:
        return list(feeder)


def bare_forward(labeler: StudentLabeler, batches: list[Any], n: int) -> None:
    """The model alone over pre-tokenized batches: the ceiling of the pipeline."""
    import torch

    if labeler.openvino is not None:
        labeler.openvino._run(n, ((b.rows, b.inputs) for b in batches))
        return
    with torch.inference_mode():
        for b in batches:
            labeler.model(**b.inputs)
        if labeler.device.type == "cuda":
            torch.cuda.synchronize()


def pipeline_rows(
    path: Path,
    texts: list[str],
    batch: int,
    repeats: int,
    gpu_batch: int,
    quick: bool = False,
    gpu_only: bool = False,
) -> dict[str, dict[str, Any]]:
    """Per backend: ceiling, pipeline, their ratio and the sequential path, in one run."""
    import torch

    backends: list[tuple[str, dict[str, Any]]] = (
        [] if gpu_only else [("torch fp32, CPU", {"device": "cpu", "bf16": False})]
    )
    if not quick and not gpu_only:
        backends.append(("torch bf16, CPU", {"device": "cpu", "bf16": True}))
    if openvino_available() and not quick and not gpu_only:  # its own tests cover it
        backends.append(("OpenVINO, CPU", {"openvino": True}))
    if torch.cuda.is_available():
        backends.append(("torch bf16, GPU", {"device": "cuda", "batch_size": gpu_batch}))
    rows: dict[str, dict[str, Any]] = {}
    for name, options in backends:
        label, row = _pipeline_row(path, name, {"batch_size": batch, **options}, texts, repeats)
        rows[label] = row
    return rows


def _pipeline_row(
    path: Path, name: str, options: dict[str, Any], texts: list[str], repeats: int
) -> tuple[str, dict[str, Any]]:
    import torch

    n = len(texts)
    labeler = StudentLabeler(path, "bench-pipeline", **options)
    if labeler.openvino is not None:
        name = f"OpenVINO {labeler.openvino.precision}, CPU"
    batches = prepared_batches(labeler, texts)
    if labeler.device.type == "cuda":
        batches = [
            type(b)(b.rows, {k: torch.as_tensor(v).to(labeler.device) for k, v in b.inputs.items()})
            for b in batches
        ]
    elif labeler.openvino is None:
        batches = [
            type(b)(b.rows, {k: torch.from_numpy(v) for k, v in b.inputs.items()}) for b in batches
        ]
    # Warm-up over every batch once: the first run of each batch shape costs more (kernel
    # selection, primitive caches), and would count against whichever path ran first.
    labeler.predict(texts)
    bare_forward(labeler, batches, n)
    ceiling_s = pipeline_s = float("inf")
    ratios: list[float] = []
    got: list[Any] = []
    for r in range(repeats):
        # ceiling and pipeline back to back, the order swapped each round, so that a
        # change of load on the shared machine weighs on both alike
        for step in ("ceiling", "pipeline") if r % 2 == 0 else ("pipeline", "ceiling"):
            if step == "ceiling":
                c_s = _timed(lambda: bare_forward(labeler, batches, n))[1]
            else:
                got, p_s = _timed(lambda: labeler.predict(texts))
        ceiling_s, pipeline_s = min(ceiling_s, c_s), min(pipeline_s, p_s)
        ratios.append(c_s / p_s)
    labeler.overlap = False
    want, sequential_s = _timed(lambda: labeler.predict(texts))
    labeler.overlap = True
    agree = sum(1 for a, b in zip(got, want, strict=True) if a.label == b.label)
    return name, {
        "items": n,
        "batch": f"{labeler.batch_tokens} tokens (~{labeler.batch_size} messages)",
        "ceiling_req_per_s": n / ceiling_s,
        "pipeline_req_per_s": n / pipeline_s,
        "pipeline_vs_ceiling": statistics.median(ratios),
        "pipeline_vs_ceiling_rounds": [round(x, 3) for x in ratios],
        "sequential_req_per_s": n / sequential_s,
        "pipeline_vs_sequential": sequential_s / pipeline_s,
        "agree_with_sequential": f"{agree}/{n}",
        "tokenize_threads": labeler.tokenize_threads,
    }


def _sentence_transformer_class() -> Any:
    """sentence-transformers' model class, or None where it is not installed."""
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        return None
    return SentenceTransformer


def gpu_peer_rows(
    labeler: StudentLabeler, texts: list[str], max_length: int, with_encode: Any = None
) -> dict[str, float]:
    """Req/s of the GPU peers: sentence-transformers fp16 ``encode`` (when
    ``with_encode`` is its ``SentenceTransformer`` class) and the transformers pipeline."""
    from transformers import pipeline

    out: dict[str, float] = {}
    if with_encode is not None:
        st_gpu = with_encode(default_base(), device="cuda").half()
        st_gpu.max_seq_length = max_length
        st_gpu.encode(texts[:64], batch_size=1024)
        _, seconds = _timed(lambda: st_gpu.encode(texts, batch_size=1024))
        out["sentence-transformers encode, fp16, batch 1024, GPU"] = len(texts) / seconds
    gpu_pipe = pipeline(
        "text-classification",
        model=StudentLabeler(labeler.path, "peer-gpu", device="cuda", bf16=False).model,
        tokenizer=labeler.tokenizer,
        device=0,
    )
    gpu_pipe(texts[:64], batch_size=256, truncation=True, max_length=max_length)
    _, seconds = _timed(
        lambda: gpu_pipe(texts, batch_size=256, truncation=True, max_length=max_length)
    )
    out["transformers pipeline, batch 256, GPU"] = len(texts) / seconds
    return out


def peer_rows(
    labeler: StudentLabeler, texts: list[str], batch: int, max_length: int, quick: bool
) -> dict[str, float]:
    """Req/s of what a user would try: sentence-transformers ``encode`` (when installed)
    and the transformers pipeline fed every message with ``batch_size``."""
    from transformers import pipeline

    out: dict[str, float] = {}
    SentenceTransformer = _sentence_transformer_class()
    import torch

    if SentenceTransformer is not None and not quick:
        st = SentenceTransformer(default_base(), device="cpu")
        st.max_seq_length = max_length
        st.encode(texts[:8], batch_size=batch)
        _, seconds = _timed(lambda: st.encode(texts, batch_size=batch))
        out[f"sentence-transformers encode, batch {batch} (embeddings, no head)"] = (
            len(texts) / seconds
        )
    if torch.cuda.is_available() and not quick:
        out.update(gpu_peer_rows(labeler, texts, max_length, with_encode=SentenceTransformer))
    pipe = pipeline(
        "text-classification", model=labeler.model, tokenizer=labeler.tokenizer, device=-1
    )
    pipe(texts[:8], batch_size=batch, truncation=True, max_length=max_length)
    _, seconds = _timed(
        lambda: pipe(texts, batch_size=batch, truncation=True, max_length=max_length)
    )
    out[f"transformers pipeline, batch {batch}"] = len(texts) / seconds
    return out


def run(
    model_dir: Path | None = None,
    data: Path = DEFAULT_DATA,
    naive_n: int = 300,
    batched_n: int = 2000,
    batch: int = 64,
    max_length: int = 128,
    small_layers: int | None = 3,
    repeats: int = 2,
    gpu_batch: int = 1024,
    quick: bool = False,
    pipeline_only: bool = False,
    gpu_only: bool = False,
) -> dict[str, Any]:
    import torch
    from transformers import pipeline

    if gpu_only and not torch.cuda.is_available():
        raise SystemExit("--gpu-only: torch sees no GPU")
    use_all_cores()
    with tempfile.TemporaryDirectory() as tmp:
        # the quick form (the test suite's) times a one-layer cut of the same encoder: every
        # path and every agreement is the same, each forward pass a sixth of the cost
        path = model_dir or untrained_student(
            Path(tmp) / "student", max_length, 1 if quick else None
        )
        texts, source = messages(data, max(naive_n, batched_n))
        few, many = texts[:naive_n], texts[:batched_n]
        pipeline_table = pipeline_rows(path, many, batch, repeats, gpu_batch, quick, gpu_only)
        cpu = StudentLabeler(path, "bench", batch_size=batch, device="cpu", overlap=False)
        if gpu_only:
            peers = {} if pipeline_only else _gpu_peer_table(cpu, many)
            return _report(source, max_length, pipeline_table, peers)
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
        name = f"student, batched ({batch}), sequential path"
        record(name, batched, batched_s, batched_n, many_tokens)
        for name, rate in peer_rows(cpu, many, batch, max_length, quick).items():
            rows[name] = _peer_row(rate, batched_n, many_tokens, naive_n / naive_s)
        if pipeline_only or quick:  # the quick form (the test suite's) keeps the main rows
            small_layers = None
        int8 = (
            None
            if pipeline_only
            else StudentLabeler(path, "bench-int8", batch_size=batch, quantized=True)
        )
        if int8 is not None:
            int8.predict(few[:4])
            q, q_s = _timed(lambda: [p.label for p in int8.predict(many)])
            record(f"student int8, batched ({batch})", q, q_s, batched_n, many_tokens)
            if not quick:
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
                gpu_many = StudentLabeler(path, "bench-gpu", batch_size=256, device="cuda")
                gb, gb_s = _timed(lambda: [p.label for p in gpu_many.predict(many)])
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
    return _report(source, max_length, pipeline_table, rows)


def _peer_row(rate: float, n: int, tokens: int, naive_rate: float | None) -> dict[str, Any]:
    """A peer's row of the second table (``naive_rate`` None: no naive loop ran)."""
    return {
        "items": n,
        "seconds": round(n / rate, 3),
        "req_per_s": rate,
        "tokens_per_s": tokens / (n / rate),
        "speedup_vs_naive": None if naive_rate is None else rate / naive_rate,
        "agree_with_naive": "n/a",
    }


def _gpu_peer_table(labeler: StudentLabeler, texts: list[str]) -> dict[str, dict[str, Any]]:
    """The GPU peers as rows (there is no naive loop to compare them with)."""
    tokens = sum(len(ids) for ids in tokenize(labeler.tokenizer, texts, labeler.max_length))
    rates = gpu_peer_rows(labeler, texts, labeler.max_length, _sentence_transformer_class())
    return {name: _peer_row(rate, len(texts), tokens, None) for name, rate in rates.items()}


def _report(
    source: str, max_length: int, pipeline_table: dict[str, Any], rows: dict[str, Any]
) -> dict[str, Any]:
    import torch

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
        "pipeline": pipeline_table,
        "rows": rows,
    }


def print_report(result: dict[str, Any]) -> None:
    print(f"machine: {result['machine']}")
    print(f"texts: {result['texts']}, max_length {result['max_length']}")
    print(
        "| backend | items | batch | ceiling req/s | pipeline req/s | pipeline/ceiling"
        " | sequential req/s | pipeline/sequential | labels agree |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for name, r in result["pipeline"].items():
        print(
            f"| {name} | {r['items']} | {r['batch']} | {r['ceiling_req_per_s']:.1f}"
            f" | {r['pipeline_req_per_s']:.1f} | {r['pipeline_vs_ceiling']:.1%}"
            f" | {r['sequential_req_per_s']:.1f} | {r['pipeline_vs_sequential']:.2f}x"
            f" | {r['agree_with_sequential']} |"
        )
    print()
    print("| run | items | req/s | tokens/s | speed-up vs naive | labels agree |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, r in result["rows"].items():
        speedup = "n/a" if r["speedup_vs_naive"] is None else f"{r['speedup_vs_naive']:.2f}x"
        print(
            f"| {name} | {r['items']} | {r['req_per_s']:.1f} | {r['tokens_per_s']:.0f}"
            f" | {speedup} | {r['agree_with_naive']} |"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="A few dozen messages on a one-layer cut of the encoder; no bf16, no smaller"
        " student and no OpenVINO pipeline row (the test suite's form).",
    )
    parser.add_argument("--model", type=Path, default=None, help="A trained student directory.")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--naive", type=int, default=300, help="Messages for the slow loops.")
    parser.add_argument("--items", type=int, default=2000, help="Messages for batched runs.")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--repeats", type=int, default=2, help="Best of N for ceiling/pipeline.")
    parser.add_argument(
        "--pipeline-only", action="store_true", help="The pipeline table and the peers only."
    )
    parser.add_argument("--gpu-batch", type=int, default=1024, help="Messages per GPU batch.")
    parser.add_argument(
        "--gpu-only",
        action="store_true",
        help="The GPU pipeline row and the GPU peers only (large --items on a GPU machine).",
    )
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
        1 if args.quick else args.repeats,
        args.gpu_batch,
        args.quick,
        args.pipeline_only,
        args.gpu_only,
    )
    print_report(result)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
