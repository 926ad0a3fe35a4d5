"""The JSON Schemas shipped in every release: one per record kind, one for the manifest.

They are built from Python dicts so the exporter, the validator and the documentation
read one definition; a release carries its own copy under ``schema/`` so it can be
checked without Curator.
"""

from __future__ import annotations

import re
from typing import Any

from store.kernel_records import VERDICTS

DIALECT = "https://json-schema.org/draft/2020-12/schema"
FORMAT = "curator-release/1"
VERSION_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")  # the whole string (fullmatch)


def version_problem(version: str) -> str | None:
    """Why ``version`` cannot name a release (it names the folder and the import set)."""
    if VERSION_PATTERN.fullmatch(version):
        return None
    return f"version {version!r}: use letters, digits and . _ + - (e.g. v1.0)"


STR = {"type": "string"}
INT = {"type": "integer"}
NUM = {"type": "number"}
BOOL = {"type": "boolean"}
OBJ = {"type": "object"}
STR_LIST = {"type": "array", "items": STR}


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": [schema["type"], "null"], **{k: v for k, v in schema.items() if k != "type"}}


VOTE = {
    "type": "object",
    "additionalProperties": False,
    "required": ["annotator", "role", "label", "category"],
    "properties": {
        "annotator": STR,
        "role": {"enum": ["annotator", "adjudicator"]},
        "label": STR,
        "category": nullable(STR),
    },
}

# Fields every record has, whatever its kind.
COMMON: dict[str, dict[str, Any]] = {
    "kind": STR,
    "key": {"type": "string", "minLength": 1},
    "source": STR,
    "path": nullable(STR),
    "language": nullable(STR),
    "dedup_hash": nullable(STR),
    "provenance": OBJ,
    "split": nullable(STR),
    "label": nullable(STR),
    "label_source": {"enum": ["adjudicated", "predicted", None]},
    "labeler": nullable(STR),
    "confidence": nullable(NUM),
    "category": nullable(STR),
    "votes": {"type": "array", "items": VOTE},
}

KIND_FIELDS: dict[str, dict[str, dict[str, Any]]] = {
    "commit": {
        "repo": STR,
        "sha": STR,
        "branch": nullable(STR),
        "date": nullable(STR),
        "message": STR,
        "diff": STR,
        "file": nullable(STR),
        "files": STR_LIST,
        "function": nullable(STR),
        "functions": STR_LIST,
        "code_before": nullable(STR),
        "code_after": nullable(STR),
        "added": INT,
        "deleted": INT,
        "model_input": STR,
        "function_md5": nullable(STR),
        "diff_hash": STR,
        "stars": nullable(INT),
    },
    "kernel": {
        "source_file": STR,
        "kernel_name": STR,
        "origin": STR,
        "original_source": STR,
        "normalized_source": nullable(STR),
        "normalized_hash": STR,
        "shim_needed": BOOL,
        "shim_names": STR_LIST,
        "filter_status": {"enum": ["accepted", "rejected"]},
        "instructions": nullable(INT),
        "compiler_message": nullable(STR),
        "features": OBJ,
        "verdict": {"enum": [*VERDICTS, None]},
        "check_details": OBJ,
    },
    "ir": {
        "structural_hash": STR,
        "input_sha256": nullable(STR),
        "project": STR,
        "license": STR,
        "input_format": {"enum": ["ll", "bc", "build"]},
        "compile_command": nullable(STR),
        "text": STR,
        "bitcode_base64": {"type": "string", "contentEncoding": "base64"},
        "text_bytes": INT,
        "bitcode_bytes": INT,
        "tokens": INT,
        "functions": INT,
        "declarations": INT,
        "globals": INT,
        "basic_blocks": INT,
        "instructions": INT,
        "opcodes": {"type": "object", "additionalProperties": INT},
    },
}

KINDS = tuple(KIND_FIELDS)


def record_schema(kind: str) -> dict[str, Any]:
    """The schema of one record of ``kind``: every field required, no others allowed."""
    properties = {**COMMON, **KIND_FIELDS[kind], "kind": {"const": kind}}
    return {
        "$schema": DIALECT,
        "$id": f"{FORMAT}/{kind}.schema.json",
        "title": f"Curator {kind} record",
        "type": "object",
        "additionalProperties": False,
        "required": sorted(properties),
        "properties": properties,
    }


def _counts(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "additionalProperties": INT}
    for _ in range(depth - 1):
        schema = {"type": "object", "additionalProperties": schema}
    return schema


FILE_ENTRY = {
    "type": "object",
    "additionalProperties": False,
    "required": ["sha256", "bytes"],
    "properties": {
        "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        "bytes": INT,
        "kind": STR,
        "split": nullable(STR),
        "records": INT,
        "schema": STR,
        "compression": {"enum": ["gzip", None]},
    },
}

MANIFEST_SCHEMA: dict[str, Any] = {
    "$schema": DIALECT,
    "$id": f"{FORMAT}/manifest.schema.json",
    "title": "Curator release manifest",
    "type": "object",
    "additionalProperties": False,
    "required": ["format", "version", "created_at", "tool", "store", "filters", "counts", "files"],
    "properties": {
        "format": {"const": FORMAT},
        "version": {"type": "string", "minLength": 1},
        "created_at": STR,
        "tool": OBJ,
        "store": OBJ,
        "filters": OBJ,
        "counts": {
            "type": "object",
            "required": ["records", "by_kind", "by_label", "by_language", "by_split"],
            "properties": {
                "records": INT,
                "by_kind": _counts(1),
                "by_label": _counts(2),
                "by_language": _counts(2),
                "by_split": _counts(2),
            },
        },
        "files": {"type": "object", "additionalProperties": FILE_ENTRY},
    },
}


def schema_file(kind: str) -> str:
    """Where the schema of ``kind`` lies inside a release."""
    return f"schema/{kind}.schema.json"
