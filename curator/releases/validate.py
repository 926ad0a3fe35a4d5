"""``curator validate``: a release checked against its manifest and Curator's own schemas.

Records are checked against the schema Curator defines for the release's format version
(``curator-release/1``), never against the copy the release ships under ``schema/``: that
copy is documentation, and one that differs from Curator's is itself a problem. Data files
are regular files with LF line endings; a symbolic link or a CRLF line is refused.

Problems are collected, one line each, most precise first: a bad record is named as
``FILE:LINE`` with the field and what is wrong; then checksums, sizes, counts, and files
missing from the directory or from the manifest. Files are read as streams.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from annotation.jsontext import JsonTextError, parse_json
from curator.releases.files import file_sha256, open_lines
from curator.releases.manifest import (
    MANIFEST,
    SIGNATURE,
    ManifestError,
    data_files,
    load_manifest,
)
from curator.releases.schema import FORMAT, KINDS, record_schema, schema_file
from curator.releases.schema_check import Check, compile_check
from curator.releases.signing import SigningError, verify_release
from curator.releases.tally import UNKNOWN, UNLABELED, WHOLE


@dataclass
class ValidationReport:
    path: Path
    problems: list[str] = field(default_factory=list)
    records: int = 0
    files: int = 0
    manifest: dict[str, Any] | None = None
    signed_by: str | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class _Tally:
    by_label: Counter[str] = field(default_factory=Counter)
    by_language: Counter[str] = field(default_factory=Counter)
    by_split: Counter[str] = field(default_factory=Counter)


def _where(error: Any) -> str:
    path = "/".join(str(p) for p in error.absolute_path)
    return f"field {path!r}" if path else "record"


@dataclass(frozen=True)
class _Schema:
    validator: Draft202012Validator
    fast: Check | None

    def problem(self, record: Any) -> str | None:
        if self.fast is not None and self.fast(record):
            return None
        error = next(iter(self.validator.iter_errors(record)), None)
        return None if error is None else f"{_where(error)}: {error.message}"


def _own_schema(release: Path, kind: str, shipped: str) -> tuple[_Schema | None, str | None]:
    """Curator's schema for ``kind`` (None when the kind is unknown), and a problem when
    the release's copy (``shipped``) is not that schema: records are still checked
    against Curator's."""
    if kind not in KINDS:
        return None, f"{release / MANIFEST}: kind {kind!r} is not a {FORMAT} record kind"
    schema = record_schema(kind)
    own = _Schema(Draft202012Validator(schema), compile_check(schema))
    path = release / shipped
    if shipped != schema_file(kind):
        return own, f"{release / MANIFEST}: schema of {kind!r} records must be {schema_file(kind)}"
    if _symlink_in(release, shipped) is not None:
        return own, None  # named once, with the other listed files
    try:
        copy = parse_json(path.read_bytes())
    except FileNotFoundError:
        return own, None  # named once, with the other listed files
    except (OSError, JsonTextError) as exc:
        return own, f"{path}: not readable JSON ({exc})"
    if copy != schema:
        return own, (
            f"{path}: differs from Curator's {kind} schema for {FORMAT}"
            " (records are checked against Curator's; the copy is documentation)"
        )
    return own, None


