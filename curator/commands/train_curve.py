"""``curator train --curve``: the learning curve of a warm start on a new source's votes
(see :mod:`curator.adaptation`), shown as a table or JSON."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import typer
from rich.progress import (
    TaskID,
)
from rich.table import Table
from rich.text import Text

from curator.adaptation import (
    ORDERS,
    CurveOutcome,
    CurvePoint,
    CurveProgress,
    CurveRequest,
    run_learning_curve,
)
from curator.cli_context import open_db
from curator.console import err, out
from curator.presentation.cli_output import EXIT_USAGE, fail, number, print_json, table, warn
from curator.presentation.progress import training_bar
from curator.training import TrainingRefused
from engines.labelers.model_files import ModelFileError


def parse_sizes(text: str) -> tuple[int, ...]:
    """``50,100,200`` -> (50, 100, 200); a one-line usage error otherwise."""
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not parts or not all(part.isdecimal() and int(part) > 0 for part in parts):
        fail(f"--curve takes positive sizes, e.g. 50,100,200,400, not {text!r}", EXIT_USAGE)
    return tuple(int(part) for part in parts)


def parse_orders(text: str) -> tuple[str, ...]:
    if text == "both":
        return ORDERS
    if text not in ORDERS:
        fail(f"--order takes random, uncertainty or both, not {text!r}", EXIT_USAGE)
    return (text,)


class _CurveBar:
    """One rich bar per curve run: which run, epoch, step and loss."""

    def __init__(self) -> None:
        self.progress = training_bar()
        self.task: TaskID | None = None

    def __call__(self, report: CurveProgress) -> None:
        if self.task is None:
            self.progress.start()
            self.task = self.progress.add_task("curve", total=None, status="")
        r = report.train
        if r is None:
            self.progress.update(self.task, description=report.label, status="")
            return
        self.progress.update(
            self.task,
            total=r.steps,
            completed=r.step,
            description=f"{report.label} epoch {r.epoch}/{r.epochs}",
            status=f"loss {number(r.loss, 4)}",
        )

    def stop(self) -> None:
        if self.task is not None:
            self.progress.stop()


def curve_table(points: Sequence[CurvePoint], title: str) -> Table:
    rows = [
        (p.n, p.order, number(p.f1), number(p.precision), number(p.recall), p.replayed)
        for p in points
    ]
    return table(title, ("n", "order", "F1(perf)", "P(perf)", "R(perf)", "replayed"), rows)


def _show(outcome: CurveOutcome, as_json: bool) -> None:
    assert outcome.curve is not None
    model = outcome.model
    if as_json:
        final = outcome.final
        print_json(
            {
                "learning_curve": outcome.curve,
                "model": model.name if model else None,
                "path": model.path if model else None,
                "metrics": final.metrics if final else None,
                "notes": outcome.notes,
            }
        )
        return
    curve = outcome.curve
    title = f"learning curve from {curve['from_model']} on {curve['eval']} (F1 of perf)"
    out.print(curve_table(outcome.points, title))
    if model is not None:
        out.print(Text(f"registered {model.name} in {model.path} (learning_curve.json)"))
    else:
        out.print("--curve-only: nothing was registered")


def run_curve(db: Path | None, request: CurveRequest, as_json: bool) -> None:
    """Run the curve with a progress bar, then show it; one-line errors."""
    cancel = threading.Event()
    with open_db(db, create=False) as store:
        bar = _CurveBar()
        try:
            try:
                outcome = run_learning_curve(store, request, bar, cancel)
            finally:
                bar.stop()
        except (TrainingRefused, ModelFileError) as exc:
            fail(str(exc))
        except (OSError, ValueError) as exc:
            fail(f"training failed: {type(exc).__name__}: {exc}")
        except KeyboardInterrupt:
            cancel.set()
            err.print("[yellow]interrupted[/]: nothing was registered")
            raise typer.Exit(130) from None
    if outcome.cancelled or outcome.curve is None:
        fail("the learning curve was cancelled; nothing was registered")
    for note in outcome.notes:
        warn(note)
    _show(outcome, as_json)
