"""Reading items and votes from JSONL or CSV files, with errors that name file and line.

Parsing and checking come first, for the whole file; the caller writes only a file that
produced no error, in one transaction, so a bad line never leaves half a file behind.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from annotation.jsontext import JsonTextError, nul_char, parse_json
from annotation.labels import DEFAULT_LABELS, taxonomy_slugs
from annotation.votes import VoteError, append_changed, prepare_vote
from store import Store
from store.commits import insert_predictions
from store.items import (
    PAYLOAD_WRITERS,
    ImportedItem,
    find_by_id,
    insert_imported_items,
    keys_to_ids,
)
from store.records import PredictionRow
from store.sets import NewSet, SetRow, add_set_items, create_set, get_set
from store.votes import VoteRow

VOTE_COLUMNS = ("item", "annotator", "label")
OPTIONAL_VOTE_COLUMNS = ("category", "note")
MAX_ERRORS = 20


class FileImportError(ValueError):
    """A file that cannot be imported; ``errors`` holds one line per problem."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__(errors[0] if errors else "import failed")
        self.errors = errors


def imported_set(
    name: str, kind: str, labels: list[str] | None, origin: str, votes_per_item: int
) -> NewSet:
    """The ground-truth set an import creates: the kind's default labels unless given,
    the commit taxonomy's categories, and ``origin`` recorded as what it came from."""
    return NewSet(
        name=name,
        kind=kind,
        labels=list(labels or DEFAULT_LABELS[kind]),
        categories=taxonomy_slugs() if kind == "commit" else [],
        params={"imported": [origin]},
        purpose="ground-truth",
        votes_per_item=votes_per_item,
    )


CSV_FIELD_LIMIT = 2**31 - 1
"""The csv module's default limit, 128 KiB a field, is less than a big diff."""


def _lines(path: Path) -> Iterator[tuple[int, str | None]]:
    """(line number, text) for every line; text None when the line is not UTF-8."""
    data = path.read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    for number, raw in enumerate(data.split(b"\n"), start=1):
        try:
            yield number, raw.decode("utf-8").rstrip("\r")
        except UnicodeDecodeError:
            yield number, None


def read_jsonl(path: Path) -> tuple[list[tuple[int, dict[str, Any]]], list[str]]:
    records: list[tuple[int, dict[str, Any]]] = []
    errors: list[str] = []
    for number, text in _lines(path):
        if text is None:
            errors.append(f"{path}:{number}: not UTF-8 text")
            continue
        if not text.strip():
            continue
        try:
            value = parse_json(text)
        except JsonTextError as exc:
            errors.append(f"{path}:{number}: {exc}")
            continue
        if not isinstance(value, dict):
            errors.append(f"{path}:{number}: expected a JSON object, got {type(value).__name__}")
            continue
        if (nul := nul_char(text, value)) is not None:
            errors.append(f"{path}:{number}: {nul}")
            continue
        records.append((number, value))
    return records, errors


def _delimiter(path: Path) -> str:
    """A ``.tsv`` file's fields are separated by tabs, a ``.csv`` file's by commas."""
    return "\t" if path.suffix.lower() == ".tsv" else ","


def read_csv(
    path: Path, required: tuple[str, ...]
) -> tuple[list[tuple[int, dict[str, Any]]], list[str]]:
    lines = list(_lines(path))
    bad = [f"{path}:{n}: not UTF-8 text" for n, text in lines if text is None]
    if bad:
        return [], bad
    csv.field_size_limit(max(csv.field_size_limit(), CSV_FIELD_LIMIT))
    delimiter = _delimiter(path)
    what = "TSV" if delimiter == "\t" else "CSV"
    reader = csv.DictReader(
        io.StringIO("\n".join(text or "" for _, text in lines)), delimiter=delimiter
    )
    try:
        header = [h.strip() for h in (reader.fieldnames or [])]
    except csv.Error as exc:
        return [], [f"{path}:{reader.line_num}: not {what} ({exc})"]
    missing = [c for c in required if c not in header]
    if missing:
        return [], [
            f"{path}:1: missing column {', '.join(repr(m) for m in missing)}"
            f" (the header has {', '.join(header) or 'nothing'})"
        ]
    twice = sorted({h for h in header if h and header.count(h) > 1})
    if twice:
        return [], [f"{path}:1: the header names {', '.join(map(repr, twice))} twice"]
    records, problems = [], []
    try:
        for row in reader:
            values = {(k or "").strip(): (v or "").strip() for k, v in row.items() if k is not None}
            if not any(values.values()):
                continue
            extra = row.get(None)  # type: ignore[call-overload]
            if extra and any(cell.strip() for cell in extra):
                problems.append(
                    f"{path}:{reader.line_num}: {len(header) + len(extra)} fields, but the"
                    f" header has {len(header)} (a {delimiter!r} inside an unquoted value?)"
                )
                continue
            # DictReader counts physical lines, so quoted multi-line fields keep numbers right
            records.append((reader.line_num, values))
    except csv.Error as exc:
        return [], [f"{path}:{reader.line_num}: not {what} ({exc})"]
    return records, problems


