"""Label Studio's JSON tasks and labeling config, read and written.

A Label Studio export is a JSON list of tasks: ``data`` (what the annotator saw: here
``text``, our external id ``item``, the commit's fields and ``diff``) and
``annotations``, each with ``completed_by`` (a user id, or an object with an ``email``),
``created_username`` (``"NAME, ID"`` in Label Studio's exports), ``result`` (regions: a
``choices`` region from the ``label`` control holds the label, one from ``category`` the
category, a ``textarea`` region from ``note`` the note), ``was_cancelled`` (a skipped
task: our skip), ``ground_truth`` (our adjudicator's vote) and ``lead_time`` (seconds
spent; not kept, the store has no column for it).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO
from xml.sax.saxutils import quoteattr

from annotation.formats.common import (
    ACCEPT,
    IGNORE,
    BadField,
    ExportItem,
    Task,
    TaskVote,
    shape,
    text_field,
)
from annotation.importing import FileImportError, changed_lines
from annotation.jsontext import lone_surrogate, nul_in
from annotation.labels import SKIP
from store.sets import SetRow
from store.votes import ADJUDICATOR

DATA_FIELDS = ("repo", "sha", "file", "language", "diff")
MIN_FIELDS = frozenset({"annotator", "annotation_id"})
"""Fields of a task in Label Studio's JSON-MIN export (flat: no ``data``, no ``annotations``)."""


def _flag(annotation: dict[str, Any], name: str) -> bool:
    value = annotation.get(name)
    if value is not None and not isinstance(value, bool):
        raise BadField(f"{name!r} must be true or false, not {shape(value)}")
    return bool(value)


def _user_id(value: Any, name: str = "completed_by") -> str:
    if not isinstance(value, int) or isinstance(value, bool):
        what = "a user id (a number)" + (" or an object" if name == "completed_by" else "")
        raise BadField(f"{name!r} must be {what}, not {shape(value)}")
    return f"label-studio-user-{value}"


def _annotator(annotation: dict[str, Any]) -> str:
    """The annotator: ``completed_by.email``, else the name in ``created_username``, else
    ``label-studio-user-ID`` from the user id (``completed_by`` or its ``id``)."""
    by = annotation.get("completed_by")
    if isinstance(by, dict):
        email = text_field(by.get("email"), "completed_by.email", numbers=False)
        if email and email.strip():
            return email
    elif by is not None:
        _user_id(by)
    named = text_field(annotation.get("created_username"), "created_username", numbers=False)
    if named and named.strip():
        name, _, user_id = named.strip().rpartition(",")
        return (name if name.strip() and user_id.strip().isdecimal() else named).strip()
    if isinstance(by, dict):
        if by.get("id") is None:
            raise BadField("'completed_by' has neither an email nor an id")
        return _user_id(by["id"], "completed_by.id")
    if by is None:
        raise BadField("an annotation needs completed_by or created_username")
    return _user_id(by)


def _texts(value: list[Any], name: str) -> list[str]:
    for x in value:
        if not isinstance(x, str):
            raise BadField(f"{name!r} must be a list of strings, not of {shape(x)}")
    return value


def _vote(where: str, annotation: Any) -> TaskVote:
    """An annotation's vote; :class:`BadField` says why it cannot be read."""
    if not isinstance(annotation, dict):
        raise BadField("not an object")
    annotator = _annotator(annotation)
    results = annotation.get("result")
    if not isinstance(results, list):
        raise BadField("'result' must be a list of regions")
    choices: list[str] = []
    notes: list[str] = []
    for region in results:
        value = region.get("value") if isinstance(region, dict) else None
        if not isinstance(value, dict):
            raise BadField("every region of 'result' needs a 'value' object")
        if isinstance(value.get("choices"), list):
            choices += _texts(value["choices"], "value.choices")
        elif isinstance(value.get("text"), list):  # a textarea (a span's text is a string)
            notes += _texts(value["text"], "value.text")
    return TaskVote(
        where=where,
        annotator=annotator,
        answer=IGNORE if _flag(annotation, "was_cancelled") else ACCEPT,
        choices=tuple(choices),
        note="\n".join(notes) or None,
        adjudicator=_flag(annotation, "ground_truth"),
    )


def _where(path: Path, n: int, task: Any) -> str:
    """``FILE: task ID (position N)``, or ``FILE: task at position N`` for a task
    without a usable id."""
    task_id = task.get("id") if isinstance(task, dict) else None
    if isinstance(task_id, str) or (isinstance(task_id, int) and not isinstance(task_id, bool)):
        shown = repr(task_id) if isinstance(task_id, str) else str(task_id)
        return f"{path}: task {shown} (position {n})"
    return f"{path}: task at position {n}"


def _key(task: dict[str, Any]) -> str:
    """The item's external id: ``data.item``, else ``label-studio:<task id>``."""
    item = text_field(task["data"].get("item"), "data.item")
    if item is not None and item.strip():
        return item
    if task.get("id") is None:
        raise BadField("a task needs an 'id' or data.item (the item's external id)")
    return f"label-studio:{text_field(task['id'], 'id')}"


