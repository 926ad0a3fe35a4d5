"""Kernel engine throughput, each against a baseline measured in the same run.

* checker: kernels checked per second (build + four runs A1, B1, A2, B2) in Curator's
  reused worker child, against one fresh worker process per kernel (the obvious way to
  isolate kernels that may hang or crash);
* rejection filter: kernels filtered per second (device build, shim retry, clang IR,
  llvmlite instruction count and features), against a plain uncached pyopencl build
  loop in one process (the build alone, no isolation, no count).

The kernels are generated variants of a few shapes (distinct constants, so no cache can
answer for them). Run ``python tests/benchmarks/bench_kernels.py [--kernels N] [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engines.kernels.checker import KernelWorker, check_kernel  # noqa: E402
from engines.kernels.compile import rejection_filter  # noqa: E402

SHAPES = (
    "__kernel void k{i}(__global float* a, __global float* b, const int n) {{\n"
    "  int g = get_global_id(0);\n  if (g < n) b[g] = a[g] * {i}.5f + b[g];\n}}\n",
    "__kernel void k{i}(__global const int* a, __global int* b, const int n) {{\n"
    "  int g = get_global_id(0);\n  int s = 0;\n"
    "  for (int j = 0; j < {m}; j++) s += a[(g + j) % n];\n  b[g] = s;\n}}\n",
    "__kernel void k{i}(__global float* a, __local float* t, const int n) {{\n"
    "  int l = get_local_id(0);\n  t[l] = a[get_global_id(0)] + {i};\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  a[get_global_id(0)] = t[(l + 1) % get_local_size(0)];\n}}\n",
    "__kernel void k{i}(__global float* a, const int n) {{\n"
    "  int g = get_global_id(0);\n  if (g < 0) a[g] = {i};\n}}\n",  # no output
)


def kernels(count: int) -> list[str]:
    return [SHAPES[i % len(SHAPES)].format(i=i, m=i % 7 + 2) for i in range(count)]


def check_reused(sources: list[str]) -> Counter[str]:
    with KernelWorker() as worker:
        return Counter(check_kernel(worker, s).verdict for s in sources)


def check_fresh(sources: list[str]) -> Counter[str]:
    verdicts: Counter[str] = Counter()
    for s in sources:
        with KernelWorker() as worker:
            verdicts[check_kernel(worker, s).verdict] += 1
    return verdicts


def filter_ours(sources: list[str]) -> int:
    with KernelWorker() as worker:
        worker.build("__kernel void warm(__global int* a) { a[0] = 1; }")  # device start-up
        return sum(rejection_filter(worker, s).accepted for s in sources)


def plain_build_loop(sources: list[str]) -> int:
    os.environ.setdefault("POCL_KERNEL_CACHE", "0")
    os.environ.setdefault("PYOPENCL_NO_CACHE", "1")
    import pyopencl as cl

    from engines.kernels.device import runtime

    context = runtime().context  # device start-up, as the warm-up above
    built = 0
    for s in sources:
        try:
            cl.Program(context, s).build()
            built += 1
        except cl.RuntimeError:
            pass
    return built


def timed(fn, *args):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - start


def run(count: int) -> dict[str, object]:
    sources = kernels(count)
    reused, t_reused = timed(check_reused, sources)
    fresh, t_fresh = timed(check_fresh, sources)
    accepted, t_filter = timed(filter_ours, sources)
    built, t_plain = timed(plain_build_loop, sources)
    checks = {"reused-worker": count / t_reused, "fresh-process": count / t_fresh}
    filters = {"curator-filter": count / t_filter, "plain-build-loop": count / t_plain}
    return {
        "kernels": count,
        "verdicts": {"reused-worker": dict(reused), "fresh-process": dict(fresh)},
        "checked_per_s": checks,
        "check_ratio": checks["reused-worker"] / checks["fresh-process"],
        "accepted_by_filter": accepted,
        "built_by_plain_loop": built,
        "filtered_per_s": filters,
        "filter_ratio": filters["curator-filter"] / filters["plain-build-loop"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=80)
    parser.add_argument("--quick", action="store_true", help="a short form for CI (8 kernels)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run(8 if args.quick else args.kernels)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"{result['kernels']} generated kernels")
    for name, rate in result["checked_per_s"].items():  # type: ignore[union-attr]
        print(f"  check  {name:<17} {rate:8.2f} kernels/s")
    print(f"  reused worker / fresh process = {result['check_ratio']:.2f}x")
    for name, rate in result["filtered_per_s"].items():  # type: ignore[union-attr]
        print(f"  filter {name:<17} {rate:8.2f} kernels/s")
    print(f"  curator filter / plain build loop = {result['filter_ratio']:.2f}x")
    print(f"  verdicts: {result['verdicts']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
