"""Labeled data in one step: a JSONL or CSV file whose rows carry an item and its label
(PerfCurator's ``train.jsonl`` as it is, a spreadsheet export) becomes items of a set
with one vote each from a named annotator, so they settle at once and can train.

Field names and a label mapping are options. A bad row is reported as one ``FILE:LINE``
line, with the reason it shares with rows that failed the same way, and left out; every
other row goes in, in one transaction, and importing the same file again changes nothing.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from annotation.importing import (
    ITEM_TEXT_FIELDS,
    ModelInput,
    Prelabel,
    Progress,
    _text,
    item_path,
    not_text,
    shape,
    shown_id,
    text_digest,
    write_items,
)
from annotation.label_spelling import label_named
from annotation.labels import DEFAULT_LABELS, SKIP, taxonomy_slugs
from annotation.record_files import WholeFile, iter_records
from annotation.tool_records import item_rows
from store import Store
from store.items import ImportedItem
from store.sets import NewSet, SetRow, add_set_items, create_set, get_set
from store.votes import VoteRow, append_votes, live_votes_for_items

ID_FIELDS = ("id", "idx")
TEXT_FIELDS = ("message", "commit_message", "text")


class MappingError(ValueError):
    """A ``--map`` that cannot be read, or a set the file cannot go into."""


class FieldError(MappingError):
    """An option naming a field no row of the file has (a usage error)."""


def parse_mapping(texts: Sequence[str] | None) -> dict[str, str]:
    """``["1=perf,0=non-perf"]`` -> {"1": "perf", "0": "non-perf"}. ``--map`` may be given
    several times (``--map 1=perf --map 0=non-perf``): every pair counts."""
    if not texts:
        return {}
    found: dict[str, str] = {}
    for text in texts:
        for part in text.split(","):
            raw, sep, label = part.partition("=")
            if not sep or not raw.strip() or not label.strip():
                raise MappingError(
                    f"--map {text!r}: write VALUE=LABEL pairs, e.g. 1=perf,0=non-perf"
                )
            if raw.strip() in found:
                raise MappingError(f"--map {text!r}: {raw.strip()!r} is mapped twice")
            if label.strip() == SKIP:
                raise MappingError(
                    f"--map {text!r}: {SKIP} is not a label a map may give (a skip settles"
                    " nothing); map the value to a label, or leave those rows out"
                )
            found[raw.strip()] = label.strip()
    return found


@dataclass(frozen=True)
class LabeledSpec:
    """How to read a labeled file."""

    set_name: str
    label_field: str
    mapping: dict[str, str] = field(default_factory=dict)
    annotator: str = "gold"
    text_field: str | None = None
    id_field: str | None = None
    labels: list[str] | None = None
    votes_per_item: int = 1


@dataclass(frozen=True)
class LabeledImport:
    stored: int
    known: int
    added_to_set: int
    votes: int
    unchanged: int
    errors: list[str]
    without_repo: int
    set_row: SetRow | None  # None: no row could be imported and the set did not exist
    set_created: bool
    reasons: list[str] = field(default_factory=list)
    """Each error's reason (in the same order), the same for rows that failed the same way."""
    other_message: list[str] = field(default_factory=list)
    """A line for each row whose id is stored with another message (its label is
    recorded on the stored item)."""


class _Bad(NamedTuple):
    reason: str
    problem: str
    value: str = ""  # the row's label value, for a label outside the set


OUTSIDE = "label outside the set's labels"
_YES = {"1", "1.0", "true", "yes", "y", "t"}
_NO = {"0", "0.0", "false", "no", "n", "f"}


def map_hint(values: Sequence[str], allowed: list[str]) -> str:
    """How to fix rows whose label values are none of the set's labels: a ``--map`` built
    from the values seen (1/0, true/false and yes/no read as perf and non-perf)."""
    seen = list(dict.fromkeys(values))
    positive = next((lab for lab in DEFAULT_LABELS["commit"] if lab in allowed), allowed[0])
    negatives = [lab for lab in allowed if lab != positive]
    if len(negatives) == 1 and seen and all(v.lower() in _YES | _NO for v in seen):
        seen.sort(key=lambda v: v.lower() not in _YES)
        pairs = [f"{v}={positive if v.lower() in _YES else negatives[0]}" for v in seen]
        return f"give --map {','.join(pairs)}"
    shown = ", ".join(seen[:5]) + (", ..." if len(seen) > 5 else "")
    return f"give --map VALUE=LABEL for the values seen ({shown}), e.g. --map {seen[0]}={positive}"