def read_records(
    path: Path, csv_columns: tuple[str, ...]
) -> tuple[list[tuple[int, dict[str, Any]]], list[str]]:
    if path.is_dir():
        return [], [f"{path}: a folder, not a JSONL or CSV file"]
    if not path.is_file():
        return [], [f"{path}: no such file"]
    if path.suffix.lower() in (".csv", ".tsv"):
        return read_csv(path, csv_columns)
    return read_jsonl(path)


def _text(record: dict[str, Any], name: str) -> str | None:
    value = record.get(name)
    if value is None:
        return None
    return (
        value
        if isinstance(value, str)
        else json.dumps(value)
        if isinstance(value, (dict, list))
        else str(value)
    )


def parse_items(
    path: Path, kind: str, model_input: Callable[[str, str], str]
) -> list[ImportedItem]:
    """Items of one kind from a JSONL file; raises :class:`FileImportError` listing every
    bad line. ``model_input(message, diff)`` builds a commit's model input."""
    if kind not in PAYLOAD_WRITERS:
        command = "curator mine kernels" if kind == "kernel" else "curator mine ir"
        raise FileImportError(
            [
                f"{path}: {kind} items come in through `{command} PATH`, which compiles,"
                " checks and deduplicates them; JSONL import takes commits"
            ]
        )
    records, errors = read_records(path, ("id",))
    items: list[ImportedItem] = []
    seen: dict[str, int] = {}
    for number, record in records:
        key = _text(record, "id")
        if not key or not key.strip():
            errors.append(f"{path}:{number}: missing 'id' (the item's external id)")
            continue
        if key in seen:
            errors.append(f"{path}:{number}: id {key!r} already on line {seen[key]}")
            continue
        seen[key] = number
        problem = _check_fields(kind, record)
        if problem:
            errors.append(f"{path}:{number}: {problem}")
            continue
        items.append(_imported(kind, key, record, path, model_input))
    if records and not items and all(not _text(r, "id") for _, r in records):
        raise FileImportError([_no_ids(path, records[0][1])])
    if errors:
        raise FileImportError(errors)
    return items


def _no_ids(path: Path, first: dict[str, Any]) -> str:
    """One line instead of one per row when no row has an id, with the likely fix."""
    fields = ", ".join(repr(k) for k in list(first)[:6])
    return (
        f"{path}: no line has an 'id' (fields: {fields}); a labeled file goes in with"
        " --label-field FIELD [--map VALUE=LABEL,...] [--text-field FIELD], e.g."
        " --label-field target --map 1=perf,0=non-perf --text-field commit_message"
    )


# fields an item's row stores as text (a number is taken as its digits); a list, an
# object or a boolean there is no text SQLite can store
ITEM_TEXT_FIELDS = (
    *("id", "repo", "sha", "date", "diff", "file", "path", "language"),
    *("code_before", "code_after", "diff_hash"),
)


