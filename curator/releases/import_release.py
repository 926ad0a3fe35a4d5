"""``curator import release``: load a validated release into a store, all or nothing.

Each kind has one reader that turns records back into the rows its miner would have
handed over, saved through the same store functions (so dedup applies as when mining).
Labels come back as what produced them: a labeler's label as that labeler's prediction,
settled human labels as the votes that settled them, in a set named
``release-VERSION-KIND``. Exporting the resulting store with the release's options gives
the same data files.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from annotation.labels import DEFAULT_LABELS, SKIP, annotator_problem
from curator.releases.files import open_lines
from curator.releases.manifest import data_files
from curator.releases.validate import ValidationReport, validate_release
from store import DatabaseError, Store
from store.decisions import decide
from store.ir import IRModuleRow, save_ir_batch
from store.kernel_records import KernelCheck, KernelRow
from store.kernels import save_checks, save_kernel_batch
from store.predictions import add_predictions
from store.records import CommitRow, PredictionRow
from store.releases import (
    ReleaseCommit,
    ReleaseRow,
    latest_prediction,
    save_release,
    save_release_commits,
    stored_commit_identities,
)
from store.sets import NewSet, add_set_items, add_set_labels, create_set, get_set
from store.votes import ADJUDICATOR, VoteRow, append_votes, live_votes_for_items

BATCH = 500
MAX_LABEL_PROBLEMS = 20


class ReleaseImportError(ValueError):
    """A release that does not validate; ``problems`` holds one line per problem."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__(problems[0] if problems else "release not valid")
        self.problems = problems


@dataclass
class ImportResult:
    version: str
    outcomes: dict[str, dict[str, int]] = field(default_factory=dict)
    votes: int = 0
    predictions: int = 0
    sets: list[str] = field(default_factory=list)
    new_labels: dict[str, list[str]] = field(default_factory=dict)  # set -> labels it gained
    signed_by: str | None = None


@dataclass
class _Labels:
    """The labels a kind's records may carry: those of the release's set (or the kind's
    defaults before it exists); with ``allow_new``, others are collected instead. Votes'
    annotators must be names ``curator vote`` would take. ``problems`` holds every record
    that stops the import (the first ``MAX_LABEL_PROBLEMS``)."""

    allowed: set[str]
    allow_new: bool
    new: dict[str, None] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def problem(self, line: str) -> None:
        if len(self.problems) < MAX_LABEL_PROBLEMS:
            self.problems.append(line)

    def check(self, where: str, record: dict[str, Any]) -> None:
        for vote in record["votes"]:
            name = vote["annotator"]
            problem = annotator_problem(name)
            if problem is None and name != name.strip():
                problem = f"annotator name {name!r} has spaces around it"
            if problem is not None:
                self.problem(f"{where}: vote: {problem}")
        problem = _label_problem(record)
        if problem is not None:
            self.problem(f"{where}: {problem}")
        wanted = [(v["label"], "vote label") for v in record["votes"] if v["label"] != SKIP]
        labeler = record["labeler"] or ""
        if record["label"] is not None and not labeler.startswith("teacher-category:"):
            wanted.insert(0, (record["label"], "label"))
        for label, what in wanted:
            if label in self.allowed:
                continue
            if self.allow_new:
                self.new[label] = None
            else:
                known = ", ".join(sorted(self.allowed))
                self.problem(
                    f"{where}: {what} {label!r} is not one of the set's labels ({known});"
                    " --allow-new-labels adds it"
                )


