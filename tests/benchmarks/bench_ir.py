"""IR throughput: modules structurally hashed per second, against baselines in the same run.

The corpus is real clang output: every C/C++ file of ``sample_data/ir`` plus a generated
C file with many functions, each compiled three ways (``-O0``, ``-O0 -g`` and ``-O2``,
all before LLVM passes, as ``--build`` compiles). Timed per module, single-threaded,
best of several rounds:

* ``parse``: llvmlite parses the bitcode, verifies it and prints it (what any ingest
  must do before hashing);
* ``sha256``: SHA-256 of the printed text (exact-text dedup, the cheap baseline);
* ``structural``: our structural hash of the printed text;
* ``ingest``: parse + structural hash + statistics (the per-module work of the pipeline);
* ``mine_ir``: the whole pipeline over a folder of the ``.bc`` files into a fresh SQLite
  store (project and license lookup, batches, dedup), end to end.

It also counts distinct modules under each hash: the -g variants differ from the plain
ones only in debug info, so exact-text dedup keeps them and the structural hash must not.

Run ``python tests/benchmarks/bench_ir.py [--quick] [--functions N] [--rounds N]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engines.ir.build import compile_command, resolve_compiler  # noqa: E402
from engines.ir.ingest import load_module  # noqa: E402
from engines.ir.lexer import entities  # noqa: E402
from engines.ir.pipeline import mine_ir  # noqa: E402
from engines.ir.stats import module_stats  # noqa: E402
from engines.ir.structural_hash import structural_hash  # noqa: E402
from store import open_store  # noqa: E402

SAMPLES = ROOT / "sample_data" / "ir"
VARIANTS: dict[str, tuple[str, ...]] = {"O0": ("-O0",), "O0-g": ("-O0", "-g"), "O2": ("-O2",)}


def generated_c(functions: int) -> str:
    """A C file with ``functions`` small functions calling each other (a bigger module)."""
    parts = ["#include <stddef.h>", "static long table[64];"]
    for i in range(functions):
        callee = f"f{i - 1}(x - 1, n)" if i else "x"
        parts.append(
            f"long f{i}(long x, size_t n) {{\n"
            f"  long acc = {i};\n"
            f"  for (size_t k = 0; k < n; k++) {{\n"
            f"    if ((x + (long)k) % {i % 7 + 2} == 0) acc += table[k % 64] * {i + 1};\n"
            f"    else acc ^= (long)k << {i % 5};\n"
            f"  }}\n"
            f"  return acc + {callee};\n"
            f"}}"
        )
    return "\n\n".join(parts) + "\n"


def build_corpus(folder: Path, functions: int, variants: Sequence[str]) -> list[tuple[str, bytes]]:
    """(name, bitcode) for every sample file and the generated one, in each variant."""
    cc = resolve_compiler("clang")
    generated = folder / "generated.c"
    generated.write_text(generated_c(functions))
    sources = sorted(SAMPLES.rglob("*.c")) + sorted(SAMPLES.rglob("*.cpp")) + [generated]
    corpus = []
    for source in sources:
        for variant in variants:
            argv = compile_command(cc, VARIANTS[variant], source.name)
            data = subprocess.run(argv, cwd=source.parent, capture_output=True, check=True).stdout
            corpus.append((f"{source.stem}.{variant}", data))
    return corpus


def best_seconds(work: Callable[[], object], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    return best


def run(quick: bool = False, functions: int = 300, rounds: int | None = None) -> dict[str, Any]:
    """Build the corpus, time every stage, and return the rates, ratios and counts."""
    rounds = rounds or (1 if quick else 5)
    variants = ("O0", "O0-g") if quick else tuple(VARIANTS)
    with tempfile.TemporaryDirectory(prefix="bench-ir-") as tmp:
        folder = Path(tmp)
        corpus = build_corpus(folder, 40 if quick else functions, variants)
        blobs = [data for _, data in corpus]
        printed = [load_module(data).printed for data in blobs]
        count = len(blobs)

        def ingest() -> None:
            for data in blobs:
                loaded = load_module(data)
                ents = list(entities(loaded.printed))
                structural_hash(loaded.printed, ents)
                module_stats(loaded.printed, loaded.text, loaded.bitcode, ents)

        seconds = {
            "parse": best_seconds(lambda: [load_module(d) for d in blobs], rounds),
            "sha256": best_seconds(
                lambda: [hashlib.sha256(t.encode()).hexdigest() for t in printed], rounds
            ),
            "structural": best_seconds(lambda: [structural_hash(t) for t in printed], rounds),
            "ingest": best_seconds(ingest, rounds),
        }
        modules = folder / "modules"
        modules.mkdir()
        for name, data in corpus:
            (modules / f"{name}.bc").write_bytes(data)
        started = time.perf_counter()
        with open_store(folder / "bench.db") as store:
            summary = mine_ir(store, [modules])
        seconds["mine_ir"] = time.perf_counter() - started

        structural = {
            name: structural_hash(text) for (name, _), text in zip(corpus, printed, strict=True)
        }
        exact = {hashlib.sha256(text.encode()).hexdigest() for text in printed}
        plain_vs_debug = [
            structural[f"{name}.O0"] == structural[f"{name}.O0-g"]
            for name in {n.rsplit(".", 1)[0] for n, _ in corpus}
        ]
        rates = {stage: count / s for stage, s in seconds.items()}
        return {
            "modules": count,
            "text_mb": sum(len(t) for t in printed) / 1e6,
            "bitcode_mb": sum(len(b) for b in blobs) / 1e6,
            "largest_text_kb": max(len(t) for t in printed) / 1e3,
            "rounds": rounds,
            "modules_per_s": rates,
            "structural_vs_parse": rates["structural"] / rates["parse"],
            "structural_vs_sha256": rates["structural"] / rates["sha256"],
            "ingest_vs_parse": rates["ingest"] / rates["parse"],
            "distinct_exact": len(exact),
            "distinct_structural": len(set(structural.values())),
            "debug_variants_matching": sum(plain_vs_debug),
            "debug_variants": len(plain_vs_debug),
            "stored_by_mine_ir": summary.stored,
            "duplicates_by_mine_ir": summary.duplicates,
        }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short run (a few seconds)")
    parser.add_argument("--functions", type=int, default=300, help="functions in generated.c")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run(args.quick, args.functions, args.rounds)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(
        f"IR benchmark: {result['modules']} modules, {result['text_mb']:.2f} MB text,"
        f" {result['bitcode_mb']:.2f} MB bitcode (largest {result['largest_text_kb']:.0f} KB"
        f" text); best of {result['rounds']}; Python {platform.python_version()},"
        " single-threaded"
    )
    mb_per_module = result["text_mb"] / result["modules"]
    for stage, rate in result["modules_per_s"].items():
        print(f"  {stage:<11} {rate:10,.1f} modules/s  {rate * mb_per_module:8.1f} MB text/s")
    print(f"  structural hash vs parse:  {result['structural_vs_parse']:.2f}x")
    print(f"  structural hash vs sha256: {result['structural_vs_sha256']:.4f}x")
    print(f"  ingest (parse+hash+stats) vs parse only: {result['ingest_vs_parse']:.2f}x")
    print(
        f"  distinct modules: exact text {result['distinct_exact']},"
        f" structural {result['distinct_structural']};"
        f" -g variants matching: {result['debug_variants_matching']}/{result['debug_variants']}"
    )
    print(
        f"  mine_ir stored {result['stored_by_mine_ir']},"
        f" linked {result['duplicates_by_mine_ir']} duplicates"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