def shape(value: Any) -> str:
    """How a JSON value that is not text reads in an error: ``an object``, ``true``..."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return json.dumps(value)


def not_text(record: dict[str, Any], names: Sequence[str] = ITEM_TEXT_FIELDS) -> str | None:
    """The problem with the first of ``names`` whose value is a list, an object or a
    boolean (the row's items take them as text)."""
    for name in names:
        value = record.get(name)
        if isinstance(value, bool | dict | list):
            return f"{name!r} must be a string, not {shape(value)}"
    return None


def _check_fields(kind: str, record: dict[str, Any]) -> str | None:
    required = {"commit": ("message",), "kernel": ("source",), "ir": ("text",)}[kind]
    for name in required:
        if not isinstance(record.get(name), str):
            return f"missing {name!r} (a string) for a {kind} item"
    problem = not_text(record)
    if problem is not None:
        return problem
    stars = record.get("stars")
    if stars not in (None, "") and _stars(record) is None:
        shown = repr(stars) if isinstance(stars, str) else shape(stars)
        return f"'stars' must be a whole number from 0 to {MAX_STARS}, not {shown}"
    return None


MAX_STARS = 2**63 - 1
"""The most an SQLite integer (and a release's int64 column) holds."""


def _stars(record: dict[str, Any]) -> int | None:
    """A record's star count: a JSON integer, or the digits of a CSV cell; None when
    absent, blank or not a count that fits."""
    value = record.get("stars")
    if isinstance(value, str) and value.isascii() and value.strip().isdigit():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_STARS:
        return value
    return None


def _imported(
    kind: str, key: str, record: dict[str, Any], path: Path, model_input: Callable[[str, str], str]
) -> ImportedItem:
    payload = {k: v for k, v in record.items() if k != "id"}
    if kind == "commit":
        payload["model_input"] = model_input(record["message"], _text(record, "diff") or "")
    provenance: dict[str, Any] = {"imported_from": path.name}
    stars = _stars(record)
    if stars is not None:
        provenance["stars"] = stars
    return ImportedItem(
        kind=kind,
        key=key,
        source=_text(record, "repo") or f"import:{path.name}",
        language=_text(record, "language"),
        path=_text(record, "file") or _text(record, "path"),
        payload=payload,
        provenance=provenance,
    )


@dataclass(frozen=True)
class ParsedVotes:
    rows: list[VoteRow]
    annotators: list[str]
    unchanged: int = 0
    ignored_columns: tuple[str, ...] = ()  # CSV columns a vote does not read
    # set name -> votes of it the file's votes replaced with a label it does not count
    # (an annotator has one live vote per item)
    displaced: dict[str, int] = field(default_factory=dict)


def parse_votes(
    store: Store, path: Path, kind: str | None = None, in_set: SetRow | None = None
) -> ParsedVotes:
    """Votes from JSONL or CSV, every one checked against its item's set labels; raises
    :class:`FileImportError` listing every bad line."""
    records, errors = read_records(path, VOTE_COLUMNS)
    keyed: list[tuple[int, dict[str, Any], str]] = []
    for number, record in records:
        shaped = not_text(record, (*VOTE_COLUMNS, *OPTIONAL_VOTE_COLUMNS))
        if shaped is not None:
            errors.append(f"{path}:{number}: {shaped}")
            continue
        missing = [c for c in VOTE_COLUMNS if not _text(record, c)]
        if missing:
            errors.append(f"{path}:{number}: missing {', '.join(repr(m) for m in missing)}")
            continue
        keyed.append((number, record, _text(record, "item") or ""))
    kinds = [kind] if kind else ["commit", "kernel", "ir"]
    ids = {k: keys_to_ids(store, k, [key for _, _, key in keyed]) for k in kinds}
    rows: list[VoteRow] = []
    first_line: dict[tuple[str, str], int] = {}
    for number, record, key in keyed:
        who = (key, _text(record, "annotator") or "")
        if who in first_line:
            errors.append(
                f"{path}:{number}: {who[1]} votes on {key!r} again (line {first_line[who]});"
                " one vote per annotator and item in a file"
            )
            continue
        first_line[who] = number
        matches = [(k, ids[k][key]) for k in kinds if key in ids[k]]
        if not matches:
            errors.append(f"{path}:{number}: unknown item {key!r}")
            continue
        if len(matches) > 1:
            errors.append(f"{path}:{number}: item {key!r} exists as several kinds; pass --kind")
            continue
        item = find_by_id(store, matches[0][1])
        assert item is not None
        try:
            rows.append(
                prepare_vote(
                    store,
                    item,
                    _text(record, "label") or "",
                    _text(record, "annotator") or "",
                    category=_text(record, "category"),
                    note=_text(record, "note"),
                    in_set=in_set,
                    origin=f"import:{path.name}",
                )
            )
        except VoteError as exc:
            errors.append(f"{path}:{number}: {exc}")
    if errors:
        raise FileImportError(errors)
    return ParsedVotes(rows, sorted({r.annotator for r in rows}), 0, _extra_columns(path))


def _extra_columns(path: Path) -> tuple[str, ...]:
    """Header columns of a votes CSV that no vote field reads."""
    if path.suffix.lower() not in (".csv", ".tsv"):
        return ()
    with path.open(encoding="utf-8-sig", errors="replace", newline="") as fh:
        header = next(csv.reader(fh, delimiter=_delimiter(path)), [])
    known = {*VOTE_COLUMNS, *OPTIONAL_VOTE_COLUMNS}
    return tuple(h.strip() for h in header if h.strip() and h.strip() not in known)


Prelabel = Callable[[list[ImportedItem]], list[list[PredictionRow]]]


@dataclass(frozen=True)
class ItemImport:
    stored: int
    known: int
    added_to_set: int
    set_created: bool


def set_problem(
    target: SetRow | None, set_name: str, kind: str, labels: list[str] | None, origin: str
) -> str | None:
    """Why items of ``kind`` (with ``labels``, when given) from ``origin`` cannot go into
    the existing set ``target``, or None (also when there is no such set yet)."""
    if target is not None and target.kind != kind:
        return f"{origin}: set {set_name!r} holds {target.kind} items, not {kind}"
    if target is not None and labels and labels != target.labels:
        return f"{origin}: set {set_name!r} already has labels {', '.join(target.labels)}"
    return None


def import_items_file(
    store: Store,
    path: Path,
    kind: str,
    model_input: Callable[[str, str], str],
    set_name: str | None = None,
    labels: list[str] | None = None,
    prelabel: Prelabel | None = None,
    votes_per_item: int = 2,
) -> ItemImport:
    """Import one file's items (and put them in a set, created if needed) in one
    transaction; nothing is written when any line is bad. ``prelabel`` gives machine
    predictions for the newly stored items, written in the same transaction."""
    items = parse_items(path, kind, model_input)
    # the set is looked up under the write lock: an import beside this one may have just
    # created it, and this one then joins it rather than failing to create it again
    with store.transaction():
        target = get_set(store, set_name) if set_name else None
        problem = set_problem(target, set_name or "", kind, labels, str(path))
        if problem is not None:
            raise FileImportError([problem])
        results = insert_imported_items(store, items)
        fresh = [
            (item, item_id)
            for item, (status, item_id) in zip(items, results, strict=True)
            if status == "stored"
        ]
        if prelabel is not None and fresh:
            for (_, item_id), predictions in zip(
                fresh, prelabel([item for item, _ in fresh]), strict=True
            ):
                insert_predictions(store, item_id, predictions)
        created = False
        added = 0
        if set_name:
            if target is None:
                target = create_set(
                    store, imported_set(set_name, kind, labels, path.name, votes_per_item)
                )
                created = True
            added = add_set_items(store, target.id, [item_id for _, item_id in results])
    return ItemImport(
        stored=sum(1 for status, _ in results if status == "stored"),
        known=sum(1 for status, _ in results if status == "known"),
        added_to_set=added,
        set_created=created,
    )


def import_votes_file(
    store: Store, path: Path, kind: str | None = None, in_set: SetRow | None = None
) -> ParsedVotes:
    """Check every vote of a file, then append them in one transaction. A vote equal to
    the annotator's live vote (label, category, note) is not appended again, so importing
    the same file twice changes nothing."""
    parsed = parse_votes(store, path, kind, in_set)
    with store.transaction():
        fresh, displaced = append_changed(store, parsed.rows)
    return ParsedVotes(
        fresh, parsed.annotators, len(parsed.rows) - len(fresh), parsed.ignored_columns, displaced
    )
