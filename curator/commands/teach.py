"""``curator teach``: ask an LLM teacher to label (or categorise) stored commits."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from annotation.labels import TAXONOMY, slug
from curator.cli_context import open_db, settings
from curator.commands.options import DbOption, finite
from curator.console import err, out
from curator.presentation.cli_output import EXIT_USAGE, fail, load_set, print_json
from curator.presentation.progress import SourceReporter, source_progress
from curator.presentation.tables import table
from curator.presentation.text import one_line
from engines.labelers.registry import LabelerError, resolve_model
from engines.labelers.teacher import APIS, TASKS, Teacher, TeacherConfig
from engines.labelers.teacher.client import MAX_CONCURRENCY
from engines.labelers.teacher.prompt import PROMPT_VERSION
from engines.labelers.teacher.run import CONFIDENT, TeachSummary, teach
from engines.labelers.teacher.window import load_window
from engines.reporting import FinishedSource
from store import Store
from store.predictions import below_version_item_ids
from store.sets import set_item_ids
from store.teaching import unvoted_commit_ids


def _choice(allowed: tuple[str, ...]):  # type: ignore[no-untyped-def]
    def check(value: str) -> str:
        if value not in allowed:
            raise typer.BadParameter(f"{value!r}: use {' or '.join(allowed)}")
        return value

    return check


class TeachProgress(SourceReporter):
    """The teaching bar. It counts answers as they come (failed ones too); when the run
    gives up (the teacher failed every first request) the bar ends at the answers
    stored, the items actually labeled, not at the items attempted or selected."""

    def source_finished(self, summary: FinishedSource) -> None:
        super().source_finished(summary)
        task = self.tasks.get(summary.source)
        if summary.failed and isinstance(summary, TeachSummary) and task is not None:
            labeled = f"{one_line(summary.source, 50).plain}: gave up, labeled"
            self.progress.update(task, completed=summary.stored, description=labeled)
            self._redraw(now=True)


def taxonomy_choices() -> tuple[tuple[str, str], ...]:
    """Every category slug of the annotation taxonomy with a readable name."""
    pairs: list[tuple[str, str]] = []
    for top, subs in TAXONOMY.items():
        pairs.append((slug(top), top))
        for sub in [*subs, "Misc"]:
            pairs.append((f"{slug(top)}/{slug(sub)}", f"{top} / {sub}"))
    return tuple(pairs)


def teach_command(
    model: Annotated[str, typer.Option("--model", help="Model name, e.g. gpt-oss:20b.")],
    set_name: Annotated[
        str | None, typer.Argument(metavar="[SET]", help="Ask about this set's items.")
    ] = None,
    unlabeled: Annotated[
        bool,
        typer.Option(
            "--unlabeled", help="Ask about commits no human has voted on (instead of a set)."
        ),
    ] = False,
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit", min=1, help="At most N items (with --unlabeled: N not yet answered)."
        ),
    ] = None,
    endpoint: Annotated[
        str, typer.Option("--endpoint", help="Base URL of the model server.")
    ] = "http://127.0.0.1:11434",
    api: Annotated[
        str, typer.Option("--api", callback=_choice(APIS), help="ollama (/api/chat) or openai.")
    ] = "ollama",
    concurrency: Annotated[
        int, typer.Option("--concurrency", min=1, max=MAX_CONCURRENCY, help="Requests in flight.")
    ] = 4,
    task: Annotated[
        str,
        typer.Option("--task", callback=_choice(TASKS), help="label (Perf/Non-perf) or category."),
    ] = "label",
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout", min=0.001, max=86_400, callback=finite, help="Seconds per request."
        ),
    ] = 120.0,
    retries: Annotated[
        int, typer.Option("--retries", min=0, max=100, help="Retries on timeouts, 429 and 5xx.")
    ] = 3,
    backoff: Annotated[
        float,
        typer.Option(
            "--backoff",
            min=0.0,
            max=3600,
            callback=finite,
            help="Seconds before the first retry; doubled each time.",
        ),
    ] = 1.0,
    max_tokens: Annotated[
        int,
        typer.Option(
            "--max-tokens", min=0, help="Cut the stored model input again to N tokens (0: as is)."
        ),
    ] = 0,
    window_of: Annotated[
        str | None,
        typer.Option(
            "--window-of",
            metavar="STUDENT",
            help="Cut each text where this student's tokenizer does (student@latest, student@3, or"
            " a model directory); --max-tokens then sets the length in its tokens.",
        ),
    ] = None,
    redo_older_prompts: Annotated[
        bool,
        typer.Option(
            "--redo-older-prompts",
            help="Ask again items whose answer came from an older prompt version (kept and"
            " counted as answered without it).",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    db: DbOption = None,
) -> None:
    """Ask a teacher model for a label and a 0-100 confidence per commit; store each
    answer as a prediction of ``teacher:MODEL``. A rerun asks only what is missing (an
    answer from an older prompt version counts, unless --redo-older-prompts)."""
    if (set_name is None) == (not unlabeled):
        fail("name a SET or pass --unlabeled (one of the two)", EXIT_USAGE)
    try:
        config = TeacherConfig(
            endpoint=endpoint,
            model=model,
            api=api,
            task=task,
            categories=taxonomy_choices() if task == "category" else (),
            timeout=timeout,
            retries=retries,
            backoff=backoff,
            concurrency=concurrency,
            max_tokens=0 if window_of else max_tokens,
            api_key=settings().teacher_api_key,
        )
    except ValueError as exc:
        fail(str(exc), EXIT_USAGE)
    with open_db(db, create=False) as store:
        window, window_name = _window(store, window_of, max_tokens) if window_of else (None, None)
        if set_name is not None:
            members = set_item_ids(store, load_set(store, set_name).id)
            item_ids = members[:limit] if limit else members
            older_elsewhere = 0
        else:
            item_ids, older_elsewhere = _unlabeled(store, limit, config.labeler, redo_older_prompts)
        progress = source_progress("answers")
        reporter = TeachProgress(progress)
        with Teacher(config, window=window, window_name=window_name) as teacher:
            try:
                with progress:
                    summary = teach(
                        store, item_ids, teacher, reporter, redo_older=redo_older_prompts
                    )
            except KeyboardInterrupt:
                err.print("interrupted: answers received so far are stored; run again to resume")
                raise typer.Exit(130) from None
    summary.older_kept += older_elsewhere
    if as_json:
        print_json(summary.as_json())
    else:
        _print_summary(summary)
    if summary.asked and not summary.stored:
        raise typer.Exit(1)


def _unlabeled(store: Store, limit: int | None, labeler: str, redo: bool) -> tuple[list[int], int]:
    """The ``--unlabeled`` selection, oldest first: commits no human voted on that
    ``labeler`` has not answered (with ``redo``, or answered only with an older prompt),
    and how many unvoted commits keep an older prompt's answer outside it."""
    older = below_version_item_ids(store, labeler, "prompt_version", PROMPT_VERSION)
    if older:
        older.intersection_update(unvoted_commit_ids(store, None, None))
    fresh = unvoted_commit_ids(store, limit, labeler)
    if not redo:
        return fresh, len(older)
    chosen = sorted(older.union(fresh))
    return (chosen[:limit] if limit else chosen), 0


