"""LLVM IR mining: llvmlite ingest, clang builds, lexing, structural hash, statistics,
provenance and licenses (``curator mine ir``, driven by :mod:`engines.ir.pipeline`)."""