def _number(text: str) -> float | None:
    """A label value as a number: ``1``, ``1.0``, or ``1,0`` (a decimal comma)."""
    if text.count(",") == 1 and "." not in text:
        text = text.replace(",", ".")
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def mapped_value(raw: str, mapping: dict[str, str]) -> str | None:
    """The label ``--map`` gives a file's value: the value's own pair, else the one label
    of the pairs equal to it without case (``True`` as Excel and pandas write it, for
    ``--map true=perf``), else of the pairs equal to it as numbers (pandas' ``1.0`` for
    ``--map 1=perf``); None when no pair gives it one label."""
    if raw in mapping:
        return mapping[raw]
    number = _number(raw)
    for same in (
        lambda key: key.casefold() == raw.casefold(),
        lambda key: number is not None and _number(key) == number,
    ):
        labels = {label for key, label in mapping.items() if same(key)}
        if len(labels) == 1:
            return labels.pop()
    return None


def _key(record: dict[str, Any], id_field: str | None, path: Path, text: str) -> str:
    """The item's external id: the id field's value (``id`` as given; another field,
    e.g. PerfCurator's ``idx``, prefixed with the file's stem), else a hash of the text."""
    names = [id_field] if id_field else list(ID_FIELDS)
    for name in names:
        value = _text(record, name)
        if value and value.strip():
            return value.strip() if name == "id" else f"{path.stem}:{value.strip()}"
    return "sha1:" + hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


