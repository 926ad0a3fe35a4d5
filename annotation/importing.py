"""Importing items and votes from JSONL or CSV files, with errors that name file and line.

The files are read as streams by :mod:`annotation.record_files`, a line (or a CSV row)
in memory at a time. An items or votes file is read twice: first to check every line
(the errors name every bad one), then, only when none was bad, to write its items or
votes in one transaction in chunks, telling a progress callback; so a bad line or a
Ctrl-C never leaves half a file behind, and memory does not grow with the file.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from annotation.compressed import data_suffix
from annotation.label_spelling import label_named
from annotation.labels import DEFAULT_LABELS, taxonomy_slugs
from annotation.record_files import CsvSource, WholeFile, csv_delimiter, iter_records
from annotation.tool_records import item_rows
from annotation.votes import Allowed, VoteError, allowed_for, append_changed, prepare_vote
from store import Store
from store.commits import insert_predictions
from store.items import (
    PAYLOAD_WRITERS,
    ImportedItem,
    ItemRef,
    find_by_id,
    insert_imported_items,
    item_summaries,
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


SHOWN_ID = 80


def shown_id(key: str) -> str:
    """An id as an error quotes it: at most ``SHOWN_ID`` characters, so the line's end
    (what is wrong) survives a huge one."""
    return repr(key if len(key) <= SHOWN_ID else key[: SHOWN_ID - 1] + "…")


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


def text_digest(text: str) -> bytes:
    """A short digest of a text (lone surrogates included), equal for equal texts: what
    an import keeps of a line to tell later whether another line repeats it."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _fingerprint(record: dict[str, Any]) -> bytes:
    """A digest of a record, equal for equal records."""
    return text_digest(json.dumps(record, sort_keys=True, default=str))


def _item_lines(
    path: Path, kind: str, errors: list[str]
) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """(line, id, record) for every good item of a file, read as a stream; each bad line
    appends a ``FILE:LINE`` line to ``errors`` (the ids seen and their lines are all
    that is kept)."""
    if kind not in PAYLOAD_WRITERS:
        command = "curator mine kernels" if kind == "kernel" else "curator mine ir"
        errors.append(
            f"{path}: {kind} items come in through `{command} PATH`, which compiles,"
            " checks and deduplicates them; JSONL import takes commits"
        )
        return
    seen: dict[str, int] = {}
    repeats: list[tuple[int, int, bytes]] = []  # (index in errors, first line, digest)
    first: dict[str, Any] | None = None
    any_id = False
    items = 0
    # no column is required of a CSV file: a row may name its commit as a tool does
    for number, record in item_rows(iter_records(path, (), errors)):
        first = record if first is None else first
        any_id = any_id or bool(_text(record, "id"))
        # spaces around an id are dropped, as a CSV cell's and a labeled file's are
        key = (_text(record, "id") or "").strip()
        if not key:
            errors.append(f"{path}:{number}: missing 'id' (the item's external id)")
            continue
        if isinstance(record["id"], float):
            errors.append(f"{path}:{number}: 'id' must be a string or a whole number, not {key}")
            continue
        if key in seen:
            repeats.append((len(errors), seen[key], _fingerprint(record)))
            errors.append(f"{path}:{number}: id {shown_id(key)} already on line {seen[key]}")
            continue
        seen[key] = number
        problem = _check_fields(kind, record)
        if problem:
            errors.append(f"{path}:{number}: {problem}")
            continue
        items += 1
        yield number, key, record
    if first is not None and not items and not any_id:
        errors[:] = [_no_ids(path, first)]
    elif repeats and not any(isinstance(e, WholeFile) for e in errors):
        _tell_repeats(path, errors, repeats)


def _tell_repeats(path: Path, errors: list[str], repeats: list[tuple[int, int, bytes]]) -> None:
    """End each repeated id's error with whether it repeats the record of the line the id
    was first on (those lines read once more: only a file with repeats pays for it)."""
    wanted = {line for _, line, _ in repeats}
    before = {
        number: _fingerprint(record)
        for number, record in item_rows(iter_records(path, (), []))
        if number in wanted
    }
    for index, line, digest in repeats:
        same = "the same record" if before.get(line) == digest else "a different record"
        errors[index] += f" ({same})"


def check_items(path: Path, kind: str) -> int:
    """How many items a file holds, read as a stream to check every line first; raises
    :class:`FileImportError` listing every bad line."""
    errors: list[str] = []
    count = sum(1 for _ in _item_lines(path, kind, errors))
    if errors:
        raise FileImportError(errors)
    return count