def _label_problem(record: dict[str, Any]) -> str | None:
    """Why the record's label would not come back from what the import stores, if it
    would not: an adjudicated label must be the one its votes settle (they are all the
    import keeps of it), a predicted one needs its labeler, and only adjudicated labels
    carry votes. A record an export wrote always passes; an edited one that fails would
    lose or change its label without a word."""
    label, source, votes = record["label"], record["label_source"], record["votes"]
    if source != "adjudicated":
        if votes:
            return f"label_source {source!r} carries votes: only adjudicated labels have them"
        if source is None and label is not None:
            return f"label {label!r} has no label_source (adjudicated or predicted)"
        if source == "predicted" and (label is None or not record["labeler"]):
            return "a predicted label needs both label and labeler"
        return None
    seen: set[tuple[str, str]] = set()
    for vote in votes:
        who = (vote["annotator"], vote["role"])
        if who in seen:
            return f"{vote['role']} {vote['annotator']!r} has two votes on the item"
        seen.add(who)
    if label is None:
        return "an adjudicated record has no label"
    ordered = _settling_order(record)
    annotators = {v["annotator"]: v["label"] for v in ordered if v["role"] != ADJUDICATOR}
    judges = [(v["annotator"], v["label"]) for v in ordered if v["role"] == ADJUDICATOR]
    settled = decide(0, annotators, 1, "majority", judges[-1] if judges else None).label
    if settled != label:
        shown = ", ".join(f"{v['annotator']!r}: {v['label']!r}" for v in votes) or "none"
        got = "nothing" if settled is None else repr(settled)
        return f"label {label!r} is not what its votes settle ({got}; votes: {shown})"
    return None


def _commit(record: dict[str, Any]) -> CommitRow:
    return CommitRow(
        source=record["source"],
        sha=record["sha"],
        branch=record["branch"],
        author_date=record["date"],
        message=record["message"],
        diff=record["diff"],
        file=record["file"],
        files=record["files"],
        language=record["language"],
        functions=record["functions"],
        code_before=record["code_before"],
        code_after=record["code_after"],
        added=record["added"],
        deleted=record["deleted"],
        model_input=record["model_input"],
        function_md5=record["function_md5"],
        diff_hash=record["diff_hash"],
        provenance=record["provenance"],
    )


def _kernel(record: dict[str, Any]) -> KernelRow:
    return KernelRow(
        source=record["source"],
        key=record["key"],
        source_file=record["source_file"],
        kernel_name=record["kernel_name"],
        origin=record["origin"],
        original_source=record["original_source"],
        normalized_source=record["normalized_source"],
        normalized_hash=record["normalized_hash"],
        shim_needed=record["shim_needed"],
        shim_names=record["shim_names"],
        accepted=record["filter_status"] == "accepted",
        instructions=record["instructions"],
        message=record["compiler_message"],
        verdict=record["verdict"],
        features=record["features"],
        provenance=record["provenance"],
    )


def _ir(record: dict[str, Any]) -> IRModuleRow:
    bitcode = base64.b64decode(record["bitcode_base64"], validate=True)
    return IRModuleRow(
        source=record["source"],
        path=record["path"] or "",
        language=record["language"] or "unknown",
        structural_hash=record["structural_hash"],
        input_sha256=record["input_sha256"] or hashlib.sha256(bitcode).hexdigest(),
        input_format=record["input_format"],
        compile_command=record["compile_command"],
        project=record["project"],
        license=record["license"],
        text=record["text"],
        bitcode=bitcode,
        text_bytes=record["text_bytes"],
        bitcode_bytes=record["bitcode_bytes"],
        tokens=record["tokens"],
        functions=record["functions"],
        declarations=record["declarations"],
        globals=record["globals"],
        basic_blocks=record["basic_blocks"],
        instructions=record["instructions"],
        opcodes=record["opcodes"],
        provenance=record["provenance"],
    )


def _save_commits(store: Store, records: Sequence[dict[str, Any]]) -> list[tuple[str, int]]:
    commits = [ReleaseCommit(x["key"], x["path"], x["dedup_hash"], _commit(x)) for x in records]
    return [(r.status, r.item_id) for r in save_release_commits(store, commits)]


def _save_kernels(store: Store, records: Sequence[dict[str, Any]]) -> list[tuple[str, int]]:
    results = save_kernel_batch(store, [_kernel(x) for x in records])
    checks = [
        KernelCheck(r.item_id, x["verdict"], x["check_details"], x["features"])
        for x, r in zip(records, results, strict=True)
        if r.status == "stored" and x["filter_status"] == "accepted" and x["verdict"]
    ]
    if checks:
        save_checks(store, checks)
    return [(r.status, r.item_id) for r in results]


def _save_ir(store: Store, records: Sequence[dict[str, Any]]) -> list[tuple[str, int]]:
    results = save_ir_batch(store, [_ir(x) for x in records])
    return [(r.status, int(r.item_id or 0)) for r in results]


