"""``curator export``: stream the store into a release directory, atomically.

Per kind the items the filters take are streamed in key order, turned into records by
the kind's builder, given their label fields (and split), and written one line at a
time into ``KIND.jsonl`` (``KIND.PART.jsonl`` with ``--split``; ``KIND.parquet`` with
``--format parquet``), hashed as they are written. Schemas, ``DATASHEET.md``,
``README.md`` (the dataset card) and ``manifest.json`` follow. Everything is written in
a temporary directory beside the target that is renamed into place at the end; a failure
anywhere leaves the previous release (if any) as it was.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from annotation.sets import SetError, require_set
from annotation.splits import SplitError
from curator import __version__
from curator.prediction import stored_labeler
from curator.releases.card import CARD, render_card
from curator.releases.datasheet import render_datasheet
from curator.releases.datasheet_charts import chart_documents, chart_section, release_charts
from curator.releases.files import (
    RecordFile,
    ReleaseExistsError,
    encode_document,
    encode_line,
    staged_directory,
    write_document,
)
from curator.releases.labels import (
    UNLABELED,
    LabelConflictError,
    LabelInfo,
    adjudicated_labels,
    predicted_label,
)
from curator.releases.manifest import (
    DATASHEET,
    FORMATS,
    MANIFEST,
    SIGNATURE,
    build_manifest,
    data_file_name,
)
from curator.releases.parquet import ParquetRecordFile
from curator.releases.records import RECORD_BUILDERS
from curator.releases.schema import FORMAT, record_schema, schema_file, version_problem
from curator.releases.signing import SigningError, load_private_key, signature_document
from curator.releases.splits import SplitSpec, assign_sources, parse_split, part_names
from curator.releases.tally import ReleaseFacts
from engines.labelers.registry import LabelerError
from store import Store
from store.releases import (
    ItemFilter,
    ReleaseRow,
    UnreadableItemError,
    kinds_with_items,
    save_release,
    stream_item_sources,
    stream_items,
)
from store.sets import SetRow

LABEL_MODES = ("adjudicated", "predicted")
FORMAT_FAMILY = FORMAT.split("/")[0] + "/"  # curator-release/: any version of the format
_MANIFEST_LIMIT = 1 << 24  # bytes; a larger manifest.json is none of ours


class ExportError(ValueError):
    """An export that cannot be done: a record that cannot be written, nothing to export."""


class ExportUsageError(ExportError):
    """Options that do not fit together or cannot be parsed."""


@dataclass(frozen=True)
class ExportOptions:
    version: str
    kinds: tuple[str, ...] = ()
    labels: str | None = None
    labeler: str | None = None
    min_confidence: float | None = None
    audited_only: bool = False
    sets: tuple[str, ...] = ()  # only these sets' items, labeled as these sets settled them
    split: str | None = None
    seed: int = 0
    gzip: bool = False
    file_format: str = "jsonl"
    force: bool = False
    created_at: str | None = None
    sign_key: Path | None = None  # an Ed25519 private key: write manifest.json.sig


@dataclass
class ExportResult:
    path: Path
    manifest: dict[str, Any]
    records: int = 0
    files: list[str] = field(default_factory=list)


Progress = Callable[[str, int], None]


def creation_time(explicit: str | None = None) -> str:
    """The manifest's creation time in UTC (``2026-01-01T00:00:00Z``): the time given
    (one without a zone, or a date alone, is read as UTC), else ``$SOURCE_DATE_EPOCH``,
    else now."""
    if explicit:
        try:
            moment = datetime.fromisoformat(explicit)
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
            moment = moment.astimezone(UTC)
        except (ValueError, OverflowError):
            raise ExportUsageError(
                f"--created-at {explicit!r}: give an ISO 8601 time, e.g. 2026-01-01T00:00:00Z"
            ) from None
    elif epoch := os.environ.get("SOURCE_DATE_EPOCH"):
        try:
            seconds = int(epoch)
        except ValueError:
            raise ExportUsageError(f"SOURCE_DATE_EPOCH={epoch!r} is not whole seconds") from None
        try:
            moment = datetime.fromtimestamp(seconds, UTC)
        except (ValueError, OverflowError, OSError):
            raise ExportUsageError(
                f"SOURCE_DATE_EPOCH={epoch!r} is out of range (seconds since 1970-01-01 UTC"
                " up to the year 9999)"
            ) from None
    else:
        moment = datetime.now(UTC)
    return moment.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _check(options: ExportOptions) -> SplitSpec | None:
    problem = version_problem(options.version)
    if problem is not None:
        raise ExportUsageError(problem)
    if options.file_format not in FORMATS:
        raise ExportUsageError(f"--format {options.file_format!r}: use {' or '.join(FORMATS)}")
    if options.gzip and options.file_format != "jsonl":
        raise ExportUsageError("--gzip applies to JSONL; Parquet files are compressed inside")
    if options.labels is not None and options.labels not in LABEL_MODES:
        raise ExportUsageError(f"--labels {options.labels!r}: use {' or '.join(LABEL_MODES)}")
    if options.labels == "predicted" and not options.labeler:
        raise ExportUsageError("--labels predicted needs --labeler NAME (e.g. keyword@latest)")
    if options.labeler and options.labels != "predicted":
        raise ExportUsageError("--labeler only applies with --labels predicted")
    if options.min_confidence is not None and options.labels != "predicted":
        raise ExportUsageError("--min-confidence only applies with --labels predicted")
    if options.min_confidence is not None and not math.isfinite(options.min_confidence):
        # the manifest records it, and NaN or Infinity is no JSON
        raise ExportUsageError(f"--min-confidence {options.min_confidence}: give a score, e.g. 0.9")
    for kind in options.kinds:
        if kind not in RECORD_BUILDERS:
            raise ExportUsageError(f"kind {kind!r}: use {', '.join(RECORD_BUILDERS)}")
    try:
        return parse_split(options.split) if options.split else None
    except SplitError as exc:
        raise ExportUsageError(str(exc)) from None


@dataclass
class _KindPlan:
    kind: str
    item_filter: ItemFilter
    adjudicated: dict[int, LabelInfo]
    keep: Callable[[dict[str, Any]], bool]
    parts: dict[str, str] | None = None


def _plan(
    store: Store,
    kind: str,
    options: ExportOptions,
    labeler: str | None,
    sets: Sequence[SetRow] = (),
) -> _KindPlan:
    predicted = options.labels == "predicted"
    set_ids = tuple(s.id for s in sets if s.kind == kind)
    flt = ItemFilter(
        kind,
        audited_only=options.audited_only,
        set_ids=set_ids,
        labeler=labeler if predicted else None,
        predicted_only=predicted,
        min_score=options.min_confidence if predicted else None,
    )
    try:
        adjudicated = {} if predicted else adjudicated_labels(store, kind, set_ids)
    except LabelConflictError as exc:
        raise ExportError(str(exc)) from None
    if options.labels == "adjudicated":
        return _KindPlan(kind, flt, adjudicated, lambda row: row["item_id"] in adjudicated)
    return _KindPlan(kind, flt, adjudicated, lambda row: True)


def _labels_for(plan: _KindPlan, row: dict[str, Any]) -> LabelInfo:
    if plan.item_filter.labeler is not None:
        return predicted_label(plan.item_filter.labeler, row["pred_label"], row["pred_score"])
    return plan.adjudicated.get(row["item_id"], UNLABELED)


def _rows(store: Store, plan: _KindPlan) -> Iterator[dict[str, Any]]:
    try:
        for row in stream_items(store, plan.item_filter):
            if plan.keep(row):
                yield row
    except UnreadableItemError as exc:
        raise ExportError(str(exc)) from exc


def _released_sets(store: Store, options: ExportOptions) -> list[SetRow]:
    """The sets ``--set`` names, every one checked before anything is written."""
    found = []
    for name in dict.fromkeys(options.sets):
        try:
            row = require_set(store, name)
        except SetError as exc:
            raise ExportError(str(exc)) from None
        if row.kind not in RECORD_BUILDERS:
            raise ExportError(f"set {name!r} holds {row.kind} items, which releases do not hold")
        found.append(row)
    return found


def export_release(
    store: Store, out_dir: Path, options: ExportOptions, progress: Progress | None = None
) -> ExportResult:
    """Write release ``options.version`` under ``out_dir``; see the module docstring."""
    spec = _check(options)
    if out_dir.exists() and not out_dir.is_dir():
        raise ExportUsageError(f"--out {out_dir}: a file, not a folder (releases are folders)")
    holder = _enclosing_release(out_dir)
    if holder is not None:
        raise ExportUsageError(
            f"--out {out_dir}: inside release {holder}, which another release would break;"
            f" give the folder releases are made in (e.g. {holder.parent})"
        )
    try:
        labeler = stored_labeler(store, options.labeler) if options.labeler else None
    except (SetError, LabelerError) as exc:
        raise ExportError(str(exc)) from None
    sets = _released_sets(store, options)
    for row in sets:
        if options.kinds and row.kind not in options.kinds:
            raise ExportUsageError(
                f"--set {row.name} holds {row.kind} items, which --kind"
                f" {' --kind '.join(options.kinds)} leaves out"
            )
    kinds = (
        list(options.kinds)
        or sorted({s.kind for s in sets})
        or [k for k in kinds_with_items(store) if k in RECORD_BUILDERS]
    )
    if not kinds:
        raise ExportError("the store holds no items to export")
    created_at = creation_time(options.created_at)
    signer = _signer(options.sign_key)
    plans = [_plan(store, kind, options, labeler, sets) for kind in sorted(set(kinds))]
    if not options.kinds:
        # Kinds nobody asked for by name get no files when the filters leave them empty
        # (unless every kind is empty: that release is written, and the command warns).
        filled = [p for p in plans if next(_rows(store, p), None) is not None]
        plans = filled or plans
    if spec is not None:
        for plan in plans:
            counts: Counter[str] = Counter(
                row["source"]
                for row in stream_item_sources(store, plan.item_filter)
                if plan.keep(row)
            )
            plan.parts = assign_sources(dict(counts), spec, options.seed)
    filters = {
        "kinds": [p.kind for p in plans],
        "labels": options.labels,
        "labeler": labeler,
        "labeler_asked": options.labeler,
        "min_confidence": options.min_confidence,
        "audited_only": options.audited_only,
        **({"sets": sorted(s.name for s in sets)} if sets else {}),
        "split": options.split,
        "seed": options.seed if spec is not None else None,
        "gzip": options.gzip,
        **({"format": options.file_format} if options.file_format != "jsonl" else {}),
    }
    facts = ReleaseFacts(version=options.version, filters=filters, split=spec)
    target = out_dir / options.version
    files: dict[str, dict[str, Any]] = {}
    try:
        with staged_directory(target, options.force, keep=[store.path]) as staging:
            for plan in plans:
                _write_kind(store, staging, plan, spec, options, facts, files, progress)
            for plan in plans:
                name = schema_file(plan.kind)
                files[name] = _document(staging / name, record_schema(plan.kind))
            facts.source_parts = {p.kind: p.parts for p in plans if p.parts is not None}
            charts = release_charts(store, facts)
            for name, data in chart_documents(charts).items():
                files[name] = _write_bytes(staging / name, data)
            datasheet = render_datasheet(store, facts, chart_section(charts))
            files[DATASHEET] = _write_bytes(staging / DATASHEET, datasheet.encode("utf-8"))
            card = render_card(options.version, files, datasheet)
            files[CARD] = _write_bytes(staging / CARD, card.encode("utf-8"))
            manifest = build_manifest(
                version=options.version,
                created_at=created_at,
                tool_version=__version__,
                schema_version=store.schema_version(),
                filters=filters,
                counts=facts.counts(),
                files=files,
            )
            _write_bytes(staging / MANIFEST, encode_document(manifest))
            if signer is not None:
                write_document(
                    staging / SIGNATURE, signature_document(encode_document(manifest), signer)
                )
    except ReleaseExistsError:
        raise
    except OSError as exc:
        raise ExportError(f"{target}: cannot be written ({exc.strerror or exc})") from exc
    save_release(
        store,
        ReleaseRow(
            version=options.version,
            filters=filters,
            counts=manifest["counts"],
            checksums={name: entry["sha256"] for name, entry in files.items()},
            created_at=created_at,
        ),
    )
    written = [*files, MANIFEST] + ([SIGNATURE] if signer is not None else [])
    return ExportResult(target, manifest, facts.total, sorted(written))


def _enclosing_release(folder: Path) -> Path | None:
    """The release that ``folder`` is or lies in (its ``manifest.json`` is a Curator
    release's), if any."""
    resolved = folder.resolve()
    for candidate in (resolved, *resolved.parents):
        manifest = candidate / MANIFEST
        try:
            if not manifest.is_file() or manifest.stat().st_size > _MANIFEST_LIMIT:
                continue
            data = json.loads(manifest.read_bytes())
        except (OSError, ValueError, RecursionError):
            continue
        if isinstance(data, dict) and str(data.get("format", "")).startswith(FORMAT_FAMILY):
            return candidate
    return None


def _signer(path: Path | None) -> Any:
    """The private key a release is signed with (None: unsigned); a bad key stops the
    export before anything is written."""
    if path is None:
        return None
    try:
        return load_private_key(path)
    except SigningError as exc:
        raise ExportUsageError(f"--sign: {exc}") from None


def _write_kind(
    store: Store,
    staging: Path,
    plan: _KindPlan,
    spec: SplitSpec | None,
    options: ExportOptions,
    facts: ReleaseFacts,
    files: dict[str, dict[str, Any]],
    progress: Progress | None,
) -> None:
    build = RECORD_BUILDERS[plan.kind]
    facts.start_kind(plan.kind)
    compress = options.gzip
    outputs: dict[str | None, RecordFile | ParquetRecordFile] = {}
    for part in part_names(spec):
        path = staging / data_file_name(plan.kind, part, compress, options.file_format)
        outputs[part] = (
            ParquetRecordFile(path, plan.kind)
            if options.file_format == "parquet"
            else RecordFile(path, compress)
        )
    try:
        for row in _rows(store, plan):
            part = plan.parts[row["source"]] if plan.parts is not None else None
            try:
                record = build(row)
                record.update(_labels_for(plan, row).fields())
                record["split"] = part
                line = encode_line(record)
            except (TypeError, ValueError, KeyError, UnicodeError) as exc:
                raise ExportError(
                    f"{plan.kind} item {row['key']!r} ({row['source']}): cannot be written"
                    f" ({type(exc).__name__}: {exc})"
                ) from exc
            outputs[part].write(line)
            facts.count(record)
            if progress is not None:
                progress(plan.kind, 1)
    except BaseException:
        for output in outputs.values():
            output.abandon()
        raise
    for part, output in outputs.items():
        sha, size = output.close()
        files[output.path.name] = {
            "sha256": sha,
            "bytes": size,
            "kind": plan.kind,
            "split": part,
            "records": output.records,
            "schema": schema_file(plan.kind),
            "compression": "gzip" if compress else None,
        }


def _write_bytes(path: Path, data: bytes) -> dict[str, Any]:
    sha, size = write_document(path, data)
    return {"sha256": sha, "bytes": size}


def _document(path: Path, data: Any) -> dict[str, Any]:
    return _write_bytes(path, encode_document(data))