def stream_items(
    path: Path, kind: str, model_input: ModelInput, count: int
) -> Iterator[tuple[int, ImportedItem]]:
    """The items of a file :func:`check_items` found good (``count`` of them), each with
    its line, read again as a stream; raises :class:`FileImportError` when the file no
    longer reads the same (changed in between), so a transaction around this rolls back."""
    errors: list[str] = []
    read = 0
    for number, key, record in _item_lines(path, kind, errors):
        if errors:
            break
        read += 1
        yield number, _imported(kind, key, record, path, model_input)
    if errors or read != count:
        raise FileImportError(changed_lines(path, errors))


def _no_ids(path: Path, first: dict[str, Any]) -> str:
    """One line instead of one per row when no row has an id, with the likely fix."""
    fields = ", ".join(repr(k) for k in list(first)[:6])
    return (
        f"{path}: no line has an 'id' (fields: {fields}); an items row has 'id' and"
        " 'message' (PyDriller's 'hash' and 'msg', GitHub's 'sha' and 'commit.message' are"
        " read as those): rename the fields; a labeled file goes in with --label-field"
        " FIELD [--map VALUE=LABEL,...] [--text-field FIELD] [--id-field FIELD], e.g."
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
    """The problem with the first of ``names`` whose value is a list, an object, a
    boolean or an infinity (the row's items take them as text)."""
    for name in names:
        value = record.get(name)
        if isinstance(value, bool | dict | list) or value in (math.inf, -math.inf):
            return f"{name!r} must be a string, not {shape(value)}"
    return None


def _check_fields(kind: str, record: dict[str, Any]) -> str | None:
    required = {"commit": ("message",), "kernel": ("source",), "ir": ("text",)}[kind]
    for name in required:
        if not isinstance(record.get(name), str):
            return f"missing {name!r} (a string) for a {kind} item"
        if not record[name].strip():
            return f"{name!r} is empty"
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
    kind: str, key: str, record: dict[str, Any], path: Path, model_input: ModelInput
) -> ImportedItem:
    payload = {k: v for k, v in record.items() if k != "id"}
    if kind == "commit":
        payload["model_input"] = model_input(
            record["message"], _text(record, "diff") or "", path=item_path(record)
        )
    provenance: dict[str, Any] = {"imported_from": path.name}
    stars = _stars(record)
    if stars is not None:
        provenance["stars"] = stars
    return ImportedItem(
        kind=kind,
        key=key,
        source=_text(record, "repo") or f"import:{path.name}",
        language=_text(record, "language"),
        path=item_path(record),
        payload=payload,
        provenance=provenance,
    )


class ModelInput(Protocol):
    """What the model reads of a commit (``engines.commits.representation.model_input``,
    handed down by the command layer): ``path`` names the file of a diff that is hunks
    alone."""

    def __call__(self, message: str, diff: str, *, path: str | None = None) -> str: ...


PATH_FIELDS = ("file", "path", "new_path", "old_path", "filename", "file_path", "filepath")
"""Where a commit row may name its file, in order: Curator's own ``file`` and ``path``,
then PyDriller's ``ModifiedFile`` attributes (``new_path``, ``old_path``, ``filename``,
the last a bare name) and two common spellings. A diff that is hunks alone is read with
this file's header (engines.commits.diff_layout)."""


def item_path(record: dict[str, Any]) -> str | None:
    """The file a commit row names: the first of :data:`PATH_FIELDS` that holds text."""
    for name in PATH_FIELDS:
        value = record.get(name)
        if isinstance(value, bool | dict | list):
            continue  # no file name (the items import refuses these in 'file' and 'path')
        found = _text(record, name)
        if found and found.strip():
            return found
    return None


@dataclass(frozen=True)
class ParsedVotes:
    votes: int  # the votes appended (a vote equal to the live one is not)
    annotators: list[str]
    unchanged: int = 0
    ignored_columns: tuple[str, ...] = ()  # CSV columns a vote does not read
    # set name -> votes of it the file's votes replaced with a label it does not count
    # (an annotator has one live vote per item)
    displaced: dict[str, int] = field(default_factory=dict)


VOTE_CHUNK = 2000
"""Votes looked up (their items) and appended a chunk at a time."""