Saver = Callable[[Store, Sequence[dict[str, Any]]], list[tuple[str, int]]]

READERS: dict[str, Saver] = {
    "commit": _save_commits,
    "kernel": _save_kernels,
    "ir": _save_ir,
}


def _batches(path: Path) -> Iterator[tuple[int, list[dict[str, Any]]]]:
    """(first line number, records) in batches of :data:`BATCH`."""
    batch: list[dict[str, Any]] = []
    first = 1
    with open_lines(path) as fh:
        for number, raw in enumerate(fh, start=1):
            if not batch:
                first = number
            batch.append(json.loads(raw))
            if len(batch) >= BATCH:
                yield first, batch
                batch = []
    if batch:
        yield first, batch


def _save_batch(
    store: Store, save: Saver, path: Path, first: int, batch: list[dict[str, Any]]
) -> list[tuple[str, int]]:
    """Save a batch; a record the store refuses is named by its line (and nothing of the
    release stays stored: the caller's transaction is rolled back)."""
    try:
        with store.savepoint("batch"):  # a failed batch leaves nothing for the probes to meet
            return save(store, batch)
    except (DatabaseError, ValueError, OverflowError) as exc:  # Overflow: a huge integer
        # find the record: each one alone, inside a savepoint that is always undone
        for offset, record in enumerate(batch):
            with store.savepoint("probe", undo=True):
                try:
                    save(store, [record])
                except (DatabaseError, ValueError, OverflowError) as bad:
                    raise ReleaseImportError(
                        [f"{path}:{first + offset}: cannot be stored ({bad})"]
                    ) from bad
        raise ReleaseImportError([f"{path}:{first}-{first + len(batch) - 1}: {exc}"]) from exc


def _same(ours: str | None, theirs: str | None) -> bool | None:
    """Whether two identifiers agree (None: one is missing, so they say nothing)."""
    return None if not ours or not theirs else ours == theirs


def _check_known_commits(
    store: Store, path: Path, first: int, batch: list[dict[str, Any]], labels: _Labels
) -> None:
    """A record whose key the store holds for another change (another sha, else another
    diff) is named: its label and votes would land on the wrong commit."""
    stored = stored_commit_identities(store, [r["key"] for r in batch])
    for offset, record in enumerate(batch):
        known = stored.get(record["key"])
        if known is None:
            continue
        source, sha, diff_hash = known
        same = _same(sha, record["sha"])
        if same is None:
            same = _same(diff_hash, record["diff_hash"])
        if same is False:
            labels.problem(
                f"{path}:{first + offset}: commit {record['key']!r} is another change in this"
                f" store ({source} {sha or diff_hash}), not the release's ({record['source']}"
                f" {record['sha'] or record['diff_hash']}); its label would land on the wrong"
                " commit"
            )


def _predictions(
    store: Store, pairs: Sequence[tuple[dict[str, Any], int]]
) -> list[tuple[int, PredictionRow]]:
    """A labeler's label on each item, unless the item's latest from it already says so."""
    wanted = []
    for record, item_id in pairs:
        if record["label_source"] != "predicted" or not record["labeler"]:
            continue
        mine = (record["label"], record["confidence"])
        if latest_prediction(store, item_id, record["labeler"]) != mine:
            wanted.append((item_id, PredictionRow(record["labeler"], *mine)))
    return wanted


def _settling_order(record: dict[str, Any]) -> list[dict[str, Any]]:
    """A record's votes in the order to append them: the latest adjudication is the one in
    force, so an adjudication with the record's label comes after any other (a release
    written before adjudications were listed oldest first may name them in any order)."""
    return sorted(
        record["votes"], key=lambda v: v["role"] == ADJUDICATOR and v["label"] == record["label"]
    )


