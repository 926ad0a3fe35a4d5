"""``manifest.json``: what a release holds, how it was cut, and every file's sha256."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from annotation.jsontext import lone_surrogate
from curator.releases.schema import FORMAT, MANIFEST_SCHEMA, version_problem

MANIFEST = "manifest.json"
SIGNATURE = "manifest.json.sig"  # the one file a manifest cannot list (see signing.py)
DATASHEET = "DATASHEET.md"


FORMATS = ("jsonl", "parquet")


def data_file_name(kind: str, part: str | None, compress: bool, file_format: str = "jsonl") -> str:
    """``commit.jsonl``, ``commit.train.jsonl``, ``ir.jsonl.gz``, ``kernel.parquet``..."""
    name = kind if part is None else f"{kind}.{part}"
    if file_format == "parquet":
        return f"{name}.parquet"
    return f"{name}.jsonl" + (".gz" if compress else "")


def build_manifest(
    *,
    version: str,
    created_at: str,
    tool_version: str,
    schema_version: int,
    filters: dict[str, Any],
    counts: dict[str, Any],
    files: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": version,
        "created_at": created_at,
        "tool": {"name": "curator", "version": tool_version},
        "store": {"schema_version": schema_version},
        "filters": filters,
        "counts": counts,
        "files": {name: files[name] for name in sorted(files)},
    }


class ManifestError(ValueError):
    """A manifest that is missing, unreadable or not shaped as a manifest."""


def load_manifest(release: Path) -> dict[str, Any]:
    """The release's manifest, checked against its schema; one-line errors name the file."""
    path = release / MANIFEST
    if not release.is_dir():
        raise ManifestError(f"{release}: not a release directory")
    if not path.is_file():
        raise ManifestError(f"{path}: missing (every release has a manifest.json)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise ManifestError(f"{path}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise ManifestError(
            f"{path}:{exc.lineno}: malformed JSON ({exc.msg} at column {exc.colno})"
        ) from None
    except RecursionError:
        raise ManifestError(f"{path}: JSON nested too deeply to read") from None
    surrogate = lone_surrogate(data)
    if surrogate:
        raise ManifestError(f"{path}: {surrogate}")
    problem = next(iter(Draft202012Validator(MANIFEST_SCHEMA).iter_errors(data)), None)
    if problem is not None:
        where = "/".join(str(p) for p in problem.absolute_path) or "top level"
        raise ManifestError(f"{path}: {where}: {problem.message}")
    version = version_problem(data["version"])
    if version is not None:
        raise ManifestError(f"{path}: {version}")
    for name in data["files"]:
        if name.startswith("/") or ".." in Path(name).parts or name in (MANIFEST, SIGNATURE):
            raise ManifestError(f"{path}: files: {name!r} is not a path inside the release")
    return data


def data_files(manifest: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(name, entry) of the JSONL files, in name order."""
    return [(n, e) for n, e in sorted(manifest["files"].items()) if "kind" in e]