def _not_unicode(value: Any, name: str = "") -> str | None:
    """The first field holding text that cannot be stored (JSON's lone surrogates)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return name or "?"
    elif isinstance(value, dict):
        for key, inner in value.items():
            found = _not_unicode(inner, name or str(key)) or _not_unicode(str(key), name or "?")
            if found is not None:
                return found
    elif isinstance(value, list):
        for inner in value:
            found = _not_unicode(inner, name)
            if found is not None:
                return found
    return None


def _row(
    spec: LabeledSpec,
    allowed: list[str],
    path: Path,
    record: dict[str, Any],
    model_input: ModelInput,
) -> tuple[ImportedItem, str] | _Bad:
    """The item and its label, or the problem with the row."""
    broken = _not_unicode(record)
    if broken is not None:
        return _Bad(
            "not valid Unicode", f"field {broken!r} is not valid Unicode (a lone surrogate escape)"
        )
    shaped = not_text(record, [*ITEM_TEXT_FIELDS, *([spec.id_field] if spec.id_field else [])])
    if shaped is not None:
        return _Bad("a field that is no text", shaped)
    if spec.text_field and record.get(spec.text_field) is not None:
        shaped = not_text(record, [spec.text_field])
        if shaped is not None or not isinstance(record[spec.text_field], str):
            value = record[spec.text_field]
            return _Bad(
                "a field that is no text",
                shaped or f"{spec.text_field!r} must be a string, not {shape(value)}",
            )
    names = [spec.text_field] if spec.text_field else list(TEXT_FIELDS)
    text = next((record[n] for n in names if isinstance(record.get(n), str)), None)
    if text is None or not text.strip():
        return _Bad(
            "missing the text",
            f"missing the text ({' or '.join(repr(n) for n in names)}, a string)",
        )
    value = record.get(spec.label_field)
    if isinstance(value, list):  # doccano's labels: one row, a list of its labels
        if len(value) > 1:
            return _Bad(
                "several labels",
                f"the label field {spec.label_field!r} holds {len(value)} labels"
                f" ({', '.join(map(str, value[:5]))}); a row takes one",
            )
        value = value[0] if value else None
        if isinstance(value, dict | list):
            return _Bad(
                "a field that is no text",
                f"the label field {spec.label_field!r} holds {shape(value)}, not a label",
            )
    # a JSON true is the value "true", as --map and the file spell it (not Python's True)
    raw = json.dumps(value) if isinstance(value, bool) else _text({"v": value}, "v")
    if raw is None or not raw.strip():
        return _Bad("missing the label", f"missing the label field {spec.label_field!r}")
    raw = raw.strip()
    mapped = mapped_value(raw, spec.mapping) if spec.mapping else raw
    if mapped is None:
        return _Bad(
            "label not in --map", f"label {raw!r} is not in --map ({', '.join(spec.mapping)})"
        )
    label = label_named(mapped, allowed) or mapped
    if label == SKIP:
        return _Bad(
            "a skip", f"label {SKIP!r} settles nothing: give the row a label or leave it out"
        )
    if label not in allowed:
        return _Bad(
            OUTSIDE, f"label {label!r} is not one of the set's labels ({', '.join(allowed)})", raw
        )
    diff = _text(record, "diff") or ""
    repo = _text(record, "repo")
    key = _key(record, spec.id_field, path, text)
    item = ImportedItem(
        kind="commit",
        key=key,
        source=repo or f"import:{path.name}",
        language=_text(record, "language"),
        path=item_path(record),
        payload={
            "message": text,
            "diff": diff,
            "model_input": model_input(text, diff, path=item_path(record)),
            **({"repo": repo} if repo else {}),
            **({"sha": _text(record, "sha")} if record.get("sha") is not None else {}),
        },
        provenance={"imported_from": path.name, "label_field": spec.label_field},
    )
    return item, label


class _FieldsSeen:
    """What :func:`_check_fields_named` needs of a file, gathered as its rows stream by:
    the fields some row has a value in, and the field names of the first 50 rows."""

    def __init__(self, spec: LabeledSpec) -> None:
        self.named = [
            (option, name)
            for option, name in (
                ("--label-field", spec.label_field),
                ("--text-field", spec.text_field),
                ("--id-field", spec.id_field),
            )
            if name
        ]
        self.filled: set[str] = set()
        self.rows = 0
        self.first_fields: list[str] = []

    def see(self, record: dict[str, Any]) -> None:
        self.rows += 1
        if self.rows <= 50:
            self.first_fields.extend(k for k in record if k not in self.first_fields)
        for _, name in self.named:
            if name not in self.filled and record.get(name) not in (None, ""):
                self.filled.add(name)

    def check(self) -> None:
        """Refuse ``--label-field``, ``--text-field`` or ``--id-field`` naming a field no
        row of the file has a value in (a typo would otherwise fail every row, or fall
        back to the default text field or a hash id without a word)."""
        if not self.rows:
            return
        for option, name in self.named:
            if name not in self.filled:
                seen = self.first_fields
                fields = ", ".join(repr(k) for k in seen[:8]) + (", ..." if len(seen) > 8 else "")
                raise FieldError(
                    f"{option} {name!r}: no row of the file has a value there (the rows have"
                    f" {fields})"
                )


@dataclass
class _Checked:
    """A labeled file read once as a stream: its unreadable lines, its bad rows (each
    with its line), and how many good rows (their lines are the others')."""

    errors: list[str]
    bad: list[tuple[int, _Bad]]
    good: int


def _no_input(message: str, diff: str, *, path: str | None = None) -> str:
    return ""  # a row's checks do not read its model input


def _check_rows(spec: LabeledSpec, allowed: list[str], path: Path, fields: _FieldsSeen) -> _Checked:
    """Every row checked, one in memory at a time (what is kept of a good row: its id,
    its line, a digest of its message and its label, to name a repeated id)."""
    errors: list[str] = []
    bad: list[tuple[int, _Bad]] = []
    seen: dict[str, tuple[int, bytes, str]] = {}
    for number, record in item_rows(iter_records(path, (), errors)):
        fields.see(record)
        got = _row(spec, allowed, path, record, _no_input)
        if isinstance(got, _Bad):
            bad.append((number, got))
            continue
        key, message = got[0].key, text_digest(str(got[0].payload["message"]))
        if key in seen:
            line, before, label = seen[key]
            if before != message:
                same = "with a different message"
            elif label != got[1]:
                same = f"labelled {label} there"
            else:
                same = "the same message and label"
            bad.append(
                (number, _Bad("id twice", f"id {shown_id(key)} already on line {line} ({same})"))
            )
            continue
        seen[key] = (number, message, got[1])
    if any(isinstance(e, WholeFile) for e in errors):
        # the rows read before the file turned out to be no CSV count for nothing
        seen, bad, fields.rows = {}, [], 0
    return _Checked(errors, bad, len(seen))


def _good_rows(
    spec: LabeledSpec,
    allowed: list[str],
    path: Path,
    model_input: ModelInput,
    checked: _Checked,
) -> Iterator[tuple[int, ImportedItem, str]]:
    """The good rows :func:`_check_rows` found, read again as a stream: (line, item,
    label). Raises :class:`MappingError` when the file no longer reads the same."""
    if not checked.good:
        return
    skip = {number for number, _ in checked.bad}
    errors: list[str] = []
    read = 0
    for number, record in item_rows(iter_records(path, (), errors)):
        if number in skip:
            continue
        got = _row(spec, allowed, path, record, model_input)
        if isinstance(got, _Bad) or errors != checked.errors[: len(errors)]:
            break
        read += 1
        yield number, got[0], got[1]
    if read != checked.good or errors != checked.errors:
        raise MappingError("the file changed while it was imported; nothing of it is stored")


def _labels_of(mapping: dict[str, str]) -> list[str]:
    """The labels a mapping names, in the kind's usual order when it uses the defaults."""
    named = list(dict.fromkeys(mapping.values()))
    defaults = DEFAULT_LABELS["commit"]
    if set(named) <= set(defaults):
        return [label for label in defaults if label in named] if len(named) > 1 else defaults
    return named


def import_labeled_file(
    store: Store,
    path: Path,
    spec: LabeledSpec,
    model_input: ModelInput,
    prelabel: Prelabel | None = None,
    progress: Progress | None = None,
) -> LabeledImport:
    """Import a labeled file's good rows as items of ``spec.set_name`` (created if needed,
    with ``votes_per_item`` from the spec) voted by ``spec.annotator``; bad rows come
    back as ``FILE:LINE: problem`` lines. ``progress`` is told (rows written, good rows).
    The file is read twice as a stream (to check every row, then to write the good
    ones), so memory does not grow with its size."""
    target = get_set(store, spec.set_name)
    allowed = list(target.labels if target else spec.labels or _labels_of(spec.mapping))
    fields = _FieldsSeen(spec)
    checked = _check_rows(spec, allowed, path, fields)
    fields.check()
    if target is not None and target.kind != "commit":
        raise MappingError(f"set {spec.set_name!r} holds {target.kind} items, not commits")
    if len(allowed) < 2:
        raise MappingError("give the set's labels (--labels perf,non-perf) or a --map")
    errors = list(checked.errors)
    reasons = ["unreadable row"] * len(errors)
    bad = checked.bad
    outside = [b.value for _, b in bad if b.reason == OUTSIDE]
    hint = (
        "--map must give one of them" if spec.mapping or not outside else map_hint(outside, allowed)
    )
    for number, b in bad:
        errors.append(
            f"{path}:{number}: {b.problem}" + (f": {hint}" if b.reason == OUTSIDE else "")
        )
        reasons.append(b.reason)
    if not checked.good and target is None:  # a set made of nothing would only be in the way
        return LabeledImport(0, 0, 0, 0, 0, errors, 0, None, False, reasons)
    with store.transaction():
        # looked up again under the write lock: an import beside this one may have just
        # created the set, and this one joins it when the rows were checked against its labels
        current = get_set(store, spec.set_name)
        if current is not None and (current.kind != "commit" or current.labels != allowed):
            raise MappingError(
                f"set {spec.set_name!r} was just created elsewhere with labels"
                f" {', '.join(current.labels)} ({current.kind}); import the file again"
            )
        target = current
        created = target is None
        if target is None:
            target = create_set(
                store,
                NewSet(
                    name=spec.set_name,
                    kind="commit",
                    labels=allowed,
                    categories=taxonomy_slugs(),
                    params={"imported": [path.name], "label_field": spec.label_field},
                    votes_per_item=spec.votes_per_item,
                ),
            )
        labels: list[str] = []  # each good row's label, in file order
        no_repo: list[bool] = []  # whether it named no repository

        def numbered() -> Iterator[tuple[int, ImportedItem]]:
            for line, item, label in _good_rows(spec, allowed, path, model_input, checked):
                labels.append(label)
                no_repo.append(item.source.startswith("import:"))
                yield line, item

        results, other = write_items(store, path, numbered(), prelabel, progress, checked.good)
        ids = [item_id for _, item_id in results]
        added = add_set_items(store, target.id, ids)
        live = {
            v.item_id: v.label
            for v in live_votes_for_items(store, ids, role="annotator")
            if v.annotator == spec.annotator
        }
        votes = [
            VoteRow(item_id, spec.annotator, label, set_id=target.id, origin=f"import:{path.name}")
            for item_id, label in zip(ids, labels, strict=True)
            if live.get(item_id) != label
        ]
        append_votes(store, votes)
    return LabeledImport(
        stored=sum(1 for s, _ in results if s == "stored"),
        known=sum(1 for s, _ in results if s == "known"),
        added_to_set=added,
        votes=len(votes),
        unchanged=len(labels) - len(votes),
        errors=errors,
        without_repo=sum(
            1
            for loose, (status, _) in zip(no_repo, results, strict=True)
            if status == "stored" and loose
        ),
        set_row=target,
        set_created=created,
        reasons=reasons,
        other_message=other,
    )
