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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from annotation.formats.common import (
    ANSWERS,
    IGNORE,
    REJECT,
    BadField,
    ExportItem,
    Task,
    TaskVote,
    shape,
    text_field,
)
from annotation.importing import FileImportError, changed_lines, text_digest
from annotation.labels import SKIP
from annotation.record_files import iter_jsonl
from store.sets import SetRow
from store.votes import ADJUDICATOR


def hash32(*parts: str) -> int:
    """A signed 32-bit hash, the range of Prodigy's own ``_input_hash``/``_task_hash``."""
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return int.from_bytes(digest[:4], "big", signed=True)


META_FIELDS = ("repo", "sha", "file", "language")
ROLES = (None, "annotator", ADJUDICATOR)


def _annotator(record: dict[str, Any], set_name: str) -> str:
    raw = text_field(record.get("_annotator_id"), "_annotator_id", numbers=False) or text_field(
        record.get("_session_id"), "_session_id", numbers=False
    )
    raw = raw or ""
    prefix = f"{set_name}-"
    return raw[len(prefix) :] if raw.startswith(prefix) and len(raw) > len(prefix) else raw


def _vote(where: str, record: dict[str, Any], meta: dict[str, Any], set_name: str) -> TaskVote:
    """The vote a task line carries; :class:`BadField` says why it cannot be read."""
    answer = record.get("answer")
    if answer not in ANSWERS:
        raise BadField(f"answer must be one of {', '.join(ANSWERS)}, not {answer!r}")
    annotator = _annotator(record, set_name)
    if not annotator:
        raise BadField("an answered task needs _annotator_id or _session_id")
    role = meta.get("role")
    if role not in ROLES:
        raise BadField(f"'meta.role' must be annotator or {ADJUDICATOR}, not {shape(role)}")
    common = {
        "where": where,
        "annotator": annotator,
        "answer": answer,
        "note": text_field(meta.get("note"), "meta.note"),
        "adjudicator": role == ADJUDICATOR,
    }
    accept = record.get("accept")
    if accept is not None:
        if not isinstance(accept, list) or not all(
            isinstance(c, str | int) and not isinstance(c, bool) for c in accept
        ):
            raise BadField("'accept' must be a list of option ids")
        return TaskVote(choices=tuple(str(c) for c in accept), **common)
    label = text_field(record.get("label"), "label", numbers=False)
    if label is not None and label.strip():
        category = text_field(meta.get("category"), "meta.category", numbers=False)
        return TaskVote(binary=label, choices=(category,) if category else (), **common)
    if answer == IGNORE:
        return TaskVote(**common)
    raise BadField("an answered task needs 'label' (binary) or 'accept' (choice)")


def _key(record: dict[str, Any], meta: dict[str, Any], text: str) -> str:
    """Our external id: ``meta.id``, else Prodigy's ``_input_hash`` (or a hash of the text)."""
    key = text_field(meta.get("id"), "meta.id")
    if key is not None and key.strip():
        return key
    input_hash = record.get("_input_hash", hash32(text))
    if not isinstance(input_hash, int) or isinstance(input_hash, bool):
        raise BadField(f"'_input_hash' must be an integer, not {shape(input_hash)}")
    return f"prodigy:{input_hash}"


def _line(
    where: str, record: dict[str, Any], set_name: str
) -> tuple[str, str, dict[str, Any], TaskVote | None]:
    """(key, text, fields, vote) of one task line; :class:`BadField` for a bad one."""
    text = record.get("text")
    if not isinstance(text, str):
        raise BadField("missing 'text' (a string)")
    meta = record.get("meta", {})
    if not isinstance(meta, dict):
        raise BadField(f"'meta' must be an object, not {shape(meta)}")
    key = _key(record, meta, text)
    fields: dict[str, Any] = {
        k: text_field(meta[k], f"meta.{k}") for k in META_FIELDS if meta.get(k) is not None
    }
    diff = text_field(record.get("diff"), "diff", numbers=False)
    if diff is not None:
        fields["diff"] = diff
    vote = _vote(where, record, meta, set_name) if "answer" in record else None
    return key, text, fields, vote


@dataclass(slots=True)
class _Item:
    """What the check keeps of an item's lines: the first (where its task is named), a
    digest of its text and fields, whether the last line's differ (the task takes the
    last line's), and every line's vote."""

    first: int
    digest: bytes
    last_differs: bool = False
    votes: list[TaskVote] = field(default_factory=list)


def _digest(text: str, fields: dict[str, Any]) -> bytes:
    return text_digest(json.dumps([text, fields], sort_keys=True))


class ProdigyFile:
    """A Prodigy JSONL file as a :class:`~annotation.formats.common.TaskFile`: one task
    per item (the lines of an item gather their votes; its text and fields are its last
    line's), named by the item's first line; one ``FILE:LINE: problem`` for every line
    that cannot be read. Each read is a stream, a line in memory at a time; between the
    two, an item's first line, a digest and its votes are kept."""

    def __init__(self, path: Path, set_name: str) -> None:
        self.path = path
        self.set_name = set_name
        self.items: dict[str, _Item] = {}
        self.unreadable = 0

    def _lines(
        self, errors: list[str]
    ) -> Iterator[tuple[int, str, str, dict[str, Any], TaskVote | None]]:
        """(line, key, text, fields, vote) of every good line; the others' problems go to
        ``errors``, those the JSON reader finds before the ones it does not."""
        path = self.path
        if not path.is_file():
            what = "a folder, not a Prodigy JSONL file" if path.is_dir() else "no such file"
            errors.append(f"{path}: {what}")
            return
        bad_fields: list[str] = []
        for number, record in iter_jsonl(path, errors):
            where = f"{path}:{number}"
            try:
                key, text, fields, vote = _line(where, record, self.set_name)
            except BadField as exc:
                bad_fields.append(f"{where}: {exc}")
                continue
            yield number, key, text, fields, vote
        errors += bad_fields

    def check(self) -> list[str]:
        errors: list[str] = []
        self.items = {}
        for number, key, text, fields, vote in self._lines(errors):
            item = self.items.get(key)
            if item is None:
                item = self.items[key] = _Item(number, _digest(text, fields))
            elif number != item.first:
                item.last_differs = _digest(text, fields) != item.digest
            if vote is not None:
                item.votes.append(vote)
        self.unreadable = len(errors)
        return errors

    def _last_lines(self) -> dict[str, tuple[str, dict[str, Any]]]:
        """The text and fields of the items whose last line differs from their first,
        read once more (only a file with such items pays for it)."""
        differ = {key for key, item in self.items.items() if item.last_differs}
        found: dict[str, tuple[str, dict[str, Any]]] = {}
        if differ:
            for _, key, text, fields, _ in self._lines([]):
                if key in differ:
                    found[key] = (text, fields)
        return found

    def tasks(self) -> Iterator[Task]:
        last = self._last_lines()
        errors: list[str] = []
        told = 0
        for number, key, text, fields, _ in self._lines(errors):
            item = self.items.get(key)
            if item is None:
                break
            if number != item.first:
                continue
            text, fields = last.get(key, (text, fields))
            told += 1
            yield Task(
                where=f"{self.path}:{number}",
                key=key,
                text=text,
                fields=fields,
                votes=tuple(item.votes),
            )
        if told != len(self.items) or len(errors) != self.unreadable:
            raise FileImportError(changed_lines(self.path, []))


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
