"""``curator predict``: pre-label stored commits with a trained or rule labeler, in
batches, skipping items that labeler has already labeled (a rerun resumes)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import typer

from curator.commands.options import DbOption, open_db
from curator.commands.output import EXIT_USAGE, fail, load_set, print_json, table
from curator.commands.progress import RateColumn
from curator.console import err, out
from engines.labelers.registry import LabelerError, load_labeler
from store.labeling_inputs import commit_item_ids
from store.predictions import add_predictions, predicted_item_ids
from store.records import PredictionRow
from store.sets import set_item_ids
from store.teaching import commit_texts

CHUNK = 512
"""Items labeled and written per transaction: an interrupt loses at most one chunk."""


def predict(
    set_name: str | None = typer.Argument(None, help="Label this set's items."),
    labeler_name: str = typer.Option(
        ..., "--labeler", help="e.g. student@latest, student@3, tfidf-lr@1, keyword@1."
    ),
    unlabeled: bool = typer.Option(
        False, "--unlabeled", help="Label commits no one has voted on (instead of a set)."
    ),
    batch: int = typer.Option(64, "--batch", min=1, help="Texts per model batch."),
    quantize: bool = typer.Option(False, "--quantize", help="Dynamic int8 (students, CPU)."),
    bf16: bool = typer.Option(False, "--bf16", help="bfloat16 weights (students; AMX CPUs, GPUs)."),
    openvino: bool = typer.Option(
        False, "--openvino", help="OpenVINO CPU runtime (students; the fastest on CPUs)."
    ),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Label at most N items."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
    db: Path | None = DbOption,
) -> None:
    """Pre-label a set (or every unvoted commit, or all commits) with one labeler."""
    if set_name and unlabeled:
        fail("give a SET or --unlabeled, not both", EXIT_USAGE)
    if sum((quantize, bf16, openvino)) > 1:
        fail("give one of --quantize, --bf16 and --openvino", EXIT_USAGE)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with open_db(db) as store:
        if set_name:
            s = load_set(store, set_name)
            if s.kind != "commit":
                fail(f"set {s.name!r} holds {s.kind} items; predict labels commits")
            ids = set_item_ids(store, s.id)
        else:
            ids = commit_item_ids(store, unvoted_only=unlabeled)
        try:
            labeler = load_labeler(
                store,
                labeler_name,
                batch_size=batch,
                quantized=quantize,
                bf16=bf16,
                openvino=openvino,
            )
        except (LabelerError, ValueError, OSError) as exc:
            fail(str(exc))
        done = predicted_item_ids(store, labeler.name, ids)
        todo = [i for i in ids if i not in done]
        if limit is not None:
            todo = todo[:limit]
        labels: Counter[str] = Counter()
        progress = Progress(
            TextColumn(labeler.name, markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            RateColumn("items"),
            TimeElapsedColumn(),
            console=err,
        )
        with progress:
            task = progress.add_task("predict", total=len(todo))
            for start in range(0, len(todo), CHUNK):
                chunk = todo[start : start + CHUNK]
                texts = commit_texts(store, chunk, labeler.input_field)
                present = [i for i in chunk if i in texts]
                verdicts = labeler.predict([texts[i] for i in present])
                rows = [
                    (i, PredictionRow(labeler.name, v.label, v.score, v.details))
                    for i, v in zip(present, verdicts, strict=True)
                ]
                add_predictions(store, rows)
                labels.update(v.label for v in verdicts)
                progress.advance(task, len(chunk))
    summary = {
        "labeler": labeler.name,
        "items": len(ids),
        "already_predicted": len(done),
        "predicted": sum(labels.values()),
        "labels": dict(sorted(labels.items())),
    }
    if as_json:
        print_json(summary)
        return
    rows = [(label, n) for label, n in sorted(labels.items())]
    out.print(
        table(
            f"{labeler.name}: {summary['predicted']} predicted,"
            f" {len(done)} already predicted (skipped)",
            ("label", "items"),
            rows,
        )
    )
