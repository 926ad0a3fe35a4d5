"""What the Prodigy and Label Studio formats share: tasks read from another tool, mapped
onto a set's labels and categories, stored all or nothing; and a set's items with their
live votes, read for export.

A tool's file is read twice as a stream (:class:`TaskFile`): once to check it all, then
to write it a chunk at a time in one transaction; it becomes :class:`Task` after
:class:`Task` (one item, the votes cast on it); each vote
carries the tool's raw answer (the choices ticked, or a binary accept/reject/ignore on a
label), resolved against the set's labels here, so both formats map answers one way.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from annotation.importing import (
    FileImportError,
    ModelInput,
    imported_set,
    set_problem,
    shape,
)
from annotation.label_spelling import label_named
from annotation.labels import SKIP, taxonomy_slugs
from annotation.sets import SetError, require_set
from annotation.votes import VoteError, append_changed, prepare_vote
from store import DatabaseError, Store, StoreError
from store.ir import ir_module
from store.item_views import commit_row, item_row
from store.items import ImportedItem, find_by_id, insert_imported_items, keys_to_ids
from store.kernels import kernel_row
from store.sets import SetRow, add_set_items, create_set, get_set, set_item_ids
from store.votes import LiveVote, VoteRow, live_votes_in_set

ACCEPT, REJECT, IGNORE = "accept", "reject", "ignore"
ANSWERS = (ACCEPT, REJECT, IGNORE)
COMMIT_FIELDS = ("repo", "sha", "file", "language")


@dataclass(frozen=True)
class TaskVote:
    """One annotator's answer on a task: the choices ticked (labels and categories), or
    ``binary``, the one label a binary task asked about; ``answer`` accept/reject/ignore."""

    where: str
    annotator: str
    answer: str
    choices: tuple[str, ...] = ()
    binary: str | None = None
    note: str | None = None
    adjudicator: bool = False


@dataclass(frozen=True)
class Task:
    """One item as another tool holds it: our external id, its text and fields."""

    where: str
    key: str
    text: str
    fields: dict[str, Any] = field(default_factory=dict)
    votes: tuple[TaskVote, ...] = ()


@dataclass(frozen=True)
class TaskImport:
    stored: int
    known: int
    added_to_set: int
    set_created: bool
    votes: int
    unchanged: int
    annotators: list[str]
    # other sets' names -> their votes these votes replaced (one live vote per item)
    displaced: dict[str, int] = field(default_factory=dict)


class BadField(ValueError):
    """A field of a task holding a value of the wrong type (one line naming the field)."""


def text_field(value: Any, name: str, *, numbers: bool = True) -> str | None:
    """A field read as text: None stays None, a string is kept, a number (when
    ``numbers``) is its digits; a boolean, a list or an object raises :class:`BadField`."""
    if value is None or isinstance(value, str):
        return value
    if numbers and isinstance(value, int | float) and not isinstance(value, bool):
        return json.dumps(value)
    raise BadField(f"{name!r} must be a string, not {shape(value)}")


def text_of(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def resolve_answer(
    vote: TaskVote, labels: Sequence[str], categories: Sequence[str]
) -> tuple[str, str | None]:
    """(label, category) for a vote in a set with these labels; raises ``ValueError``."""
    if vote.answer == IGNORE:
        return SKIP, None
    if vote.binary is not None:
        label = label_named(vote.binary, labels)
        if label is None:
            raise ValueError(f"label {vote.binary!r} is not one of {', '.join(labels)}")
        category = vote.choices[0] if vote.choices else None
        if vote.answer == ACCEPT:
            return label, category
        others = [x for x in labels if x != label]
        if len(others) != 1:
            raise ValueError(
                f"rejecting {label!r} names no single other label of {', '.join(labels)}"
            )
        return others[0], category
    known_categories = set(categories or taxonomy_slugs())
    named = [(c, label_named(c, labels)) for c in vote.choices]
    chosen = [label for _, label in named if label is not None]
    picked = [c.strip() for c in vote.choices if c.strip() in known_categories]
    unknown = [c for c, label in named if label is None and c.strip() not in known_categories]
    if unknown:
        raise ValueError(
            f"choice {unknown[0]!r} is neither a label ({', '.join(labels)}) nor a category"
        )
    if len(chosen) > 1 or len(picked) > 1:
        raise ValueError(f"several labels or categories chosen: {', '.join(vote.choices)}")
    if vote.answer == REJECT or not chosen:
        if vote.answer == REJECT:
            return SKIP, None
        raise ValueError("no label among the choices")
    return chosen[0], picked[0] if picked else None


def _new_item(task: Task, kind: str, model_input: ModelInput, origin: str) -> ImportedItem:
    fields = {k: text_of(task.fields.get(k)) for k in COMMIT_FIELDS}
    diff = text_of(task.fields.get("diff")) or ""
    payload = {k: v for k, v in fields.items() if v}
    payload.update(
        message=task.text, diff=diff, model_input=model_input(task.text, diff, path=fields["file"])
    )
    return ImportedItem(
        kind=kind,
        key=task.key,
        source=fields["repo"] or f"import:{origin}",
        language=fields["language"],
        path=fields["file"],
        payload=payload,
        provenance={"imported_from": origin},
    )


class TaskFile(Protocol):
    """A tool's file, read twice as a stream: :meth:`check` reads it all and says what is
    wrong with it (raising :class:`FileImportError` for a file that is none of the tool's),
    keeping only what it needs to read it again (ids, line numbers, digests); :meth:`tasks`
    then gives its good tasks, each item once, in the order the file first names them
    (raising :class:`FileImportError` when the file no longer reads as it did)."""

    def check(self) -> list[str]: ...

    def tasks(self) -> Iterator[Task]: ...


TASK_CHUNK = 500
CHUNK_CHARS = 4_000_000
"""Tasks are written a chunk at a time: ``TASK_CHUNK`` tasks, or fewer once their text
reaches ``CHUNK_CHARS`` characters (big diffs)."""


def _task_chunks(tasks: Iterable[Task]) -> Iterator[list[Task]]:
    chunk: list[Task] = []
    chars = 0
    for task in tasks:
        chunk.append(task)
        chars += len(task.text) + sum(len(v) for v in task.fields.values() if isinstance(v, str))
        if len(chunk) == TASK_CHUNK or chars >= CHUNK_CHARS:
            yield chunk
            chunk, chars = [], 0
    if chunk:
        yield chunk


@dataclass
class _Written:
    """What the chunks of an import wrote so far."""

    stored: int = 0
    known: int = 0
    added: int = 0
    votes: int = 0
    unchanged: int = 0
    annotators: set[str] = field(default_factory=set)
    displaced: Counter[str] = field(default_factory=Counter)


def import_tasks(
    store: Store,
    source: TaskFile,
    *,
    origin: str,
    set_name: str,
    kind: str = "commit",
    labels: list[str] | None = None,
    votes_per_item: int = 2,
    model_input: ModelInput,
) -> TaskImport:
    """Store the tasks' items (new commits are created from the task's text and fields),
    put them in the set (created if needed) and append their votes, in one transaction,
    a chunk of tasks at a time as the file is read a second time (:class:`TaskFile`), so
    memory does not grow with the file.

    With any problem in the file (its unreadable lines or tasks, a task that cannot go
    in, a vote that does not fit the set), :class:`FileImportError` names every one at
    once and nothing is written (the transaction rolls back, as on a Ctrl-C). A vote equal
    to the annotator's live vote is not appended again."""
    problems = source.check()
    # the set is looked up under the write lock: an import beside this one may have just
    # created it, and this one then joins it rather than failing to create it again
    with store.transaction():
        target = get_set(store, set_name)
        problem = set_problem(target, set_name, kind, labels, origin)
        if problem is not None:
            raise FileImportError([problem, *problems])
        created = target is None
        if target is None:
            target = create_set(store, imported_set(set_name, kind, labels, origin, votes_per_item))
        absent: list[str] = []  # tasks of items that are not stored and cannot be created
        refused: list[str] = []  # votes the set does not take
        done = _Written()
        for chunk in _task_chunks(source.tasks()):
            known = keys_to_ids(store, kind, [t.key for t in chunk])
            fresh = [t for t in chunk if t.key not in known]
            if fresh and kind != "commit":
                absent += [
                    f"{t.where}: no {kind} item {t.key!r} in the store (only commits can be"
                    " created)"
                    for t in fresh
                ]
                chunk, fresh = [t for t in chunk if t.key in known], []
            results = insert_imported_items(
                store, [_new_item(t, kind, model_input, origin) for t in fresh]
            )
            ids = {**known, **{t.key: i for t, (_, i) in zip(fresh, results, strict=True)}}
            done.stored += len(fresh)
            done.known += len(chunk) - len(fresh)
            done.added += add_set_items(store, target.id, [ids[t.key] for t in chunk])
            rows = _vote_rows(store, chunk, ids, target, origin, refused)
            done.annotators.update(r.annotator for r in rows)
            if not (problems or absent or refused):  # else all is rolled back
                appended, unchanged, displaced = _append_fresh(store, rows)
                done.votes += appended
                done.unchanged += unchanged
                done.displaced.update(displaced)
        if problems or absent or refused:
            raise FileImportError([*problems, *absent, *refused])
    return TaskImport(
        stored=done.stored,
        known=done.known,
        added_to_set=done.added,
        set_created=created,
        votes=done.votes,
        unchanged=done.unchanged,
        annotators=sorted(done.annotators),
        displaced=dict(sorted(done.displaced.items())),
    )