@dataclass
class _VoteCheck:
    """What the check of a votes file keeps: its errors in the order they are told (the
    file's unreadable lines, then the lines whose fields are no text or missing, then
    every other problem), one digest per (item, annotator) seen with its line, and the
    repeats of one (their errors end once the lines they repeat are read again)."""

    read: list[str] = field(default_factory=list)
    shape: list[str] = field(default_factory=list)
    other: list[str] = field(default_factory=list)
    seen: dict[bytes, int] = field(default_factory=dict)
    # (index in other, line, annotator, item, record, line it repeats)
    repeats: list[tuple[int, int, str, str, dict[str, Any], int]] = field(default_factory=list)
    good: int = 0

    def errors(self) -> list[str]:
        if any(isinstance(e, WholeFile) for e in self.read):
            return self.read  # the rows were read by guess: none of them counts
        return [*self.read, *self.shape, *self.other]


def _keyed_votes(
    path: Path, errors: list[str], shape_errors: list[str]
) -> Iterator[tuple[int, dict[str, Any], str]]:
    """(line, record, item id) for every vote of a file whose fields are text and
    present, read as a stream; the unreadable lines go to ``errors``, the others to
    ``shape_errors``."""
    for number, record in iter_records(path, VOTE_COLUMNS, errors):
        shaped = not_text(record, (*VOTE_COLUMNS, *OPTIONAL_VOTE_COLUMNS))
        if shaped is not None:
            shape_errors.append(f"{path}:{number}: {shaped}")
            continue
        missing = [c for c in VOTE_COLUMNS if not _text(record, c)]
        if missing:
            shape_errors.append(f"{path}:{number}: missing {', '.join(repr(m) for m in missing)}")
            continue
        yield number, record, (_text(record, "item") or "").strip()


def _vote_chunks(
    path: Path, errors: list[str], shape_errors: list[str]
) -> Iterator[list[tuple[int, dict[str, Any], str]]]:
    chunk: list[tuple[int, dict[str, Any], str]] = []
    for keyed in _keyed_votes(path, errors, shape_errors):
        chunk.append(keyed)
        if len(chunk) == VOTE_CHUNK:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _vote_row(
    store: Store,
    path: Path,
    number: int,
    record: dict[str, Any],
    key: str,
    ids: dict[str, dict[str, int]],
    in_set: SetRow | None,
    known: dict[int, tuple[ItemRef, Allowed]],
) -> VoteRow:
    """The row a vote line appends; :class:`VoteError` says why it cannot be. ``known``
    keeps each item looked up in a chunk with the labels it allows: several annotators'
    votes on one item ask once."""
    matches = [(k, found[key]) for k, found in ids.items() if key in found]
    if not matches:
        hint = ""
        if key.startswith("#") and key[1:].isdigit():
            hint = " (a votes file names an item by its external id, not by #N)"
        raise VoteError(f"unknown item {shown_id(key)}{hint}")
    if len(matches) > 1:
        raise VoteError(f"item {shown_id(key)} exists as several kinds; pass --kind")
    item_id = matches[0][1]
    if item_id not in known:
        item = find_by_id(store, item_id)
        assert item is not None
        known[item_id] = (item, allowed_for(store, item, in_set))
    item, allowed = known[item_id]
    label = _text(record, "label") or ""
    return prepare_vote(
        store,
        item,
        # ``PERF`` as a spreadsheet may spell it is ``perf``, unless the set has both
        label_named(label, allowed.labels) or label,
        _text(record, "annotator") or "",
        category=_text(record, "category"),
        note=_text(record, "note"),
        in_set=in_set,
        origin=f"import:{path.name}",
        allowed=allowed,
    )


def _chunk_ids(
    store: Store, kinds: list[str], chunk: list[tuple[int, dict[str, Any], str]]
) -> dict[str, dict[str, int]]:
    return {k: keys_to_ids(store, k, [key for _, _, key in chunk]) for k in kinds}


def check_votes(
    store: Store, path: Path, kind: str | None = None, in_set: SetRow | None = None
) -> int:
    """How many votes a file holds, every one checked against its item's set labels,
    read as a stream (what is kept of a line: a digest of its item and annotator, and
    its number); raises :class:`FileImportError` listing every bad line."""
    found = _VoteCheck()
    kinds = [kind] if kind else ["commit", "kernel", "ir"]
    for chunk in _vote_chunks(path, found.read, found.shape):
        ids = _chunk_ids(store, kinds, chunk)
        known: dict[int, tuple[ItemRef, Allowed]] = {}
        for number, record, key in chunk:
            annotator = _text(record, "annotator") or ""
            who = text_digest(json.dumps([key, annotator]))
            if who in found.seen:
                found.repeats.append(
                    (len(found.other), number, annotator, key, record, found.seen[who])
                )
                found.other.append("")
                continue
            found.seen[who] = number
            try:
                _vote_row(store, path, number, record, key, ids, in_set, known)
            except VoteError as exc:
                found.other.append(f"{path}:{number}: {exc}")
                continue
            found.good += 1
    if found.repeats:
        _tell_vote_repeats(path, found)
    errors = found.errors()
    if errors:
        raise FileImportError(errors)
    return found.good


