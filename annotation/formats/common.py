"""What the Prodigy and Label Studio formats share: tasks read from another tool, mapped
onto a set's labels and categories, stored all or nothing; and a set's items with their
live votes, read for export.

A tool's file becomes a list of :class:`Task` (one item, the votes cast on it); each vote
carries the tool's raw answer (the choices ticked, or a binary accept/reject/ignore on a
label), resolved against the set's labels here, so both formats map answers one way.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from annotation.importing import (
    FileImportError,
    ModelInput,
    imported_set,
    set_problem,
    shape,
)
from annotation.labels import SKIP, taxonomy_slugs
from annotation.sets import require_set
from annotation.votes import VoteError, append_changed, prepare_vote
from store import Store
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


def _label_named(text: str, labels: Sequence[str]) -> str | None:
    """The set's label (or skip) a tool's text names: as written, else the one label
    equal to it without case (``Perf`` is ``perf``, unless the set also has ``PERF``)."""
    every = [*labels, SKIP]
    wanted = text.strip()
    if wanted in every:
        return wanted
    found = [label for label in every if label.lower() == wanted.lower()]
    return found[0] if len(found) == 1 else None


def resolve_answer(
    vote: TaskVote, labels: Sequence[str], categories: Sequence[str]
) -> tuple[str, str | None]:
    """(label, category) for a vote in a set with these labels; raises ``ValueError``."""
    if vote.answer == IGNORE:
        return SKIP, None
    if vote.binary is not None:
        label = _label_named(vote.binary, labels)
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
    named = [(c, _label_named(c, labels)) for c in vote.choices]
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


def import_tasks(
    store: Store,
    tasks: Sequence[Task],
    *,
    origin: str,
    set_name: str,
    kind: str = "commit",
    labels: list[str] | None = None,
    votes_per_item: int = 2,
    model_input: ModelInput,
    errors: Sequence[str] = (),
) -> TaskImport:
    """Store the tasks' items (new commits are created from the task's text and fields),
    put them in the set (created if needed) and append their votes, in one transaction.

    ``errors`` are the file's unreadable lines or tasks: with them, or any task that
    cannot go in, :class:`FileImportError` names every one at once and nothing is
    written. A vote equal to the annotator's live vote is not appended again."""
    problems = list(errors)
    seen: dict[str, str] = {}
    unique: list[Task] = []
    for task in tasks:
        if task.key in seen:
            problems.append(f"{task.where}: item {task.key!r} already in {seen[task.key]}")
        else:
            seen[task.key] = task.where
            unique.append(task)
    # the set is looked up under the write lock: an import beside this one may have just
    # created it, and this one then joins it rather than failing to create it again
    with store.transaction():
        target = get_set(store, set_name)
        problem = set_problem(target, set_name, kind, labels, origin)
        if problem is not None:
            raise FileImportError([problem, *problems])
        known = keys_to_ids(store, kind, [t.key for t in unique])
        fresh = [t for t in unique if t.key not in known]
        if fresh and kind != "commit":
            problems += [
                f"{t.where}: no {kind} item {t.key!r} in the store (only commits can be created)"
                for t in fresh
            ]
            unique, fresh = [t for t in unique if t.key in known], []
        results = insert_imported_items(
            store, [_new_item(t, kind, model_input, origin) for t in fresh]
        )
        ids = {**known, **{t.key: item_id for t, (_, item_id) in zip(fresh, results, strict=True)}}
        created = target is None
        if target is None:
            target = create_set(store, imported_set(set_name, kind, labels, origin, votes_per_item))
        added = add_set_items(store, target.id, [ids[t.key] for t in unique])
        rows = _vote_rows(store, unique, ids, target, origin, problems)
        if problems:
            raise FileImportError(problems)
        appended, unchanged, displaced = _append_fresh(store, rows)
    return TaskImport(
        stored=len(fresh),
        known=len(unique) - len(fresh),
        added_to_set=added,
        set_created=created,
        votes=appended,
        unchanged=unchanged,
        annotators=sorted({r.annotator for r in rows}),
        displaced=displaced,
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
        row = item_row(store, item_id) or {}
        text, fields = _item_text(store, item_id, target.kind)
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
