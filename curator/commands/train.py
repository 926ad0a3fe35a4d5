"""``curator train``: distil a student (or fit a TF-IDF baseline) from teacher labels
and/or human votes, score it on the dev and eval sets, register it as ``KIND@N``."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from curator.adaptation import CurveRequest
from curator.cli_context import open_db
from curator.commands.options import DbOption
from curator.commands.train_curve import parse_orders, parse_sizes, run_curve, warn_notes
from curator.console import err, out
from curator.presentation.cli_output import EXIT_USAGE, fail, number, print_json, table
from curator.training import KINDS, TrainingRefused, TrainOutcome, TrainRequest, run_training
from engines.labelers.student import DEFAULT_MAX_LENGTH, TrainConfig, TrainProgress


def _progress_bar() -> Progress:
    return Progress(
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[status]}", markup=False),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err,
    )


class _BarReporter:
    """Turns training reports into one rich bar: epoch, step, loss, dev F1."""

    def __init__(self) -> None:
        self.progress = _progress_bar()
        self.task: TaskID | None = None

    def __call__(self, report: TrainProgress) -> None:
        if self.task is None:  # the bar appears once training starts, not before checks
            self.progress.start()
            self.task = self.progress.add_task("training", total=report.steps, status="")
        loss = "-" if report.loss is None else f"{report.loss:.4f}"
        f1 = "-" if report.dev_f1 is None else f"{report.dev_f1:.3f}"
        phase = " (scoring dev)" if report.phase == "dev" else ""
        self.progress.update(
            self.task,
            total=report.steps,
            completed=report.step,
            description=f"epoch {report.epoch}/{report.epochs}{phase}",
            status=f"loss {loss}  dev F1 {f1}",
        )


def _summary(outcome: TrainOutcome) -> None:
    assert outcome.model is not None
    model = outcome.model
    out.print(Text(f"registered {model.name} in {model.path}"))
    rows = []
    for part in ("dev", "eval", "out_of_fold"):
        scores: dict[str, Any] | None = outcome.metrics.get(part)
        if not scores:
            continue
        perf = scores["per_class"]["perf"]
        rows.append(
            (
                scores.get("set", "training set") if part != "out_of_fold" else "train (5-fold)",
                part,
                scores["items_predicted"],
                number(perf["precision"]),
                number(perf["recall"]),
                number(perf["f1"]),
                number(scores["accuracy"]),
            )
        )
    if rows:
        header = ("set", "role", "items", "P(perf)", "R(perf)", "F1(perf)", "accuracy")
        out.print(table(f"{model.name} scores", header, rows))
    counts = outcome.counts
    out.print(f"training examples: {counts.get('train_total')} {counts.get('train')}")
    replay = counts.get("replay")
    if replay:
        out.print(Text(f"warm start from {replay['from']}: {replay['mixed']} replayed examples"))


def _train_with_bar(db: Path | None, request: TrainRequest) -> TrainOutcome:
    cancel = threading.Event()
    with open_db(db) as store:
        try:
            reporter = _BarReporter()
            try:
                outcome = run_training(store, request, reporter, cancel)
            finally:
                if reporter.task is not None:
                    reporter.progress.stop()
        except TrainingRefused as exc:
            fail(str(exc))
        except (OSError, ValueError) as exc:  # an unreadable base model, a full disk...
            fail(f"training failed: {type(exc).__name__}: {exc}")
        except KeyboardInterrupt:
            cancel.set()
            err.print("[yellow]interrupted[/]: nothing was registered")
            raise typer.Exit(130) from None
    if outcome.model is None:
        fail("training was cancelled; nothing was registered")
    return outcome


def _check_options(kind: str, text: str, base: Path | None) -> None:
    if kind not in KINDS:
        fail(f"--kind must be one of {', '.join(KINDS)}, not {kind!r}", EXIT_USAGE)
    if text not in ("model_input", "message"):
        fail(f"--input must be model_input or message, not {text!r}", EXIT_USAGE)
    if base is not None and not (base / "config.json").is_file():
        fail(f"--base {base}: not a Hugging Face model directory (no config.json)")


def train(
    teacher: Annotated[
        str | None,
        typer.Option("--from", help="Teacher labels to learn from, e.g. teacher:gpt-oss:20b."),
    ] = None,
    tau: Annotated[
        float,
        typer.Option(
            "--tau", min=0, max=100, help="Keep teacher labels with confidence >= tau (0-100)."
        ),
    ] = 85.0,
    votes: Annotated[
        list[str] | None,
        typer.Option(
            "--votes", help="Sets whose adjudicated human labels to learn from (repeatable)."
        ),
    ] = None,
    kind: Annotated[
        str, typer.Option("--kind", help="student, tfidf-lr or tfidf-svm.")
    ] = "student",
    base: Annotated[
        Path | None,
        typer.Option(
            "--base", help="Local Hugging Face model directory (default: packaged MiniLM)."
        ),
    ] = None,
    epochs: Annotated[int, typer.Option("--epochs", min=1)] = 3,
    batch: Annotated[int, typer.Option("--batch", min=1, help="Training batch size.")] = 32,
    lr: Annotated[float, typer.Option("--lr", min=0.0, help="AdamW learning rate.")] = 2e-5,
    dev: Annotated[
        str | None, typer.Option("--dev", help="Set for early stopping (dev F1).")
    ] = None,
    eval_set: Annotated[
        str | None, typer.Option("--eval", help="Set to report final scores on.")
    ] = None,
    soft: Annotated[
        bool,
        typer.Option(
            "--soft", help="Learn the teacher's confidence (soft labels), not just its label."
        ),
    ] = False,
    max_length: Annotated[
        int, typer.Option("--max-length", min=8, help="Tokens the student reads per item.")
    ] = DEFAULT_MAX_LENGTH,
    layers: Annotated[
        int | None,
        typer.Option(
            "--layers",
            min=1,
            help="Keep N of the base's transformer layers (evenly spaced): a smaller, faster"
            " student (3 of MiniLM's 6 run twice as fast).",
        ),
    ] = None,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    patience: Annotated[
        int, typer.Option("--patience", min=1, help="Epochs without dev gain.")
    ] = 1,
    max_steps: Annotated[
        int | None, typer.Option("--max-steps", min=1, help="Stop after N steps.")
    ] = None,
    text: Annotated[
        str, typer.Option("--input", help="Text to learn from: model_input or message.")
    ] = "model_input",
    exclude_overlap: Annotated[
        bool,
        typer.Option("--exclude-overlap", help="Drop training items from dev/eval repositories."),
    ] = False,
    rule: Annotated[
        str, typer.Option("--rule", help="How votes settle: majority or unanimous.")
    ] = "majority",
    from_model: Annotated[
        str | None,
        typer.Option(
            "--from-model",
            help="Warm-start from a registered student (student@N, @latest, @current)"
            " instead of the packaged base.",
        ),
    ] = None,
    replay: Annotated[
        float,
        typer.Option(
            "--replay",
            min=0.0,
            help="With --from-model: old examples (its replay sample) mixed in per new one.",
        ),
    ] = 0.5,
    curve: Annotated[
        str | None,
        typer.Option(
            "--curve",
            help="Learning curve: warm-started runs on the first N of the --votes, e.g."
            " 50,100,200,400, scored on --eval; then the full run is registered.",
        ),
    ] = None,
    order: Annotated[
        str,
        typer.Option("--order", help="Curve order of the votes: random, uncertainty or both."),
    ] = "both",
    curve_only: Annotated[
        bool, typer.Option("--curve-only", help="Measure the curve; register nothing.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON.")] = False,
    db: DbOption = None,
) -> None:
    """Train a labeler; at least one source: --from teacher:MODEL and/or --votes SET."""
    _check_options(kind, text, base)
    config = TrainConfig(
        base=str(base.resolve()) if base else None,
        epochs=epochs,
        batch_size=batch,
        lr=lr,
        max_length=max_length,
        seed=seed,
        soft=soft,
        patience=patience,
        max_steps=max_steps,
        input_field=text,
        layers=layers,
    )
    request = TrainRequest(
        kind=kind,
        teacher=teacher,
        tau=tau,
        vote_sets=tuple(votes or ()),
        dev_set=dev,
        eval_set=eval_set,
        rule=rule,
        exclude_overlap=exclude_overlap,
        config=config,
        from_model=from_model,
        replay=replay,
    )
    if curve is not None:
        sizes, orders = parse_sizes(curve), parse_orders(order)
        run_curve(db, CurveRequest(request, sizes, orders, curve_only), as_json)
        return
    outcome = _train_with_bar(db, request)
    warn_notes(outcome.notes)
    if as_json:
        print_json(
            {
                "model": outcome.model.name,
                "path": outcome.model.path,
                "counts": outcome.counts,
                "metrics": outcome.metrics,
            }
        )
    else:
        _summary(outcome)