def _votes(
    store: Store,
    version: str,
    kind: str,
    pending: list[tuple[int, dict[str, Any]]],
    new_labels: list[str],
) -> int:
    """Append the votes that settled labels, in the release's set (created on first use).
    An annotator who already has a live vote on an item keeps it: importing an old
    release never overrides a vote changed since."""
    if not pending:
        return 0
    live = {
        (v.item_id, v.annotator, v.role)
        for v in live_votes_for_items(store, sorted({item for item, _ in pending}))
    }
    name = f"release-{version}-{kind}"
    set_row = get_set(store, name)
    if set_row is None:
        set_row = create_set(
            store,
            NewSet(
                name=name,
                kind=kind,
                labels=[*DEFAULT_LABELS[kind], *new_labels],
                params={"release": version},
                blind=False,
                votes_per_item=1,
                description=f"votes that settled the labels of release {version}",
            ),
        )
    elif new_labels:
        add_set_labels(store, set_row.id, new_labels)
    add_set_items(store, set_row.id, list(dict.fromkeys(item for item, _ in pending)))
    rows = [
        VoteRow(
            item_id=item,
            annotator=v["annotator"],
            label=v["label"],
            category=v["category"],
            role=v["role"],
            set_id=set_row.id,
            origin="release",
        )
        for item, v in pending
        if (item, v["annotator"], v["role"]) not in live
    ]
    append_votes(store, rows)
    return len(rows)


def import_release(
    store: Store,
    release: Path,
    progress: Callable[[str, int], None] | None = None,
    public_key: Path | None = None,
    allow_new_labels: bool = False,
    report: ValidationReport | None = None,
) -> ImportResult:
    """Validate the release (and, with ``public_key``, its signature by that key), then
    load it in one transaction (nothing on any error); ``progress(kind, n)`` hears of
    every batch stored. A label outside the release set's labels is an error naming
    FILE:LINE unless ``allow_new_labels``, which widens the set (``result.new_labels``).
    ``report``: what :func:`validate_release` just said of it (it is then not read twice)."""
    if report is None:
        report = validate_release(release, public_key)
    if not report.ok or report.manifest is None:
        raise ReleaseImportError(report.problems)
    manifest = report.manifest
    result = ImportResult(manifest["version"], signed_by=report.signed_by)
    with store.transaction():
        for name, entry in data_files(manifest):
            _import_file(store, release / name, entry["kind"], result, progress, allow_new_labels)
        save_release(
            store,
            ReleaseRow(
                version=manifest["version"],
                filters={**manifest["filters"], "imported_from": str(release)},
                counts=manifest["counts"],
                checksums={n: e["sha256"] for n, e in manifest["files"].items()},
                created_at=manifest["created_at"],
            ),
        )
    return result


def _release_labels(store: Store, version: str, kind: str, allow_new: bool) -> _Labels:
    existing = get_set(store, f"release-{version}-{kind}")
    labels = existing.labels if existing is not None else DEFAULT_LABELS[kind]
    return _Labels({*labels}, allow_new)


def _import_file(
    store: Store,
    path: Path,
    kind: str,
    result: ImportResult,
    progress: Callable[[str, int], None] | None,
    allow_new: bool,
) -> None:
    save = READERS.get(kind)
    if save is None:
        raise ReleaseImportError([f"{path}: Curator cannot import {kind!r}"])
    labels = _release_labels(store, result.version, kind, allow_new)
    outcome = result.outcomes.setdefault(kind, {})
    votes: list[tuple[int, dict[str, Any]]] = []
    for first, batch in _batches(path):
        for offset, record in enumerate(batch):
            labels.check(f"{path}:{first + offset}", record)
        if kind == "commit":
            _check_known_commits(store, path, first, batch, labels)
        if labels.problems:
            continue  # keep reading to name every bad line; nothing will be kept
        saved = _save_batch(store, save, path, first, batch)
        kept = []
        for record, (status, item_id) in zip(batch, saved, strict=True):
            outcome[status] = outcome.get(status, 0) + 1
            if status in ("stored", "known"):
                kept.append((record, item_id))
                votes += [(item_id, v) for v in _settling_order(record)]
        result.predictions += add_predictions(store, _predictions(store, kept))
        if progress is not None:
            progress(kind, len(batch))
    if labels.problems:
        raise ReleaseImportError(labels.problems)
    new = list(labels.new)
    set_name = f"release-{result.version}-{kind}"
    result.votes += _votes(store, result.version, kind, votes, new)
    if new:
        result.new_labels[set_name if votes else f"{kind} predictions"] = new
    if votes and set_name not in result.sets:
        result.sets.append(set_name)