def _task(where: str, task: Any) -> tuple[Task | None, list[str]]:
    """The task, or None and every problem found in it (the task's own, then one per
    bad annotation)."""
    if not isinstance(task, dict) or not isinstance(task.get("data"), dict):
        problem = "a task is an object with a 'data' object"
        if isinstance(task, dict) and "data" not in task and MIN_FIELDS & task.keys():
            flat = ", ".join(repr(k) for k in sorted(MIN_FIELDS & task.keys()))
            problem += (
                f" (this one is flat, with {flat}: Label Studio's JSON-MIN export); export"
                " the project as JSON instead"
            )
        return None, [f"{where}: {problem}"]
    surrogate = lone_surrogate(task) or nul_in(task)
    if surrogate is not None:
        return None, [f"{where}: {surrogate}"]
    data = task["data"]
    errors: list[str] = []
    fields: dict[str, Any] = {}
    key = ""
    text = data.get("text")
    if not isinstance(text, str):
        errors.append(f"{where}: missing data.text (a string)")
    try:
        key = _key(task)
        fields = {k: text_field(data[k], f"data.{k}") for k in DATA_FIELDS if k in data}
    except BadField as exc:
        errors.append(f"{where}: {exc}")
    annotations = task.get("annotations") or []
    if not isinstance(annotations, list):
        return None, [*errors, f"{where}: 'annotations' must be a list"]
    votes: list[TaskVote] = []
    for n, annotation in enumerate(annotations, start=1):
        try:
            votes.append(_vote(f"{where} annotation {n}", annotation))
        except BadField as exc:
            errors.append(f"{where} annotation {n}: {exc}")
    if errors or not isinstance(text, str):
        return None, errors
    fields = {k: v for k, v in fields.items() if v is not None}
    return Task(where=where, key=key, text=text, fields=fields, votes=tuple(votes)), []


BUFFER = 1 << 18
"""Characters of a Label Studio export read at a time (more while one task is longer)."""
JSON_SPACE = " \t\n\r"


class _NotStreamed(Exception):
    """The export is not a JSON list read as a stream: :func:`_whole_document` reads it
    whole, as ever, to say what is wrong with it."""


class _Elements:
    """The elements of the JSON list a file holds, decoded one at a time from a buffer."""

    def __init__(self, fh: TextIO) -> None:
        self.fh = fh
        self.buffer = ""
        self.at = 0
        self.ended = False
        self.decoder = json.JSONDecoder()

    def _more(self) -> None:
        """Read on: as much as the buffer holds unread, at least ``BUFFER`` characters."""
        chunk = self.fh.read(max(BUFFER, len(self.buffer) - self.at))
        self.buffer = self.buffer[self.at :] + chunk
        self.at = 0
        self.ended = not chunk

    def _next_char(self) -> str:
        """The next character that is no JSON white space ("" at the end), not taken."""
        while True:
            while self.at < len(self.buffer) and self.buffer[self.at] in JSON_SPACE:
                self.at += 1
            if self.at < len(self.buffer) or self.ended:
                return self.buffer[self.at : self.at + 1]
            self._more()

    def _value(self) -> Any:
        while True:
            try:
                value, end = self.decoder.raw_decode(self.buffer, self.at)
            except json.JSONDecodeError:
                if self.ended:
                    raise _NotStreamed from None
            except RecursionError:
                raise _NotStreamed from None
            else:
                # a number or a literal at the buffer's end may go on after it
                if end < len(self.buffer) or self.ended:
                    self.at = end
                    return value
            self._more()

    def __iter__(self) -> Iterator[Any]:
        if self._next_char() != "[":
            raise _NotStreamed
        self.at += 1
        if self._next_char() == "]":
            self.at += 1
        else:
            while True:
                self._next_char()
                yield self._value()
                after = self._next_char()
                self.at += 1
                if after == "]":
                    break
                if after != ",":
                    raise _NotStreamed
        if self._next_char() != "":
            raise _NotStreamed