def _vote_rows(
    store: Store,
    tasks: Sequence[Task],
    ids: dict[str, int],
    target: SetRow,
    origin: str,
    errors: list[str],
) -> list[VoteRow]:
    rows: list[VoteRow] = []
    for task in tasks:
        item = find_by_id(store, ids[task.key])
        assert item is not None
        for vote in task.votes:
            try:
                label, category = resolve_answer(vote, target.labels, target.categories)
                rows.append(
                    prepare_vote(
                        store,
                        item,
                        label,
                        vote.annotator,
                        category=category,
                        note=vote.note,
                        adjudicate=vote.adjudicator,
                        in_set=target,
                        origin=f"import:{origin}",
                    )
                )
            except (ValueError, VoteError) as exc:
                errors.append(f"{vote.where}: {exc}")
    return rows


def _append_fresh(store: Store, rows: list[VoteRow]) -> tuple[int, int, dict[str, int]]:
    """Append the rows that change a live vote: (appended, unchanged, the other sets'
    votes they replaced per set name)."""
    fresh, displaced = append_changed(store, rows)
    return len(fresh), len(rows) - len(fresh), displaced


@dataclass(frozen=True)
class ExportItem:
    """One member of a set, as another tool shows it, with every live vote on it."""

    key: str
    kind: str
    text: str
    fields: dict[str, Any]
    votes: list[LiveVote]


