"""``curator check kernels``: run stored OpenCL kernels in a child process and judge them."""

from __future__ import annotations

import json
from collections import Counter
from typing import Annotated

import typer
from rich.progress import TaskID
from rich.table import Table
from rich.text import Text

from curator.cli_context import kernel_worker, open_db, report_sandbox
from curator.commands.options import DbOption, finite_with
from curator.console import err, out
from curator.presentation.cli_output import fail, warn
from curator.presentation.progress import source_progress
from curator.presentation.text import labelled, one_line
from engines.kernels.payload import DEFAULT_POLICIES
from engines.kernels.pipeline import CheckSettings, check_kernels
from store.kernel_records import KernelCheck, StoredKernel
from store.kernels import kernels_in_set, unchecked_kernels
from store.sets import get_set

_POLICIES = {"all": DEFAULT_POLICIES, "clgen": ("clgen",)}
check_app = typer.Typer(help="Run dynamic checks on stored items.", no_args_is_help=True)

VERDICT_STYLES = {
    "useful": "green",
    "no-output": "yellow",
    "input-insensitive": "yellow",
    "non-deterministic": "magenta",
    "timeout": "red",
    "crash": "red",
    "out-of-bounds": "red",
    "compile-error": "red",
    "too-few-instructions": "yellow",
}


MAX_GLOBAL_SIZE = 1 << 24
"""Far past any useful run; a size whose buffers cannot be allocated at all records every
kernel as a crash."""


@check_app.command("kernels")
def check_kernels_command(
    set_name: Annotated[
        str | None,
        typer.Argument(metavar="[SET]", help="Check the kernels of this set.", show_default=False),
    ] = None,
    unchecked: Annotated[
        bool, typer.Option("--unchecked", help="Check every accepted kernel not checked yet.")
    ] = False,
    global_size: Annotated[
        int,
        typer.Option(
            "--global-size",
            min=1,
            max=MAX_GLOBAL_SIZE,
            help="Work-items per run.",
        ),
    ] = 1024,
    local_size: Annotated[
        int, typer.Option("--local-size", min=1, help="Work-group size wanted.")
    ] = 32,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            min=0.1,
            max=3600,
            callback=finite_with("seconds"),
            help="Seconds allowed per run.",
        ),
    ] = 5.0,
    payload: Annotated[
        str, typer.Option("--payload", help="all: the payload policies in order; clgen: CLgen's.")
    ] = "all",
    as_json: Annotated[bool, typer.Option("--json", help="One JSON record per kernel.")] = False,
    db: DbOption = None,
) -> None:
    """Run each kernel four times (A1, B1, A2, B2) in a child process and record a verdict."""
    if payload not in ("all", "clgen"):
        raise typer.BadParameter(f"{payload!r}: choose all or clgen", param_hint="--payload")
    if (set_name is None) == (not unchecked):
        err.print(labelled("error", "red", "give a SET or --unchecked (one of them)"))
        raise typer.Exit(2)
    store = open_db(db, create=False)
    try:
        if set_name is not None:
            found = get_set(store, set_name)
            if found is None:
                err.print(labelled("error", "red", one_line(f"no such set: {set_name!r}")))
                raise typer.Exit(2)
            if found.kind != "kernel":
                err.print(
                    labelled(
                        "error",
                        "red",
                        "set ",
                        one_line(set_name),
                        f" holds {found.kind} items; check kernels runs a set of kernels",
                    )
                )
                raise typer.Exit(2)
            kernels = kernels_in_set(store, set_name)
        else:
            kernels = unchecked_kernels(store)
        view = _CheckView(as_json)
        with view.progress, kernel_worker() as worker:
            if kernels:
                report_sandbox(worker)
            view.start(len(kernels))
            results = check_kernels(
                store,
                kernels,
                CheckSettings(global_size, local_size, timeout, _POLICIES[payload]),
                view.record,
                worker,
                problem=view.problem,
            )
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/]: checks finished so far are saved")
        raise typer.Exit(130) from None
    finally:
        store.close()
    if not as_json:
        out.print(view.table)
        counts = Counter(r.verdict for r in results)
        out.print(
            f"{len(results)} kernels: "
            + (", ".join(f"{v} {n}" for v, n in sorted(counts.items())) or "nothing to check")
        )
    if view.failed:
        fail(f"{view.failed} kernel(s) not checked (named above); the others are saved")


class _CheckView:
    """A progress bar, and a JSON line or a table row per kernel checked."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.table = Table(title="Kernel checks", title_justify="left")
        for name in ("item", "file", "kernel", "verdict", "payload"):
            self.table.add_column(name, justify="right" if name == "item" else "left")
        self.progress = source_progress()
        self.task: TaskID | None = None
        self.failed = 0

    def problem(self, text: str) -> None:
        """A kernel left unchecked by a fault of Curator's: one warning line, counted."""
        self.failed += 1
        warn(text, self.progress.console)
        if self.task is not None:
            self.progress.advance(self.task)

    def start(self, total: int) -> None:
        self.task = self.progress.add_task("checking kernels", total=max(total, 1))

    def record(self, result: KernelCheck, kernel: StoredKernel) -> None:
        if self.as_json:
            line = {
                "item_id": kernel.item_id,
                "source_file": kernel.source_file,
                "kernel_name": kernel.kernel_name,
                "verdict": result.verdict,
                "payload_policy": result.details.get("payload_policy"),
            }
            out.file.write(json.dumps(line, ensure_ascii=True) + "\n")
            out.file.flush()
        else:
            self.table.add_row(
                str(kernel.item_id),
                one_line(kernel.source_file, 60),
                one_line(kernel.kernel_name, 40),
                Text(result.verdict, VERDICT_STYLES.get(result.verdict, "")),
                str(result.details.get("payload_policy", "-")),
            )
        if self.task is not None:
            self.progress.advance(self.task)
