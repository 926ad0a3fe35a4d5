"""The mining commands' progress bars: what they count for a source."""

from __future__ import annotations

import io

from rich.console import Console

from curator.presentation.progress import SourceReporter, source_progress


def _shown(total: int, done: int) -> str:
    progress = source_progress("commits", drawn_by_reporter=True)
    reporter = SourceReporter(progress)
    reporter.source_started("repo", total, done)
    out = io.StringIO()
    Console(file=out, width=120, color_system=None).print(progress.make_tasks_table(progress.tasks))
    return out.getvalue()


def test_a_window_without_commits_counts_none() -> None:
    assert "0/0" in _shown(0, 0)  # it once read 1/1: a commit that was never there
    assert "0/40" in _shown(40, 0)
    assert "12/12" in _shown(10, 12)  # a resumed run already past the count it was given


def _finished(failed: str | None) -> str:
    from dataclasses import dataclass

    @dataclass
    class Finished:
        source: str
        failed: str | None

    progress = source_progress("commits", drawn_by_reporter=True)
    reporter = SourceReporter(progress)
    reporter.source_started("repo", 40, 0)
    reporter.advance("repo", 7)
    reporter.source_finished(Finished("repo", failed))
    out = io.StringIO()
    Console(file=out, width=120, color_system=None).print(progress.make_tasks_table(progress.tasks))
    return out.getvalue()


def test_a_finished_source_fills_its_bar_and_a_failed_one_stops_where_it_was() -> None:
    assert "40/40" in _finished(None)
    shown = _finished("git said no")
    assert "7/40" in shown and "repo: failed" in shown and "40/40" not in shown
