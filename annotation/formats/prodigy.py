"""Prodigy's JSONL tasks, read and written.

A Prodigy task (one line) holds ``text``, ``meta``, the hashes ``_input_hash`` and
``_task_hash``, and once annotated ``answer`` (accept, reject or ignore), the annotator's
``_annotator_id`` and ``_session_id``. Two task shapes carry a label:

- binary: ``label`` names one label; accept gives it, reject gives the set's other label
  (a two-label set only), ignore is a skip;
- choice: ``options`` (``id``, ``text``) and ``accept``, the ids ticked: one label and at
  most one category; ignore (or reject) is a skip.

Prodigy's annotator ids are ``DATASET-SESSION``; the set's name is taken off the front,
so ``gt-sample-alice`` in set ``gt-sample`` is alice. Our external id travels in
``meta.id``, the commit's fields in ``meta`` and its diff in ``diff``; an adjudicator's
vote says ``meta.role = "adjudicator"`` and a note ``meta.note``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from annotation.formats.common import (
    ANSWERS,
    IGNORE,
    REJECT,
    ExportItem,
    Task,
    TaskVote,
    text_of,
)
from annotation.importing import FileImportError, read_jsonl
from annotation.labels import SKIP
from store.sets import SetRow
from store.votes import ADJUDICATOR


def hash32(*parts: str) -> int:
    """A signed 32-bit hash, the range of Prodigy's own ``_input_hash``/``_task_hash``."""
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return int.from_bytes(digest[:4], "big", signed=True)


def _annotator(record: dict[str, Any], set_name: str) -> str:
    raw = text_of(record.get("_annotator_id")) or text_of(record.get("_session_id")) or ""
    prefix = f"{set_name}-"
    return raw[len(prefix) :] if raw.startswith(prefix) and len(raw) > len(prefix) else raw


def _vote(where: str, record: dict[str, Any], set_name: str) -> TaskVote | str:
    """The vote a task line carries, or the one-line reason it cannot be read."""
    answer = record.get("answer")
    if answer not in ANSWERS:
        return f"answer must be one of {', '.join(ANSWERS)}, not {answer!r}"
    annotator = _annotator(record, set_name)
    if not annotator:
        return "an answered task needs _annotator_id or _session_id"
    meta = record.get("meta") if isinstance(record.get("meta"), dict) else {}
    common = {
        "where": where,
        "annotator": annotator,
        "answer": answer,
        "note": text_of(meta.get("note")),
        "adjudicator": meta.get("role") == ADJUDICATOR,
    }
    accept = record.get("accept")
    if accept is not None:
        if not isinstance(accept, list) or not all(isinstance(c, (str, int)) for c in accept):
            return "'accept' must be a list of option ids"
        return TaskVote(choices=tuple(str(c) for c in accept), **common)
    label = record.get("label")
    if isinstance(label, str) and label.strip():
        category = text_of(meta.get("category"))
        return TaskVote(binary=label, choices=(category,) if category else (), **common)
    if answer == IGNORE:
        return TaskVote(**common)
    return "an answered task needs 'label' (binary) or 'accept' (choice)"


def read_tasks(path: Path, set_name: str) -> list[Task]:
    """One :class:`Task` per item (lines of the same item gather their votes); raises
    :class:`FileImportError` naming every bad line."""
    records, errors = read_jsonl(path) if path.is_file() else ([], [f"{path}: no such file"])
    tasks: dict[str, Task] = {}
    for number, record in records:
        where = f"{path}:{number}"
        text = record.get("text")
        if not isinstance(text, str):
            errors.append(f"{where}: missing 'text' (a string)")
            continue
        meta = record.get("meta") if isinstance(record.get("meta"), dict) else {}
        key = text_of(meta.get("id")) or f"prodigy:{record.get('_input_hash', hash32(text))}"
        vote = _vote(where, record, set_name) if "answer" in record else None
        if isinstance(vote, str):
            errors.append(f"{where}: {vote}")
            continue
        fields = {k: meta.get(k) for k in ("repo", "sha", "file", "language") if k in meta}
        if isinstance(record.get("diff"), str):
            fields["diff"] = record["diff"]
        earlier = tasks.get(key)
        votes = (*(earlier.votes if earlier else ()), *((vote,) if vote else ()))
        tasks[key] = Task(
            where=earlier.where if earlier else where,
            key=key,
            text=text,
            fields=fields,
            votes=votes,
        )
    if errors:
        raise FileImportError(errors)
    return list(tasks.values())


def _options(target: SetRow) -> list[dict[str, str]]:
    return [{"id": x, "text": x} for x in [*target.labels, *target.categories]]


def task_lines(
    target: SetRow, items: list[ExportItem], binary: bool = False
) -> Iterator[dict[str, Any]]:
    """Prodigy tasks for a set: one per live vote (an item nobody voted on: one task with
    no answer, ready to annotate). ``binary`` writes accept/reject on the set's first
    label (a two-label set) instead of choice tasks."""
    positive = target.labels[0]
    for item in items:
        meta = {
            "id": item.key,
            "kind": item.kind,
            **{k: v for k, v in item.fields.items() if k != "diff"},
        }
        base: dict[str, Any] = {"text": item.text, "meta": meta}
        if "diff" in item.fields:
            base["diff"] = item.fields["diff"]
        base["_input_hash"] = input_hash = hash32(item.kind, item.key, item.text)
        if binary:
            base["label"] = positive
            base["_task_hash"] = hash32(str(input_hash), positive)
        else:
            base["options"] = _options(target)
            base["_task_hash"] = hash32(str(input_hash), *target.labels)
        if not item.votes:
            yield base
        for vote in item.votes:
            line = json.loads(json.dumps(base))
            if vote.role == ADJUDICATOR:
                line["meta"]["role"] = ADJUDICATOR
            if vote.note:
                line["meta"]["note"] = vote.note
            line["_annotator_id"] = line["_session_id"] = f"{target.name}-{vote.annotator}"
            if vote.label == SKIP:
                line["answer"] = IGNORE
            elif binary:
                line["answer"] = "accept" if vote.label == positive else REJECT
                if vote.category:
                    line["meta"]["category"] = vote.category
            else:
                line["answer"] = "accept"
                line["accept"] = [vote.label, *([vote.category] if vote.category else [])]
            yield line
