"""The work of ``curator import|export prodigy|label-studio``: read another tool's file
into a set, or write a set's items and live votes in that tool's format (atomically)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from annotation.formats import label_studio, prodigy
from annotation.formats.common import TaskFile, TaskImport, import_tasks, set_for_export
from engines.commits.representation import model_input
from engines.files import is_stream, write_text_atomically
from store import Store

FORMATS = ("prodigy", "label-studio")


class InteropUsageError(ValueError):
    """An export the set cannot take (e.g. binary tasks for a set of three labels)."""


def import_file(
    store: Store,
    fmt: str,
    path: Path,
    set_name: str,
    kind: str = "commit",
    labels: list[str] | None = None,
    votes_per_item: int = 2,
) -> TaskImport:
    """Read ``path`` in ``fmt`` and store its items and votes in ``set_name``; all or
    nothing (``FileImportError`` lists every bad line or task at once). The file is read
    twice as a stream, so memory does not grow with it."""
    source: TaskFile = (
        prodigy.ProdigyFile(path, set_name)
        if fmt == "prodigy"
        else label_studio.LabelStudioFile(path)
    )
    return import_tasks(
        store,
        source,
        origin=path.name,
        set_name=set_name,
        kind=kind,
        labels=labels,
        votes_per_item=votes_per_item,
        model_input=model_input,
    )


def export_targets(fmt: str, out: Path) -> list[Path]:
    """The files an export to ``out`` writes: Label Studio's labeling config goes beside
    its tasks (``NAME.label-config.xml``)."""
    if fmt == "prodigy" or is_stream(out):
        return [out]
    return [out, out.with_name(f"{out.stem}.label-config.xml")]


def check_targets(paths: list[Path], database: Path, force: bool) -> None:
    """Refuse, before anything is written, a target that is the database, a folder, or
    (without ``force``) an existing file."""
    for path in paths:
        if path.exists() and path.resolve() == database.resolve():
            raise InteropUsageError(f"{path} is the database; choose another --out")
        if path.is_dir():
            raise InteropUsageError(f"{path} is a folder; --out names the file to write")
        if path.exists() and not force and not is_stream(path):
            raise InteropUsageError(f"{path} already exists (use --force to replace it)")


def export_file(
    store: Store,
    fmt: str,
    set_name: str,
    out: Path,
    binary: bool = False,
    force: bool = False,
    write: Callable[[Path, str], None] = write_text_atomically,
) -> tuple[int, int, list[Path]]:
    """Write the set for ``fmt`` (the tasks through ``write``); returns (items, votes,
    files written). Label Studio gets its labeling config beside the tasks
    (``NAME.label-config.xml``), unless ``out`` is a stream (:func:`is_stream`: standard
    output, a device, a FIFO). An existing file is replaced only with ``force``; the
    database and folders never are."""
    targets = export_targets(fmt, out)
    check_targets(targets, store.path, force)
    target, items = set_for_export(store, set_name)
    votes = sum(len(item.votes) for item in items)
    if fmt == "prodigy":
        if binary and len(target.labels) != 2:
            raise InteropUsageError(
                f"binary Prodigy tasks need a set of two labels; {set_name!r} has"
                f" {', '.join(target.labels)}"
            )
        lines = prodigy.task_lines(target, items, binary=binary)
        write(out, "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
        return len(items), votes, [out]
    tasks = label_studio.export_tasks(target, items)
    write(out, json.dumps(tasks, indent=2, ensure_ascii=False) + "\n")
    for config in targets[1:]:  # none into a stream: is_stream
        write_text_atomically(config, label_studio.labeling_config(target))
    return len(items), votes, targets