def _whole_document(path: Path) -> list[Any]:
    """The file read whole with :func:`json.loads`: the list it holds, or
    :class:`FileImportError` naming what is wrong with it."""
    try:
        document = json.loads(path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError:
        raise FileImportError([f"{path}: not UTF-8 text"]) from None
    except json.JSONDecodeError as exc:
        problem = f"{path}:{exc.lineno}: malformed JSON ({exc.msg})"
        start = exc.doc.lstrip()[:1]
        if start and start not in "[{":
            problem = (
                f"{path}:1: not JSON (Label Studio's CSV or TSV export?); export the project"
                " as JSON, a list of tasks"
            )
        raise FileImportError([problem]) from None
    except RecursionError:
        raise FileImportError([f"{path}: JSON nested too deeply to read"]) from None
    if not isinstance(document, list):
        raise FileImportError([f"{path}: expected a JSON list of tasks"])
    return document


def read_elements(path: Path) -> Iterator[Any]:
    """The tasks of a Label Studio JSON export (one JSON list), decoded one at a time as
    the file is read; a file that is no JSON list of tasks raises
    :class:`FileImportError`, its message that of the file read whole with
    :func:`json.loads` (malformed JSON names the line of the problem)."""
    if not path.is_file():
        what = "a folder, not a Label Studio JSON export" if path.is_dir() else "no such file"
        raise FileImportError([f"{path}: {what}"])
    told = 0
    try:
        with path.open(encoding="utf-8-sig") as fh:
            for element in _Elements(fh):
                told += 1
                yield element
    except (_NotStreamed, UnicodeDecodeError):
        yield from _whole_document(path)[told:]


class LabelStudioFile:
    """A Label Studio JSON export as a :class:`~annotation.formats.common.TaskFile`: its
    tasks, each item once (a later task of the same item is a problem), and one line
    for every task or annotation that cannot be read (``FILE: task ID (position N)[
    annotation M]: problem``). Each read decodes a task at a time; between the two, each
    item's id and where its task is are kept."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.count = 0
        self.unreadable = 0

    def _tasks(self, errors: list[str]) -> Iterator[Task]:
        for n, raw in enumerate(read_elements(self.path), start=1):
            found, problems = _task(_where(self.path, n, raw), raw)
            errors += problems
            if found is not None:
                yield found

    def check(self) -> list[str]:
        errors: list[str] = []
        seen: dict[str, str] = {}
        again: list[str] = []
        for task in self._tasks(errors):
            if task.key in seen:
                again.append(f"{task.where}: item {task.key!r} already in {seen[task.key]}")
            else:
                seen[task.key] = task.where
        self.count, self.unreadable = len(seen), len(errors)
        return [*errors, *again]

    def tasks(self) -> Iterator[Task]:
        errors: list[str] = []
        seen: set[str] = set()
        try:
            for task in self._tasks(errors):
                if task.key not in seen:
                    seen.add(task.key)
                    yield task
        except FileImportError as exc:
            raise FileImportError(changed_lines(self.path, exc.errors)) from None
        if len(seen) != self.count or len(errors) != self.unreadable:
            raise FileImportError(changed_lines(self.path, []))


def _choices(name: str, values: list[str], annotation_id: int) -> dict[str, Any]:
    return {
        "id": f"{name}-{annotation_id}",
        "from_name": name,
        "to_name": "text",
        "type": "choices",
        "value": {"choices": values},
    }


def export_tasks(target: SetRow, items: list[ExportItem]) -> list[dict[str, Any]]:
    """Label Studio tasks for a set, every live vote an annotation; user ids are given
    in order of first appearance and ``created_username`` keeps the name."""
    users: dict[str, int] = {}
    tasks = []
    annotation_id = 0
    for n, item in enumerate(items, start=1):
        annotations = []
        for vote in item.votes:
            annotation_id += 1
            user = users.setdefault(vote.annotator, len(users) + 1)
            result: list[dict[str, Any]] = []
            if vote.label != SKIP:
                result.append(_choices("label", [vote.label], annotation_id))
            if vote.category:
                result.append(_choices("category", [vote.category], annotation_id))
            if vote.note:
                result.append(
                    {
                        "id": f"note-{annotation_id}",
                        "from_name": "note",
                        "to_name": "text",
                        "type": "textarea",
                        "value": {"text": [vote.note]},
                    }
                )
            annotations.append(
                {
                    "id": annotation_id,
                    "completed_by": user,
                    "created_username": f"{vote.annotator}, {user}",
                    "result": result,
                    "was_cancelled": vote.label == SKIP,
                    "ground_truth": vote.role == ADJUDICATOR,
                    "lead_time": None,
                }
            )
        data = {"text": item.text, "item": item.key, "kind": item.kind, **item.fields}
        tasks.append({"id": n, "data": data, "annotations": annotations})
    return tasks


def labeling_config(target: SetRow) -> str:
    """The labeling config XML for the set: its text, its labels (a skip is Label
    Studio's own Skip button), its categories and a note."""
    lines = [
        "<View>",
        '  <Text name="text" value="$text"/>',
        *(['  <Text name="diff" value="$diff"/>'] if target.kind == "commit" else []),
        '  <Choices name="label" toName="text" choice="single" required="true" showInline="true">',
        *(f"    <Choice value={quoteattr(label)}/>" for label in target.labels),
        "  </Choices>",
    ]
    if target.categories:
        lines += [
            '  <Choices name="category" toName="text" choice="single">',
            *(f"    <Choice value={quoteattr(c)}/>" for c in target.categories),
            "  </Choices>",
        ]
    lines += ['  <TextArea name="note" toName="text" maxSubmissions="1"/>', "</View>", ""]
    return "\n".join(lines)
