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
from pathlib import Path
from typing import Any
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
from annotation.importing import FileImportError
from annotation.jsontext import lone_surrogate, nul_in
from annotation.labels import SKIP
from store.sets import SetRow
from store.votes import ADJUDICATOR

DATA_FIELDS = ("repo", "sha", "file", "language", "diff")


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
        return None, [f"{where}: a task is an object with a 'data' object"]
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


def read_tasks(path: Path) -> tuple[list[Task], list[str]]:
    """The tasks of a Label Studio JSON export, and one line for every task or annotation
    that cannot be read (``FILE: task ID (position N)[ annotation M]: problem``); a file
    that is no JSON list of tasks raises :class:`FileImportError`."""
    if not path.is_file():
        what = "a folder, not a Label Studio JSON export" if path.is_dir() else "no such file"
        raise FileImportError([f"{path}: {what}"])
    try:
        document = json.loads(path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError:
        raise FileImportError([f"{path}: not UTF-8 text"]) from None
    except json.JSONDecodeError as exc:
        raise FileImportError([f"{path}:{exc.lineno}: malformed JSON ({exc.msg})"]) from None
    except RecursionError:
        raise FileImportError([f"{path}: JSON nested too deeply to read"]) from None
    if not isinstance(document, list):
        raise FileImportError([f"{path}: expected a JSON list of tasks"])
    tasks: list[Task] = []
    errors: list[str] = []
    for n, raw in enumerate(document, start=1):
        found, problems = _task(_where(path, n, raw), raw)
        errors += problems
        if found is not None:
            tasks.append(found)
    return tasks, errors


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