def _item_text(store: Store, item_id: int, kind: str) -> tuple[str, dict[str, Any]]:
    if kind == "commit":
        row = commit_row(store, item_id) or {}
        fields = {k: row.get(k) for k in ("repo", "sha", "file")}
        return row.get("message") or "", {**fields, "diff": row.get("diff") or ""}
    if kind == "kernel":
        row = kernel_row(store, item_id) or {}
        return str(row.get("normalized_source") or row.get("original_source") or ""), {}
    module = ir_module(store, item_id) or {}
    return str(module.get("text") or ""), {}


def set_for_export(store: Store, set_name: str) -> tuple[SetRow, list[ExportItem]]:
    """The set and its members in set order, each with its live votes (both roles)."""
    target = require_set(store, set_name)
    votes: dict[int, list[LiveVote]] = {}
    for vote in live_votes_in_set(store, target.id):
        votes.setdefault(vote.item_id, []).append(vote)
    items = []
    for item_id in set_item_ids(store, target.id):
        try:
            row = item_row(store, item_id) or {}
            text, fields = _item_text(store, item_id, target.kind)
        except DatabaseError as exc:  # e.g. text another tool stored as non-UTF-8
            if isinstance(exc, StoreError):  # a lock, a closed store: not this item's fault
                raise
            raise SetError(
                f"set {set_name!r}: item #{item_id}: stored data cannot be read ({exc})"
            ) from exc
        fields = {"language": row.get("language"), **fields}
        items.append(
            ExportItem(
                key=row["key"],
                kind=target.kind,
                text=text,
                fields={k: v for k, v in fields.items() if v not in (None, "")},
                votes=votes.get(item_id, []),
            )
        )
    return target, items
