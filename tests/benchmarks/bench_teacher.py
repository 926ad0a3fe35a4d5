"""Throughput of the teacher client, concurrent against one request at a time.

Usage (from the repository root)::

    python tests/benchmarks/bench_teacher.py [--quick] [--items N] [--latency S] [--concurrency C]

A local HTTP server (the deterministic responder of the tests) answers every request
after ``--latency`` seconds, standing in for a model's think time. In the same run the
client asks the same ``--items`` texts with concurrency 1 (the baseline: what a plain
request loop does) and with ``--concurrency``, through ``Teacher.ask_many`` exactly as
``curator teach`` does, and reports answers per second and their ratio. With a real
model the ratio is bounded by how many requests the server runs in parallel (Ollama:
``OLLAMA_NUM_PARALLEL``; vLLM: its batch size). A zero-latency round measures the
client's own overhead per answer.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from engines.labelers.teacher import Failure, Teacher, TeacherConfig  # noqa: E402
from tests.teacher_server import FakeLLM  # noqa: E402


def run(url: str, texts: list[str], concurrency: int, api: str) -> tuple[float, int]:
    """Seconds taken and answers received for one pass over ``texts``."""
    config = TeacherConfig(endpoint=url, model="bench", api=api, concurrency=concurrency)
    with Teacher(config) as teacher:
        start = time.perf_counter()
        answers = sum(1 for _, result in teacher.ask_many(texts) if not isinstance(result, Failure))
        return time.perf_counter() - start, answers


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few items (CI form)")
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--api", choices=("ollama", "openai"), default="ollama")
    args = parser.parse_args(argv)
    items = 16 if args.quick else args.items
    latency = 0.01 if args.quick else args.latency
    texts = [f"commit {i}: make the parser faster" for i in range(items)]
    print(f"python {platform.python_version()} on {platform.machine()}; {items} items, {args.api}")
    with FakeLLM() as llm:
        llm.latency = 0.0
        seconds, answers = run(llm.url, texts, 1, args.api)
        print(
            f"client overhead: {answers}/{items} answers, {answers / seconds:,.0f} answers/s"
            f" at zero latency, one at a time"
        )
        llm.latency = latency
        base_s, base_n = run(llm.url, texts, 1, args.api)
        fast_s, fast_n = run(llm.url, texts, args.concurrency, args.api)
    base_rate, fast_rate = base_n / base_s, fast_n / fast_s
    print(f"latency {latency * 1000:.0f} ms per answer")
    print(f"baseline (concurrency 1): {base_n}/{items} answers, {base_rate:,.1f} answers/s")
    print(f"concurrency {args.concurrency}: {fast_n}/{items} answers, {fast_rate:,.1f} answers/s")
    print(f"speed-up vs one at a time: {fast_rate / base_rate:.2f}x (ideal {args.concurrency}x)")
    return 0 if base_n == fast_n == items else 1


if __name__ == "__main__":
    raise SystemExit(main())
