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

from annotation.formats.common import ACCEPT, IGNORE, ExportItem, Task, TaskVote, text_of
from annotation.importing import FileImportError
from annotation.labels import SKIP
from store.sets import SetRow
from store.votes import ADJUDICATOR


def _annotator(annotation: dict[str, Any]) -> str:
    by = annotation.get("completed_by")
    if isinstance(by, dict):
        return text_of(by.get("email") or by.get("username") or by.get("id")) or ""
    named = text_of(annotation.get("created_username"))
    if named and named.strip():
        name, _, user_id = named.strip().rpartition(",")
        return (name if name.strip() and user_id.strip().isdecimal() else named).strip()
    return f"label-studio-user-{by}" if by is not None else ""


def _vote(where: str, annotation: dict[str, Any]) -> TaskVote | str:
    annotator = _annotator(annotation)
    if not annotator:
        return "an annotation needs completed_by or created_username"
    results = annotation.get("result")
    if not isinstance(results, list):
        return "'result' must be a list of regions"
    choices: list[str] = []
    notes: list[str] = []
    for region in results:
        value = region.get("value") if isinstance(region, dict) else None
        if not isinstance(value, dict):
            return "every region of 'result' needs a 'value' object"
        if isinstance(value.get("choices"), list):
            choices += [str(c) for c in value["choices"]]
        elif isinstance(value.get("text"), list):
            notes += [str(t) for t in value["text"]]
    return TaskVote(
        where=where,
        annotator=annotator,
        answer=IGNORE if annotation.get("was_cancelled") else ACCEPT,
        choices=tuple(choices),
        note="\n".join(notes) or None,
        adjudicator=bool(annotation.get("ground_truth")),
    )


def _task(where: str, task: Any) -> Task | list[str]:
    if not isinstance(task, dict) or not isinstance(task.get("data"), dict):
        return [f"{where}: a task is an object with a 'data' object"]
    data = task["data"]
    text = data.get("text")
    if not isinstance(text, str):
        return [f"{where}: missing data.text (a string)"]
    key = text_of(data.get("item")) or f"label-studio:{task.get('id')}"
    annotations = task.get("annotations") or []
    if not isinstance(annotations, list):
        return [f"{where}: 'annotations' must be a list"]
    votes: list[TaskVote] = []
    errors: list[str] = []
    for n, annotation in enumerate(annotations, start=1):
        found = (
            _vote(f"{where} annotation {n}", annotation)
            if isinstance(annotation, dict)
            else "not an object"
        )
        if isinstance(found, str):
            errors.append(f"{where} annotation {n}: {found}")
        else:
            votes.append(found)
    fields = {k: data[k] for k in ("repo", "sha", "file", "language", "diff") if k in data}
    return errors or Task(where=where, key=key, text=text, fields=fields, votes=tuple(votes))


def read_tasks(path: Path) -> list[Task]:
    """The tasks of a Label Studio JSON export; raises :class:`FileImportError` naming
    every bad task (``FILE: task N``) or the JSON error's line."""
    if not path.is_file():
        raise FileImportError([f"{path}: no such file"])
    try:
        document = json.loads(path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError:
        raise FileImportError([f"{path}: not UTF-8 text"]) from None
    except json.JSONDecodeError as exc:
        raise FileImportError([f"{path}:{exc.lineno}: malformed JSON ({exc.msg})"]) from None
    if not isinstance(document, list):
        raise FileImportError([f"{path}: expected a JSON list of tasks"])
    tasks: list[Task] = []
    errors: list[str] = []
    for n, raw in enumerate(document, start=1):
        found = _task(f"{path}: task {n}", raw)
        if isinstance(found, list):
            errors += found
        else:
            tasks.append(found)
    if errors:
        raise FileImportError(errors)
    return tasks


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
