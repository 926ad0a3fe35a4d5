"""``curator mine kernels`` and ``curator check kernels``: OpenCL kernels in and judged."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import typer
from rich.table import Table
from rich.text import Text

from curator.commands.options import DbOption, open_db
from curator.commands.progress import SourceReporter, source_progress
from curator.console import err, out
from curator.safe_text import labelled, one_line
from engines.kernels.compile import MIN_INSTRUCTIONS
from engines.kernels.pipeline import CheckSettings, check_kernels, mine_kernels
from store.kernel_records import KernelCheck, StoredKernel
from store.kernels import kernels_in_set, unchecked_kernels
from store.sets import get_set

check_app = typer.Typer(help="Run dynamic checks on stored items.", no_args_is_help=True)

VERDICT_STYLES = {
    "useful": "green",
    "no-output": "yellow",
    "input-insensitive": "yellow",
    "non-deterministic": "magenta",
    "timeout": "red",
    "crash": "red",
    "compile-error": "red",
    "too-few-instructions": "yellow",
}


def mine_kernels_command(
    sources: list[str] = typer.Argument(
        ..., help="Files, directories or git URLs holding OpenCL code.", show_default=False
    ),
    min_instructions: int = typer.Option(
        MIN_INSTRUCTIONS, "--min-instructions", min=0, help="Refuse kernels with fewer."
    ),
    clone_dir: Path | None = typer.Option(
        None, "--clone-dir", help="Where URLs are cloned (default: ~/.cache/curator/repos)."
    ),
    db: Path | None = DbOption,
) -> None:
    """Scrape OpenCL kernels, filter, normalise, featurise and store them."""
    store = open_db(db)
    progress = source_progress("files")
    reporter = SourceReporter(progress)
    try:
        with progress:
            summaries = mine_kernels(store, sources, min_instructions, reporter, clone_dir)
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/]: every saved batch is kept; run again to resume")
        raise typer.Exit(130) from None
    finally:
        store.close()
    table = Table(title="Kernel mining summary", title_justify="left")
    table.add_column("source", overflow="fold")
    for name in ("files", "kernels", "refused", "duplicates", "stored"):
        table.add_column(name, justify="right")
    for s in summaries:
        if s.failed:
            table.add_row(one_line(s.source, 60), "-", "-", "-", "-", Text("failed", "red"))
            continue
        table.add_row(
            one_line(s.source, 60),
            str(s.files),
            str(s.seen),
            str(sum(s.filtered.values())),
            str(s.duplicates),
            str(s.stored),
        )
    out.print(table)
    refused: Counter[str] = Counter()
    for s in summaries:
        refused.update(s.filtered)
    if refused:
        out.print("refused by reason: " + ", ".join(f"{k} {v}" for k, v in sorted(refused.items())))
    if any(s.failed or s.unreadable for s in summaries):
        raise typer.Exit(1)


@check_app.command("kernels")
def check_kernels_command(
    set_name: str | None = typer.Argument(
        None, metavar="[SET]", help="Check the kernels of this set.", show_default=False
    ),
    unchecked: bool = typer.Option(
        False, "--unchecked", help="Check every accepted kernel not checked yet."
    ),
    global_size: int = typer.Option(1024, "--global-size", min=1, help="Work-items per run."),
    local_size: int = typer.Option(32, "--local-size", min=1, help="Work-group size wanted."),
    timeout: float = typer.Option(5.0, "--timeout", min=0.1, help="Seconds allowed per run."),
    as_json: bool = typer.Option(False, "--json", help="One JSON record per kernel."),
    db: Path | None = DbOption,
) -> None:
    """Run each kernel four times (A1, B1, A2, B2) in a child process and record a verdict."""
    if (set_name is None) == (not unchecked):
        err.print(labelled("error", "red", "give a SET or --unchecked (one of them)"))
        raise typer.Exit(2)
    store = open_db(db)
    try:
        if set_name is not None:
            if get_set(store, set_name) is None:
                err.print(labelled("error", "red", "no such set: ", one_line(set_name)))
                raise typer.Exit(2)
            kernels = kernels_in_set(store, set_name)
        else:
            kernels = unchecked_kernels(store)
        settings = CheckSettings(global_size, local_size, timeout)
        table = Table(title="Kernel checks", title_justify="left")
        for name in ("item", "file", "kernel", "verdict"):
            table.add_column(name, justify="right" if name == "item" else "left")
        progress = source_progress()

        def record(result: KernelCheck, kernel: StoredKernel) -> None:
            if as_json:
                line = {
                    "item_id": kernel.item_id,
                    "source_file": kernel.source_file,
                    "kernel_name": kernel.kernel_name,
                    "verdict": result.verdict,
                }
                out.file.write(json.dumps(line, ensure_ascii=True) + "\n")
                out.file.flush()
            else:
                table.add_row(
                    str(kernel.item_id),
                    one_line(kernel.source_file, 60),
                    one_line(kernel.kernel_name, 40),
                    Text(result.verdict, VERDICT_STYLES.get(result.verdict, "")),
                )
            progress.advance(task)

        with progress:
            task = progress.add_task("checking kernels", total=max(len(kernels), 1))
            results = check_kernels(store, kernels, settings, record)
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/]: checks finished so far are saved")
        raise typer.Exit(130) from None
    finally:
        store.close()
    if not as_json:
        out.print(table)
        counts = Counter(r.verdict for r in results)
        out.print(
            f"{len(results)} kernels: "
            + (", ".join(f"{v} {n}" for v, n in sorted(counts.items())) or "nothing to check")
        )