def _check_records(
    path: Path,
    entry: dict[str, Any],
    schema: _Schema,
    tally: _Tally,
) -> tuple[int, list[str]]:
    """Records in the file, and its problems: the first bad line and how many followed."""
    first: str | None = None
    more = 0
    records = 0
    previous_key: str | None = None
    try:
        with open_lines(path) as fh:
            for number, raw in enumerate(fh, start=1):
                problem = None
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError:
                    text, problem = "", "not UTF-8 text"
                if problem is None and not text.endswith("\n"):
                    problem = "the last line has no newline (file cut short?)"
                if problem is None and text.endswith("\r\n"):
                    problem = "CRLF line ending (releases are written with LF endings only)"
                record: Any = None
                if problem is None:
                    try:
                        record = parse_json(text)
                    except JsonTextError as exc:
                        problem = str(exc)
                if problem is None:
                    problem = schema.problem(record)
                if problem is None:
                    problem = _placement(record, entry, previous_key)
                if problem is not None:
                    if first is None:
                        first = f"{path}:{number}: {problem}"
                    else:
                        more += 1
                    continue
                records += 1
                previous_key = record["key"]
                tally.by_label[record["label"] or UNLABELED] += 1
                tally.by_language[record["language"] or UNKNOWN] += 1
                tally.by_split[record["split"] or WHOLE] += 1
    except (OSError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
        return records, [f"{path}: cannot be read to the end ({exc})"]
    problems = [] if first is None else [first]
    if more:
        problems.append(f"{path}: {more} more bad lines after the first")
    return records, problems


def _symlink_in(release: Path, name: str) -> Path | None:
    """The first symbolic link on the way from ``release`` to the file ``name``, if any."""
    path = release
    for part in Path(name).parts:
        path = path / part
        if path.is_symlink():
            return path
    return None


def _placement(record: dict[str, Any], entry: dict[str, Any], previous: str | None) -> str | None:
    if record["kind"] != entry["kind"]:
        return f"kind {record['kind']!r} in a file of {entry['kind']!r} records"
    if record["split"] != entry.get("split"):
        return f"split {record['split']!r} in the file of split {entry.get('split')!r}"
    if previous is not None and record["key"] <= previous:
        return f"key {record['key']!r} repeats or is out of order (records are sorted by key)"
    return None


def _compare(report: ValidationReport, what: str, said: Any, found: Any) -> None:
    if said != found:
        report.problems.append(
            f"{report.path / MANIFEST}: {what} says {json.dumps(said, sort_keys=True)},"
            f" the files hold {json.dumps(found, sort_keys=True)}"
        )


def validate_release(release: Path, public_key: Path | None = None) -> ValidationReport:
    """Every problem of the release at ``release`` (none: it is valid). With
    ``public_key``, the release must also carry a valid signature by that key."""
    report = ValidationReport(release)
    try:
        manifest = load_manifest(release)
    except ManifestError as exc:
        report.problems.append(str(exc))
        return report
    signature_problem = None
    if public_key is not None:
        try:
            report.signed_by = verify_release(release, public_key)
        except SigningError as exc:
            signature_problem = str(exc)
    report.manifest = manifest
    listed = manifest["files"]
    line_problems: list[str] = []
    file_problems: list[str] = []
    for name, entry in sorted(listed.items()):
        path = release / name
        link = _symlink_in(release, name)
        if link is not None:
            file_problems.append(f"{link}: a symbolic link (a release holds regular files only)")
            continue
        if not path.is_file():
            file_problems.append(f"{path}: missing (listed in manifest.json)")
            continue
        report.files += 1
        size = path.stat().st_size
        if size != entry["bytes"]:
            file_problems.append(f"{path}: {size} bytes, manifest.json says {entry['bytes']}")
        actual = file_sha256(path)
        if actual != entry["sha256"]:
            file_problems.append(
                f"{path}: sha256 {actual} does not match manifest.json ({entry['sha256']})"
            )
    for path in sorted(p for p in release.rglob("*") if p.is_file()):
        name = path.relative_to(release).as_posix()
        if name not in (MANIFEST, SIGNATURE) and name not in listed:
            file_problems.append(f"{path}: not listed in manifest.json")
    tallies: dict[str, _Tally] = {}
    by_kind: Counter[str] = Counter()
    for name, entry in data_files(manifest):
        path = release / name
        tally = tallies.setdefault(entry["kind"], _Tally())
        by_kind[entry["kind"]] += 0
        if not path.is_file() or _symlink_in(release, name) is not None:
            continue
        schema, problem = _own_schema(release, entry["kind"], entry.get("schema", ""))
        if problem is not None and problem not in file_problems:
            file_problems.append(problem)
        if schema is None:
            continue
        records, problems = _check_records(path, entry, schema, tally)
        line_problems += problems
        by_kind[entry["kind"]] += records
        report.records += records
        if not problems and records != entry.get("records"):
            file_problems.append(
                f"{path}: {records} records, manifest.json says {entry.get('records')}"
            )
    report.problems = ([signature_problem] if signature_problem else []) + line_problems
    report.problems += file_problems
    complete = all(
        (release / name).is_file() and _symlink_in(release, name) is None
        for name, _ in data_files(manifest)
    )
    if not line_problems and complete:
        counts = manifest["counts"]
        _compare(report, "counts.records", counts["records"], report.records)
        _compare(report, "counts.by_kind", counts["by_kind"], dict(sorted(by_kind.items())))
        for what in ("by_label", "by_language", "by_split"):
            found = {
                kind: dict(sorted(getattr(t, what).items())) for kind, t in sorted(tallies.items())
            }
            _compare(report, f"counts.{what}", counts[what], found)
    return report