def _window(store: Store, spec: str, max_tokens: int) -> tuple[Callable[[str], str], str]:
    """The cut of a student (registered name or model directory) and how to record it."""
    try:
        if Path(spec).is_dir():
            path, name = spec, spec
        else:
            row = resolve_model(store, spec)
            path, name = row.path or "", row.name
        cut, length = load_window(path, max_tokens or None)
    except (LabelerError, ValueError, OSError) as exc:
        fail(f"--window-of {spec}: {exc}")
    return cut, f"{name} ({length} tokens)"


def _print_summary(s: TeachSummary) -> None:
    rows: list[tuple[str, object]] = [
        ("items selected", s.selected),
        ("already answered (skipped)", s.already),
        ("asked", s.asked),
        ("answers stored", s.stored),
    ]
    rows += [(f"  labeled {label}", n) for label, n in sorted(s.labels.items())]
    rows.append((f"  confidence >= {CONFIDENT}", s.confident))
    rows.append(("failed (not stored)", sum(s.failures.values())))
    if s.redone:
        rows.insert(3, (f"  answered before by a prompt older than v{PROMPT_VERSION}", s.redone))
    rows += [(f"  {reason}", n) for reason, n in sorted(s.failures.items())]
    out.print(table(f"Teaching summary: {s.source}", ("", "items"), rows))
    if s.older_kept:
        out.print(
            f"{s.older_kept} answered items keep an answer from a prompt older than version"
            f" {PROMPT_VERSION} (not asked again); --redo-older-prompts asks them again"
        )
    if s.failures:
        out.print(
            Text.assemble(
                "failures are not stored; run the same command again to retry them (",
                one_line(", ".join(f"{r} {n}" for r, n in sorted(s.failures.items()))),
                ")",
            )
        )
