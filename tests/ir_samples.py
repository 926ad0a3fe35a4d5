"""Helpers for the IR engine's tests: the sample projects, clang, and parsed modules."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from engines.ir.build import compile_command
from engines.ir.ingest import load_module
from engines.ir.structural_hash import structural_hash

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_data" / "ir"
LICENSE_TEXTS = SAMPLES / "licenses"
CLANG = shutil.which("clang") or "clang"

# Pairs the sample data promises (see sample_data/ir/README.md).
SAME = [
    ("mathlib/src/sum.c", "mathlib/src/sum_renamed.c"),
    ("mathlib/src/sum.c", "vecops/src/accumulate.c"),
    ("geomkit/src/shapes.cpp", "geomkit/src/shapes_reformatted.cpp"),
]
DIFFERENT = [("mathlib/src/scale.c", "mathlib/src/scale_by_4.c")]
UNITS = sorted(p.relative_to(SAMPLES).as_posix() for p in SAMPLES.rglob("*.c*"))


def compile_bitcode(source: Path, *flags: str) -> bytes:
    """Bitcode of one C/C++ file, compiled as ``--build`` compiles it."""
    argv = compile_command(CLANG, flags or ("-O0",), source.name)
    return subprocess.run(argv, cwd=source.parent, capture_output=True, check=True).stdout


def compile_text(source: Path, *flags: str) -> str:
    """Textual IR of one C/C++ file from clang (``-S``), as clang 14 writes it."""
    argv = [CLANG, *(flags or ("-O0",)), "-S", "-emit-llvm", "-o", "-", source.name]
    return subprocess.run(
        argv, cwd=source.parent, capture_output=True, check=True, text=True
    ).stdout


def hash_of(data: bytes | str) -> str:
    """The structural hash of a module given as bitcode or text."""
    raw = data.encode() if isinstance(data, str) else data
    return structural_hash(load_module(raw).printed)