def _tell_vote_repeats(path: Path, found: _VoteCheck) -> None:
    """The error of each line voting again on an item, saying whether it repeats the vote
    of the line before (those lines read once more: only a file with repeats pays)."""
    wanted = {line for *_, line in found.repeats}
    before = {
        number: record
        for number, record in iter_records(path, VOTE_COLUMNS, [])
        if number in wanted
    }
    for index, number, annotator, key, record, line in found.repeats:
        same = "the same vote" if before.get(line) == record else "another vote"
        found.other[index] = (
            f"{path}:{number}: {annotator} votes on {shown_id(key)} again"
            f" (line {line}: {same}); one vote per annotator and item in a file"
        )


def _extra_columns(path: Path) -> tuple[str, ...]:
    """Header columns of a votes CSV that no vote field reads."""
    if data_suffix(path) not in (".csv", ".tsv"):
        return ()
    source = CsvSource(path)
    first = source.header[1]
    delimiter = source.sep or csv_delimiter(path, first)
    header = next(csv.reader([first], delimiter=delimiter), [])
    known = {*VOTE_COLUMNS, *OPTIONAL_VOTE_COLUMNS}
    return tuple(h.strip() for h in header if h.strip() and h.strip() not in known)


Prelabel = Callable[[list[ImportedItem]], list[list[PredictionRow]]]


@dataclass(frozen=True)
class ItemImport:
    stored: int
    known: int
    added_to_set: int
    set_created: bool
    other_message: list[str] = field(default_factory=list)
    """A line for each item already stored with another message (the stored one kept)."""


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


def _folded(text: str) -> str:
    return " ".join(text.split()).casefold()


def other_messages(
    store: Store, path: Path, rows: Sequence[tuple[int, ImportedItem]], ids: Sequence[int]
) -> list[str]:
    """``FILE:LINE`` lines for items of ``rows`` already stored (as ``ids``) under another
    message: the stored item is kept, and the file's message is not. Case and white space
    do not count, nor does a body one side has and the other lacks."""
    titles = item_summaries(store, ids)
    found: list[str] = []
    for (number, item), item_id in zip(rows, ids, strict=True):
        title = titles.get(item_id, {}).get("title", "")
        message = str(item.payload.get("message") or "")
        ours = _folded(message.splitlines()[0] if message.strip() else "")
        theirs = _folded(title)
        if theirs and not (_folded(message).startswith(theirs) or theirs.startswith(ours)):
            found.append(
                f"{path}:{number}: id {shown_id(item.key)} is already stored as #{item_id} with"
                f" another message ({' '.join(title.split())[:60]!r}); the stored item is kept"
            )
    return found


Progress = Callable[[int, int], None]
"""Told (items written, items in the file) as an import goes on."""
WRITE_CHUNK = 2000
CHUNK_CHARS = 4_000_000
"""A chunk ends at ``WRITE_CHUNK`` items, or sooner once its items' text reaches this many
characters (big diffs), so what a chunk holds stays a few MB."""


def _chunks(
    numbered: Iterable[tuple[int, ImportedItem]],
) -> Iterator[list[tuple[int, ImportedItem]]]:
    rows: list[tuple[int, ImportedItem]] = []
    chars = 0
    for row in numbered:
        rows.append(row)
        chars += sum(len(v) for v in row[1].payload.values() if isinstance(v, str))
        if len(rows) == WRITE_CHUNK or chars >= CHUNK_CHARS:
            yield rows
            rows, chars = [], 0
    if rows:
        yield rows


