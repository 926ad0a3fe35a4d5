"""``curator predict``: pre-label stored commits with a trained or rule labeler, in
batches, skipping items that labeler has already labeled (a rerun resumes)."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.text import Text

from curator.cli_context import open_db
from curator.commands.options import DbOption
from curator.console import err, out
from curator.prediction import (
    CHUNK,
    PredictSummary,
    forced_input,
    input_warning,
    items_to_predict,
    predict_items,
    predict_items_on_cluster,
)
from curator.presentation.cli_output import EXIT_USAGE, fail, load_set, print_json, warn
from curator.presentation.progress import RateColumn
from curator.presentation.tables import table
from curator.reread import stale_inputs_warning
from engines.dask_cluster import Terminated, sigterm_as_interrupt
from engines.labelers.base import Labeler, input_fields
from engines.labelers.inputs import FIELDS
from engines.labelers.registry import (
    RULE_LABELERS,
    TRAINED_FAMILIES,
    LabelerError,
    LabelerSpec,
    load_labeler,
    resolve_labeler,
    spec_fields,
)
from store import Store
from store.labeling_inputs import commit_item_ids
from store.sets import set_item_ids

if TYPE_CHECKING:
    from rich.progress import Progress


def predict(
    labeler_name: Annotated[
        str,
        typer.Option("--labeler", help="e.g. student@latest, student@3, tfidf-lr@1, keyword@1."),
    ],
    set_name: Annotated[str | None, typer.Argument(help="Label this set's items.")] = None,
    unlabeled: Annotated[
        bool,
        typer.Option("--unlabeled", help="Label commits no one has voted on (instead of a set)."),
    ] = False,
    batch: Annotated[int, typer.Option("--batch", min=1, help="Texts per model batch.")] = 64,
    quantize: Annotated[
        bool, typer.Option("--quantize", help="Dynamic int8 (students, CPU).")
    ] = False,
    bf16: Annotated[
        bool | None,
        typer.Option(
            "--bf16/--fp32",
            help="bfloat16 or float32 weights (students; default: bf16 on a GPU, fp32 on a CPU).",
        ),
    ] = None,
    openvino: Annotated[
        bool,
        typer.Option("--openvino", help="OpenVINO CPU runtime (students; the fastest on CPUs)."),
    ] = False,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="Label at most N items.")
    ] = None,
    text: Annotated[
        str | None,
        typer.Option(
            "--input",
            help="Force the text read (message or model_input); default: what the model"
            " learned from. A warning says when they differ.",
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            min=1,
            help="Label on a local Dask cluster of N worker processes (this process writes).",
        ),
    ] = None,
    scheduler: Annotated[
        str | None,
        typer.Option(
            "--scheduler",
            help="Label on an existing Dask cluster, e.g. tcp://host:8786 (workers must see"
            " the model directory).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    db: DbOption = None,
) -> None:
    """Pre-label a set (or every unvoted commit, or all commits) with one labeler.

    In this process, or on Dask workers with ``--workers N`` or ``--scheduler ADDRESS``."""
    _check_options(set_name, unlabeled, scheduler, workers, text)
    _check_runtime(labeler_name, quantize, bf16, openvino)
    on_cluster = workers is not None or bool(scheduler)
    with open_db(db, create=False) as store:
        ids = _item_ids(store, set_name, unlabeled)
        options = (batch, quantize, bf16, openvino)
        try:
            # On a cluster the workers load the model; here its recorded inputs suffice.
            spec = resolve_labeler(store, labeler_name, *options) if on_cluster else None
            labeler = None if spec else load_labeler(store, labeler_name, *options)
        except (LabelerError, ValueError, OSError) as exc:
            fail(str(exc))
        assert spec is not None or labeler is not None  # fail() exits otherwise
        name = spec.name if spec is not None else labeler.name
        todo, done = items_to_predict(store, name, ids, limit)
        forced = _prepare_inputs(store, name, todo, text, spec, labeler)
        summary = PredictSummary(name, len(ids), done)
        progress = _progress(name)
        try:
            with progress if todo else contextlib.nullcontext():  # no empty bar for nothing
                task = progress.add_task("predict", total=len(todo))

                def advance(n: int) -> None:
                    progress.advance(task, n)

                if labeler is not None:
                    with sigterm_as_interrupt():  # SIGTERM stops it as Ctrl-C does
                        predict_items(store, labeler, todo, summary, advance, forced)
                elif spec is not None and todo:  # nothing to label, no cluster to start
                    where = (workers, scheduler)
                    lost = _on_cluster(store, spec, todo, summary, advance, text, where, forced)
                    if lost is not None:
                        _cluster_lost(summary, lost, as_json)
        except KeyboardInterrupt as stop:
            stored = items_to_predict(store, name, todo)[1]  # read back: what the store holds
            _stopped(isinstance(stop, Terminated), stored, len(todo), summary, as_json)
    data = summary.as_json()
    failure = summary.not_labeled()
    if as_json:
        print_json(data)
    elif not todo:
        out.print(Text(_nothing_to_label(name, set_name, unlabeled, len(ids), done)))
    elif summary.labels or failure is None:
        out.print(
            table(
                f"{name}: {data['predicted']} predicted, {done} already predicted (skipped)",
                ("label", "items"),
                sorted(summary.labels.items()),
            )
        )
    if failure is not None:
        fail(failure)


_STUDENT_RUNTIME = ("student", "ensemble")  # an ensemble passes them to its students


def _stopped(
    terminated: bool, stored: int, todo: int, summary: PredictSummary, as_json: bool
) -> NoReturn:
    """Say what an interrupted run stored (with --json, its summary too) and exit 130,
    or 143 on SIGTERM."""
    err.print(
        f"{'terminated (SIGTERM)' if terminated else 'interrupted'}: {stored:,} of"
        f" {todo:,} items were labeled and stored (each chunk of {CHUNK:,} is written"
        " whole); the same command labels the rest",
        markup=False,
        highlight=False,
    )
    if as_json:  # a script reading the summary gets what the store holds
        print_json(_interrupted_json(summary, stored))
    raise typer.Exit(128 + signal.SIGTERM if terminated else 130)


def _interrupted_json(summary: PredictSummary, stored: int) -> dict[str, object]:
    """The summary of an interrupted run: ``predicted`` is what the store holds (read
    back), and the per-label counts only when they add up to it (a chunk being written
    when the interrupt came is rolled back)."""
    data = {**summary.as_json(), "predicted": stored, "interrupted": True}
    if sum(summary.labels.values()) != stored:
        data.pop("labels")
    return data


def _prepare_inputs(
    store: Store,
    name: str,
    todo: list[int],
    text: str | None,
    spec: LabelerSpec | None,
    labeler: Labeler | None,
) -> str | None:
    """Warn when the text read differs from what the model learned or was made by an
    older Curator, point the labeler at a forced ``--input``, and return what
    :func:`forced_input` records with each prediction."""
    if (warning := input_warning(store, name, todo, text)) is not None:
        warn(warning)
    if text is not None and labeler is not None:
        labeler.input_field = text
    reads = spec_fields(spec, text) if spec is not None else input_fields(labeler)
    if "model_input" in reads and (stale := stale_inputs_warning(store, todo)) is not None:
        warn(stale)
    return forced_input(store, name, text)


def _check_options(
    set_name: str | None,
    unlabeled: bool,
    scheduler: str | None,
    workers: int | None,
    text: str | None,
) -> None:
    """Refuse options that contradict each other, before the store is opened."""
    if set_name and unlabeled:
        fail("give a SET or --unlabeled, not both", EXIT_USAGE)
    if scheduler is not None and not scheduler.strip():
        fail("--scheduler: the address is empty (e.g. tcp://HOST:8786)", EXIT_USAGE)
    if workers is not None and scheduler:
        fail("give --workers or --scheduler, not both", EXIT_USAGE)
    if text is not None and text not in FIELDS:
        fail(f"--input must be one of {', '.join(FIELDS)}, not {text!r}", EXIT_USAGE)


def _check_runtime(name: str, quantize: bool, bf16: bool | None, openvino: bool) -> None:
    """Refuse --quantize, --bf16/--fp32 and --openvino for a labeler they do not apply to
    (TF-IDF, the rules): it would run as it always does, and say nothing."""
    if sum((quantize, bool(bf16), openvino)) > 1:
        fail("give one of --quantize, --bf16 and --openvino", EXIT_USAGE)
    family = name.rpartition("@")[0]
    if family in _STUDENT_RUNTIME or family not in (*TRAINED_FAMILIES, *RULE_LABELERS):
        return  # an unknown name is named when it is resolved
    flags = (("--quantize", quantize), ("--openvino", openvino))
    given = [flag for flag, on in flags if on]
    if bf16 is not None:
        given.append("--bf16" if bf16 else "--fp32")
    if given:
        fail(f"{given[0]} is for students (and ensembles of them), not {name}", EXIT_USAGE)


def _on_cluster(
    store: Store,
    spec: LabelerSpec,
    todo: list[int],
    summary: PredictSummary,
    advance: Callable[[int], None],
    text: str | None,
    where: tuple[int | None, str | None],
    forced: str | None,
) -> str | None:
    """The labeling on Dask workers (``where``: --workers, --scheduler); lost workers and
    failed chunks are warned of (the command then exits non-zero: see
    :meth:`PredictSummary.not_labeled`). SIGTERM stops it as Ctrl-C does (the local
    workers are stopped with it). Returns the error when the cluster was lost mid-run
    (the chunks written before are kept), None when it ran to its end."""
    from engines.dask_cluster import ClusterError, dask_client

    workers, scheduler = where

    try:
        fields = spec_fields(spec, text)
    except (LabelerError, ValueError, OSError) as exc:
        fail(str(exc))
    started = False
    try:
        with (
            sigterm_as_interrupt(),
            dask_client(workers, scheduler, dashboard_address=None) as client,
        ):
            started = True
            predict_items_on_cluster(
                store,
                spec,
                fields,
                todo,
                summary,
                client,
                advance,
                text,
                lambda address: warn(f"lost worker {address}; its chunks run again elsewhere"),
                forced=forced,
            )
    except ClusterError as exc:
        if not started:
            fail(str(exc))
        return str(exc)
    assert summary.cluster is not None
    for line in summary.cluster.failed:
        warn(f"chunk not labeled: {line}")
    return None


def _cluster_lost(summary: PredictSummary, error: str, as_json: bool) -> NoReturn:
    """Exit 1 on a cluster lost mid-run, with one line and, for --json, the summary of
    what was labeled and stored before (under ``error``, the line)."""
    if as_json:
        print_json({**summary.as_json(), "error": error})
    fail(error)


def _nothing_to_label(
    name: str, set_name: str | None, unlabeled: bool, items: int, done: int
) -> str:
    """One line saying why a run labeled nothing (rather than an empty table)."""
    if items:
        return f"{name}: nothing to label: {done:,} of the {items:,} items already carry its label"
    if set_name:
        return f"{name}: nothing to label: set {set_name!r} holds no items"
    if unlabeled:
        return (
            f"{name}: nothing to label: every stored commit has votes (--unlabeled takes"
            " the commits no one voted on)"
        )
    return f"{name}: nothing to label: no commit is stored yet"


def _item_ids(store: Store, set_name: str | None, unlabeled: bool) -> list[int]:
    if not set_name:
        return commit_item_ids(store, unvoted_only=unlabeled)
    s = load_set(store, set_name)
    if s.kind != "commit":
        fail(f"set {s.name!r} holds {s.kind} items; predict labels commits")
    return set_item_ids(store, s.id)


def _progress(name: str) -> Progress:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn(name, markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn("items"),
        TimeElapsedColumn(),
        console=err,
    )
