"""One record builder per kind: a stored row (as :mod:`store.releases` streams it) becomes
the JSON object written on one line. A new kind adds one builder and one schema entry.

Store timestamps and row ids are left out on purpose: a record says what an item is,
not when or where this store happened to hold it, so re-exports are byte-identical.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any


def _common(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "kind": row["kind"],
        "key": row["key"],
        "source": row["source"],
        "path": row["path"],
        "language": row["language"],
        "dedup_hash": row["dedup_hash"],
        "provenance": row["provenance"],
    }


def _stars(provenance: dict[str, Any]) -> int | None:
    stars = provenance.get("stars")
    return int(stars) if isinstance(stars, int | float) and not isinstance(stars, bool) else None


def commit_record(row: dict[str, Any]) -> dict[str, Any]:
    functions = list(row["functions"])
    return {
        **_common(row),
        "repo": row["repo"],
        "sha": row["sha"],
        "branch": row["branch"],
        "date": row["author_date"],
        "message": row["message"],
        "diff": row["diff"],
        "file": row["file"],
        "files": list(row["files"]),
        "function": functions[0] if functions else None,
        "functions": functions,
        "code_before": row["code_before"],
        "code_after": row["code_after"],
        "added": row["added"],
        "deleted": row["deleted"],
        "model_input": row["model_input"],
        "function_md5": row["function_md5"],
        "diff_hash": row["diff_hash"],
        "stars": _stars(row["provenance"]),
    }


def kernel_record(row: dict[str, Any]) -> dict[str, Any]:
    return {
        **_common(row),
        "source_file": row["source_file"],
        "kernel_name": row["kernel_name"],
        "origin": row["origin"],
        "original_source": row["original_source"],
        "normalized_source": row["normalized_source"],
        "normalized_hash": row["normalized_hash"],
        "shim_needed": bool(row["shim_needed"]),
        "shim_names": list(row["shim_names"]),
        "filter_status": row["filter_status"],
        "instructions": row["instructions"],
        "compiler_message": row["message"],
        "features": row["features"],
        "verdict": row["verdict"],
        "check_details": row["check_details"],
    }


def ir_record(row: dict[str, Any]) -> dict[str, Any]:
    return {
        **_common(row),
        "structural_hash": row["structural_hash"],
        "input_sha256": row["input_sha256"],
        "project": row["project"],
        "license": row["license"],
        "input_format": row["input_format"],
        "compile_command": row["compile_command"],
        "text": row["text"],
        "bitcode_base64": base64.b64encode(bytes(row["bitcode"])).decode("ascii"),
        "text_bytes": row["text_bytes"],
        "bitcode_bytes": row["bitcode_bytes"],
        "tokens": row["tokens"],
        "functions": row["functions"],
        "declarations": row["declarations"],
        "globals": row["globals"],
        "basic_blocks": row["basic_blocks"],
        "instructions": row["instructions"],
        "opcodes": row["opcodes"],
    }


RECORD_BUILDERS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "commit": commit_record,
    "kernel": kernel_record,
    "ir": ir_record,
}