def write_items(
    store: Store,
    path: Path,
    numbered: Iterable[tuple[int, ImportedItem]],
    prelabel: Prelabel | None = None,
    progress: Progress | None = None,
    total: int | None = None,
) -> tuple[list[tuple[str, int]], list[str]]:
    """Insert a file's items (each with its line) in chunks (:func:`_chunks`), inside
    the caller's transaction: the new ones prelabeled, ``progress`` told after each
    chunk (of ``total``, the length of ``numbered`` unless given: it may be a stream,
    read one chunk at a time). Returns ("stored" | "known", item id) per item, and a
    line for each known item stored with another message (:func:`other_messages`)."""
    if total is None:
        assert isinstance(numbered, Sequence)
        total = len(numbered)
    results: list[tuple[str, int]] = []
    other: list[str] = []
    for rows in _chunks(numbered):
        chunk = [item for _, item in rows]
        written = insert_imported_items(store, chunk)
        known = [
            (row, i) for row, (status, i) in zip(rows, written, strict=True) if status == "known"
        ]
        other += other_messages(store, path, [r for r, _ in known], [i for _, i in known])
        fresh = [
            (item, i)
            for item, (status, i) in zip(chunk, written, strict=True)
            if status == "stored"
        ]
        if prelabel is not None and fresh:
            for (_, item_id), predictions in zip(
                fresh, prelabel([item for item, _ in fresh]), strict=True
            ):
                insert_predictions(store, item_id, predictions)
        results.extend(written)
        if progress is not None:
            progress(len(results), total)
    return results, other


def import_items_file(
    store: Store,
    path: Path,
    kind: str,
    model_input: ModelInput,
    set_name: str | None = None,
    labels: list[str] | None = None,
    prelabel: Prelabel | None = None,
    votes_per_item: int = 2,
    progress: Progress | None = None,
) -> ItemImport:
    """Import one file's items (and put them in a set, created if needed) in one
    transaction; nothing is written when any line is bad, or when the import is
    interrupted. ``prelabel`` gives machine predictions for the newly stored items,
    written in the same transaction. The file is read twice as a stream, to check every
    line and then to write, so memory does not grow with its size."""
    count = check_items(path, kind)
    if progress is not None:
        progress(0, count)
    # the set is looked up under the write lock: an import beside this one may have just
    # created it, and this one then joins it rather than failing to create it again
    with store.transaction():
        target = get_set(store, set_name) if set_name else None
        problem = set_problem(target, set_name or "", kind, labels, str(path))
        if problem is not None:
            raise FileImportError([problem])
        numbered = stream_items(path, kind, model_input, count)
        results, other = write_items(store, path, numbered, prelabel, progress, count)
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
        other_message=other,
    )


def changed_lines(path: Path, errors: list[str]) -> list[str]:
    """The errors of a file that no longer reads as it did when it was checked (changed
    in between, or what it names in the store did): a transaction around its import rolls
    back."""
    return [
        f"{path}: changed while it was imported (read again, it has other lines); nothing"
        " is stored from it",
        *errors,
    ]


def import_votes_file(
    store: Store,
    path: Path,
    kind: str | None = None,
    in_set: SetRow | None = None,
    progress: Progress | None = None,
) -> ParsedVotes:
    """Check every vote of a file (:func:`check_votes`), then append them in one
    transaction, a chunk at a time as the file is read again; so a bad line or a Ctrl-C
    appends nothing, and memory does not grow with the file. A vote equal to the
    annotator's live vote (label, category, note) is not appended again, so importing
    the same file twice changes nothing. ``progress`` is told (votes read, votes in the
    file)."""
    count = check_votes(store, path, kind, in_set)
    if progress is not None:
        progress(0, count)
    kinds = [kind] if kind else ["commit", "kernel", "ir"]
    appended = read = 0
    annotators: set[str] = set()
    displaced: Counter[str] = Counter()
    with store.transaction():
        errors: list[str] = []
        for chunk in _vote_chunks(path, errors, errors):
            ids = _chunk_ids(store, kinds, chunk)
            known: dict[int, tuple[ItemRef, Allowed]] = {}
            rows: list[VoteRow] = []
            for number, record, key in chunk:
                try:
                    rows.append(_vote_row(store, path, number, record, key, ids, in_set, known))
                except VoteError as exc:
                    errors.append(f"{path}:{number}: {exc}")
            if errors:
                break
            fresh, lost = append_changed(store, rows)
            appended += len(fresh)
            read += len(rows)
            annotators.update(row.annotator for row in rows)
            displaced.update(lost)
            if progress is not None:
                progress(read, count)
        if errors or read != count:
            raise FileImportError(changed_lines(path, errors))
    return ParsedVotes(
        appended,
        sorted(annotators),
        read - appended,
        _extra_columns(path),
        dict(sorted(displaced.items())),
    )
