"""The app driven by keys through Textual's Pilot; every test checks what reached the store."""

from __future__ import annotations

import contextvars
import json
import os
import threading
import time
from pathlib import Path

import pytest
from textual.widgets import DataTable, ProgressBar, Static, TextArea

from annotation.adjudication import decisions_for_set
from annotation.set_reports import agreement_for_set
from curator.tui.app import CuratorApp
from curator.tui.screens.agreement import AgreementScreen
from curator.tui.screens.audit import AuditScreen
from curator.tui.screens.detail import ItemDetailScreen
from curator.tui.screens.help import HelpScreen
from curator.tui.screens.home import HomeScreen
from curator.tui.screens.label import LabelScreen
from curator.tui.screens.review import ReviewScreen
from curator.tui.widgets.item_panel import PAGE_LINES, ItemPanel
from engines.labelers.keyword import packaged_versions
from store import open_store
from store.kernels import get_kernel
from store.sets import get_set
from tests import raw_sql
from tests.tui_helpers import (  # noqa: F401 - fixtures
    asyncio_backend,
    screen_text,
    store_copy,
    store_template,
    text_of,
    until,
)
from tests.tui_store import ROOT
from tests.tui_store import curator as curator_cli

pytestmark = pytest.mark.anyio

# the demo pre-labels with keyword@latest, the newest packaged term list
CURRENT_KEYWORD = packaged_versions()[-1]


template = store_template("tui")


def live_votes(db: Path, annotator: str) -> list[tuple[int, str, str | None, str | None]]:
    with open_store(db) as s:
        return [
            (r[0], r[1], r[2], r[3])
            for r in raw_sql.query(
                s,
                "SELECT item_id, label, category, note FROM live_votes WHERE annotator = ?"
                " ORDER BY item_id",
                (annotator,),
            )
        ]


def shown_item(app: CuratorApp) -> int | None:
    screen = app.screen
    assert isinstance(screen, LabelScreen)
    return screen.view.item_id if screen.view else None


async def open_label(pilot, app: CuratorApp) -> LabelScreen:  # type: ignore[no-untyped-def]
    await until(pilot, lambda: isinstance(app.screen, LabelScreen) and app.screen.view, "label")
    screen = app.screen
    assert isinstance(screen, LabelScreen)
    return screen


async def open_detail(pilot, app: CuratorApp, item_id: int) -> None:  # type: ignore[no-untyped-def]
    await until(pilot, lambda: isinstance(app.screen, HomeScreen), "home")
    app.push_screen(ItemDetailScreen(item_id))
    await until(pilot, lambda: isinstance(app.screen, ItemDetailScreen) and app.screen.view, "item")


async def test_home_lists_sets_with_progress_and_pending(db: Path) -> None:
    app = CuratorApp(db, "dave")
    async with app.run_test() as pilot:
        await until(pilot, lambda: isinstance(app.screen, HomeScreen), "home")
        table = app.screen.query_one(DataTable)
        await until(
            pilot, lambda: table.row_count == 4 and "…" not in str(table.get_row_at(3)), "overviews"
        )
        rows = {str(table.get_row_at(i)[0]): table.get_row_at(i) for i in range(table.row_count)}
        assert set(rows) == {"audit-sample", "gt-sample", "inbox", "open-sample"}
        assert rows["gt-sample"][2] == "40"
        assert rows["gt-sample"][4] == "40"  # dave has not voted yet
        with open_store(db) as s:
            kappa = agreement_for_set(s, get_set(s, "gt-sample")).fleiss.kappa  # type: ignore[arg-type]
        assert rows["gt-sample"][6] == f"{kappa:.2f}"


async def test_label_vote_moves_on_and_undo_takes_it_back(db: Path) -> None:
    app = CuratorApp(db, "dave", open_set="gt-sample")
    async with app.run_test() as pilot:
        screen = await open_label(pilot, app)
        first = shown_item(app)
        await pilot.press("1")
        await until(pilot, lambda: shown_item(app) != first, "next item after a vote")
        second = shown_item(app)
        await pilot.press("2")
        await until(pilot, lambda: shown_item(app) not in (first, second), "third item")
        assert [(v[0], v[1]) for v in live_votes(db, "dave")] == [
            (first, "perf"),
            (second, "non-perf"),
        ]
        await pilot.press("u")
        await until(pilot, lambda: shown_item(app) == second, "back on the undone item")
        assert [(v[0], v[1]) for v in live_votes(db, "dave")] == [(first, "perf")]
        await pilot.press("s")
        await until(pilot, lambda: shown_item(app) != second, "moved on after skip")
        assert live_votes(db, "dave")[-1][:2] == (second, "skip")
        await until(
            pilot, lambda: "2 labeled" in text_of(screen.query_one("#status", Static)), "count"
        )
    with open_store(db) as s:
        origins = {
            r[0] for r in raw_sql.query(s, "SELECT origin FROM votes WHERE annotator = 'dave'")
        }
    assert origins == {"tui", "undo"}


async def test_category_and_note_are_saved_with_the_vote(db: Path) -> None:
    app = CuratorApp(db, "dave", open_set="gt-sample")
    async with app.run_test() as pilot:
        await open_label(pilot, app)
        first = shown_item(app)
        await pilot.press("c")
        await pilot.press(*"memory leak")
        await pilot.press("enter")
        await pilot.press("n")
        await pilot.press(*"hot loop")
        await pilot.press("enter")
        await pilot.press("p")
        await until(pilot, lambda: shown_item(app) != first, "next item")
    assert live_votes(db, "dave") == [
        (first, "perf", "memory-inefficiency/memory-leak", "hot loop")
    ]


async def test_label_resumes_at_the_first_unlabeled_item(db: Path) -> None:
    app = CuratorApp(db, "dave", open_set="gt-sample")
    async with app.run_test() as pilot:
        await open_label(pilot, app)
        for _ in range(3):
            before = shown_item(app)
            await pilot.press("2")
            await until(pilot, lambda before=before: shown_item(app) != before, "next")
        fourth = shown_item(app)
    again = CuratorApp(db, "dave", open_set="gt-sample")
    async with again.run_test() as pilot:
        await open_label(pilot, again)
        assert shown_item(again) == fourth


async def test_search_jumps_to_an_item(db: Path) -> None:
    with open_store(db) as s:
        target, message = raw_sql.query(
            s,
            "SELECT i.id, c.message FROM items i JOIN commits c ON c.item_id = i.id"
            " JOIN set_items si ON si.item_id = i.id JOIN sets st ON st.id = si.set_id"
            " WHERE st.name = 'gt-sample' ORDER BY si.position DESC LIMIT 1",
        )[0]
    app = CuratorApp(db, "dave", open_set="gt-sample")
    async with app.run_test() as pilot:
        await open_label(pilot, app)
        await pilot.press("slash")
        await pilot.press(*message.split()[0:3] and " ".join(message.split()[:3]))
        await pilot.press("enter")
        await until(pilot, lambda: type(app.screen).__name__ == "ChoicePrompt", "search results")
        await pilot.press("enter")
        await until(pilot, lambda: shown_item(app) == target, "the found item")


async def test_blind_set_hides_machines_and_open_set_shows_them(db: Path) -> None:
    app = CuratorApp(db, "dave", open_set="gt-sample")
    async with app.run_test() as pilot:
        screen = await open_label(pilot, app)
        assert "hidden" in text_of(screen.query_one("#machine", Static))
        assert screen.view is not None and screen.view.predictions == []
    app = CuratorApp(db, "dave", open_set="open-sample")
    async with app.run_test() as pilot:
        screen = await open_label(pilot, app)
        assert CURRENT_KEYWORD in text_of(screen.query_one("#machine", Static))


async def test_review_settles_a_conflict_with_one_key(db: Path) -> None:
    with open_store(db) as s:
        set_row = get_set(s, "gt-sample")
        assert set_row is not None
        before = [d.item_id for d in decisions_for_set(s, set_row) if d.status == "conflict"]
    assert before, "the sample set should hold a conflict"
    app = CuratorApp(db, "erin")
    async with app.run_test() as pilot:
        await until(pilot, lambda: isinstance(app.screen, HomeScreen), "home")
        app.push_screen(ReviewScreen(set_row))
        await until(
            pilot,
            lambda: isinstance(app.screen, ReviewScreen) and app.screen.conflicts,
            "conflicts",
        )
        table = app.screen.query_one(DataTable)
        assert table.row_count == len(before)
        assert "skip" not in text_of(app.screen.query_one("#keys", Static))
        await pilot.press("s")  # skip settles nothing: not a key here
        await until(
            pilot,
            lambda: any("s is not a label key" in n.message for n in app._notifications),
            "the keys that settle",
        )
        assert len(app.screen.conflicts) == len(before)
        await pilot.press("1")
        await until(
            pilot, lambda: len(app.screen.conflicts) == len(before) - 1, "one fewer conflict"
        )
    with open_store(db) as s:
        rows = raw_sql.query(
            s, "SELECT item_id, label, role FROM live_votes WHERE annotator = 'erin'"
        )
    assert [(r[0], r[1], r[2]) for r in rows] == [(before[0], "perf", "adjudicator")]


async def test_audit_screen_updates_as_votes_come_in(db: Path) -> None:
    with open_store(db) as s:
        set_row = get_set(s, "audit-sample")
        assert set_row is not None
        first = raw_sql.query(
            s,
            "SELECT si.item_id FROM set_items si WHERE si.set_id = ? AND NOT EXISTS"
            " (SELECT 1 FROM live_votes lv WHERE lv.item_id = si.item_id)"
            " ORDER BY si.position LIMIT 1",
            (set_row.id,),
        )[0][0]
    app = CuratorApp(db, "dave")
    async with app.run_test() as pilot:
        await until(pilot, lambda: isinstance(app.screen, HomeScreen), "home")
        app.push_screen(AuditScreen(set_row))
        status = lambda: text_of(app.screen.query_one("#status", Static))  # noqa: E731
        await until(pilot, lambda: "judged" in status(), "audit report")
        judged = int(status().split(" of ")[0].rsplit(" ", 1)[1])
        # Another annotator votes from elsewhere; the screen picks it up on its own.
        from typer.testing import CliRunner

        from curator.cli import app as cli

        result = CliRunner().invoke(
            cli, ["vote", f"#{first}", "perf", "--annotator", "zoe", "--db", str(db)]
        )
        assert result.exit_code == 0, result.output
        await until(pilot, lambda: f" {judged + 1} of " in status(), "the new vote counted")
        summary = app.screen.query_one("#summary", Static)
        assert summary.content is not None


async def test_agreement_screen_shows_the_store_figures(db: Path) -> None:
    with open_store(db) as s:
        set_row = get_set(s, "gt-sample")
        assert set_row is not None
        report = agreement_for_set(s, set_row)
    app = CuratorApp(db, "dave")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, HomeScreen), "home")
        app.push_screen(AgreementScreen(set_row))
        await until(
            pilot,
            lambda: "annotators" in text_of(app.screen.query_one("#status", Static)),
            "report",
        )
        await pilot.pause()  # the boxes were filled with the status: let the layout follow
        rendered = screen_text(app)
        assert f"{report.fleiss.kappa:.3f}" in rendered
        assert f"{report.krippendorff_alpha:.3f}" in rendered
        for rater in ("alice", "bob", "carol"):
            assert rater in rendered


async def test_kernel_detail_shows_both_sources_and_the_verdict(db: Path) -> None:
    with open_store(db) as s:
        kernel_id = raw_sql.query(s, "SELECT item_id FROM kernels ORDER BY item_id LIMIT 1")[0][0]
    app = CuratorApp(db, "dave")
    async with app.run_test(size=(140, 40)) as pilot:
        await open_detail(pilot, app, kernel_id)
        rendered = screen_text(app)
        assert "original" in rendered and "normalized" in rendered
        assert "verdict" in rendered and "saxpy" in rendered
        await pilot.press("y")
        await until(pilot, lambda: app.clipboard != "", "copied key")
        assert "saxpy" in app.clipboard


def worker_children() -> list[str]:
    """Kernel worker processes this test process started and that are still running."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        state = stat.rsplit(")", 1)[1].split()[0]
        if parent == os.getpid() and "engines.kernels.worker" in cmd and state != "Z":
            found.append(cmd)
    return found


async def test_dynamic_check_runs_from_the_kernel_view_and_stores_the_verdict(db: Path) -> None:
    with open_store(db) as s:
        kernel_id = raw_sql.query(s, "SELECT item_id FROM kernels WHERE kernel_name = 'saxpy'")[0][
            0
        ]
        assert get_kernel(s, kernel_id).verdict is None  # type: ignore[union-attr]
    app = CuratorApp(db, "dave")
    async with app.run_test(size=(140, 40)) as pilot:
        await open_detail(pilot, app, kernel_id)
        screen = app.screen
        assert "unchecked" in screen_text(app) and "r run dynamic check" in screen_text(app)
        await pilot.press("r")
        await until(pilot, lambda: screen.running is not None, "check started")
        assert screen.query_one(ProgressBar).display
        await until(pilot, lambda: screen.running is None, "check finished", tries=3000)
        await until(pilot, lambda: "useful" in screen_text(app), "verdict on screen")
        assert not screen.query_one(ProgressBar).display
    with open_store(db) as s:
        kernel = get_kernel(s, kernel_id)
    assert kernel is not None and kernel.verdict == "useful"
    assert kernel.features["transfer"] > 0  # dynamic features came with the check
    assert worker_children() == []


@pytest.mark.parametrize("stop", ["escape", "ctrl+q"])
async def test_esc_or_quitting_stops_a_running_check_and_keeps_the_verdict(
    db: Path, stop: str
) -> None:
    curator_cli(db, "mine", "kernels", str(ROOT / "sample_data/kernels/timeout.cl"))
    with open_store(db) as s:
        kernel_id = raw_sql.query(s, "SELECT item_id FROM kernels WHERE kernel_name = 'spin'")[0][0]
    app = CuratorApp(db, "dave")
    async with app.run_test(size=(140, 40)) as pilot:
        await open_detail(pilot, app, kernel_id)
        screen = app.screen
        await pilot.press("r")
        await until(
            pilot,
            lambda: "running A1" in text_of(screen.query_one("#status", Static)),
            "the kernel running",
            tries=3000,
        )
        running = screen.running
        await pilot.press(stop)
        if stop == "escape":
            await until(pilot, lambda: screen.running is None, "check stopped")
            assert app.screen is screen  # esc stopped the check; it did not leave the screen
    assert running is not None and running.cancelled.is_set()
    for _ in range(500):  # the check's thread kills its child as soon as it sees the flag
        if not worker_children():
            break
        time.sleep(0.02)
    assert worker_children() == []
    with open_store(db) as s:
        kernel = get_kernel(s, kernel_id)
    assert kernel is not None and kernel.verdict is None


async def test_a_worker_result_for_a_screen_that_has_left_is_dropped(db: Path) -> None:
    # A detail screen's load or check can finish after the user has left the screen (or
    # quit): its result must not reach the removed widgets (that failed the worker).
    with open_store(db) as s:
        item_id = raw_sql.query(s, "SELECT id FROM items LIMIT 1")[0][0]
    app = CuratorApp(db, "dave")
    shown: list[str] = []

    def show(text: str) -> None:
        shown.append(text_of(screen.query_one("#status", Static)) + "|" + text)

    errors: list[BaseException] = []

    def deliver(text: str) -> None:
        try:
            screen.from_worker(show, text)
        except BaseException as exc:  # the test reports whatever escaped the thread
            errors.append(exc)

    def worker(text: str) -> threading.Thread:  # a thread in the app's context, as Textual's
        thread = threading.Thread(target=contextvars.copy_context().run, args=(deliver, text))
        thread.start()
        return thread

    async with app.run_test(size=(140, 40)) as pilot:
        await open_detail(pilot, app, item_id)
        screen = app.screen
        thread = worker("while shown")
        await until(pilot, lambda: not thread.is_alive(), "delivered")
        assert len(shown) == 1 and shown[0].endswith("|while shown")
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, HomeScreen), "back home")
        thread = worker("after leaving")
        await until(pilot, lambda: not thread.is_alive(), "dropped")
        # a message to the user goes through the app, which is still there
        told = threading.Thread(
            target=contextvars.copy_context().run,
            args=(screen.from_worker, app.say, "told after leaving"),
        )
        told.start()
        await until(
            pilot,
            lambda: any(n.message == "told after leaving" for n in app._notifications),
            "the app's message",
        )
        await pilot.pause()
    assert errors == [] and len(shown) == 1


async def test_ir_detail_shows_counts_and_opcode_histogram(db: Path) -> None:
    with open_store(db) as s:
        ir_id, opcodes = raw_sql.query(s, "SELECT item_id, opcodes FROM ir_modules LIMIT 1")[0]
    app = CuratorApp(db, "dave")
    async with app.run_test(size=(140, 40)) as pilot:
        await open_detail(pilot, app, ir_id)
        rendered = screen_text(app)
        assert "opcodes" in rendered and "instructions" in rendered
        top = max(json.loads(opcodes).items(), key=lambda kv: kv[1])[0]
        assert top in rendered


async def test_untrusted_text_is_shown_literally_and_clipped(tmp_path: Path) -> None:
    hostile = (
        "[bold red]boom[/] [link=http://evil.example]click[/link]"
        " \x1b]8;;http://evil.example\x07osc\x1b]8;;\x07 \x1b[31mred\x1b[0m \x07bell"
    )
    long_line = "x" * 10_000
    diff = "\n".join(["@@ -1 +1 @@", long_line] + [f"+line {i}" for i in range(50_000)])
    items = tmp_path / "items.jsonl"
    items.write_text(
        json.dumps({"id": "evil-1", "repo": "r", "sha": "a" * 40, "message": hostile, "diff": diff})
        + "\n"
    )
    db = tmp_path / "evil.db"
    from tests.tui_store import curator

    curator(db, "import", "items", str(items), "--set", "evil")
    app = CuratorApp(db, "dave", open_set="evil")
    async with app.run_test() as pilot:
        screen = await open_label(pilot, app)
        panel = screen.query_one(ItemPanel)
        message = text_of(panel.query_one("#item-message", Static))
        assert "[bold red]boom[/]" in message and "[link=http://evil.example]" in message
        assert "\x1b" not in message and "\x07" not in message
        title = text_of(panel.query_one("#pane-title-0", Static))
        assert "50002 lines" in title and "clipped" in title
        rendered = app.export_screenshot()
        assert "\x1b" not in rendered and "\x07" not in rendered
        await pilot.press("f")
        area = panel.query_one("#item-full", TextArea)
        await until(pilot, lambda: panel.showing_all, "show all")
        # every line, a page at a time (a text area of 50,000 lines is slow to draw)
        assert panel.total_lines > 50_000 and area.document.line_count == PAGE_LINES
        assert long_line in "\n".join(panel.pages).replace("\n", "")  # broken, not cut
        await pilot.press("escape")
        await until(pilot, lambda: not panel.showing_all, "back to the clipped view")
        await pilot.press("1")
        await until(pilot, lambda: screen.view is None, "done with the set")
    assert live_votes(db, "dave")[0][1] == "perf"


async def test_help_lists_every_key_of_the_screen(db: Path) -> None:
    app = CuratorApp(db, "dave", open_set="gt-sample")
    async with app.run_test(size=(80, 40)) as pilot:
        await open_label(pilot, app)
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "help")
        rendered = screen_text(app)
        for words in ("vote perf", "vote non-perf", "vote skip", "undo", "category", "note"):
            assert words in rendered.lower()
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, LabelScreen), "back to labeling")


async def test_layout_survives_resizing(db: Path) -> None:
    app = CuratorApp(db, "dave", open_set="gt-sample")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_label(pilot, app)
        for size in ((60, 20), (200, 60), (80, 24)):
            await pilot.resize_terminal(*size)
            await pilot.pause(0.05)
            assert screen.query_one(ItemPanel).size.height > 0
        first = shown_item(app)
        await pilot.press("1")
        await until(pilot, lambda: shown_item(app) != first, "still voting after resizes")


def test_no_command_without_a_terminal_prints_help(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from curator.cli import app as cli

    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "x.db")])
    assert result.exit_code == 0
    assert "Usage" in result.output and "label" in result.output


async def test_search_text_with_markup_is_quoted_not_parsed(db: Path) -> None:
    app = CuratorApp(db, "dave", open_set="gt-sample")
    async with app.run_test() as pilot:
        await open_label(pilot, app)
        await pilot.press("slash")
        await pilot.press(*"[bold]zzz[/")
        await pilot.press("enter")
        await until(pilot, lambda: app._notifications, "a notification")
        note = next(iter(app._notifications))
        assert "[bold]zzz[/" in note.message
        assert note.markup is False


async def test_theme_flips_and_the_item_is_redrawn(db: Path) -> None:
    app = CuratorApp(db, "dave", open_set="gt-sample")
    async with app.run_test() as pilot:
        screen = await open_label(pilot, app)
        assert app.current_theme.dark
        code = screen.query_one("#pane-code-0", Static)
        before = code.content
        await pilot.press("ctrl+t")
        # the diff is highlighted again for the new theme
        await until(pilot, lambda: code.content is not before, "the redraw")
        assert not app.current_theme.dark
        assert screen_text(app).count("@@ -1,2 +1,2 @@") == 1


def test_machine_line_shows_student_score_and_teacher_confidence() -> None:
    from curator.tui import render

    line = render.predictions_line(
        [
            {
                "labeler": "keyword@1",
                "label": "perf",
                "score": 1.0,
                "details": {"matches": [{"term": "faster"}]},
            },
            {"labeler": "student@2", "label": "perf", "score": 0.9312, "details": {}},
            {"labeler": "teacher:gpt-oss:20b", "label": "non-perf", "score": 0.85, "details": {}},
            {"labeler": "[red]x[/]", "label": "\x1b[31mperf", "score": None, "details": {}},
        ]
    ).plain
    assert "keyword@1 perf 1.00 (faster)" in line
    assert "student@2 perf 0.93" in line
    assert "teacher:gpt-oss:20b non-perf 85% sure" in line
    assert "[red]x[/] \\x1b[31mperf" in line and "\x1b" not in line  # ESC shown, not sent


def test_set_figures_are_reused_until_the_votes_change(db: Path) -> None:
    from curator.tui.service import CurationService

    service = CurationService(db, "dave")
    try:
        set_row = service.set_row("gt-sample")
        first = service.overview(set_row)
        assert service.overview(set_row) is first
        with open_store(db) as s:
            item = raw_sql.query(s, "SELECT item_id FROM set_items LIMIT 1")[0][0]
        service.vote(set_row, item, "perf")
        again = service.overview(set_row)
        assert again is not first
        assert again.mine == first.mine + 1 and again.pending_mine == first.pending_mine - 1
    finally:
        service.close()


def test_going_to_an_item_of_a_blind_set_keeps_it_blind(db: Path) -> None:
    from curator.tui.service import CurationService

    service = CurationService(db, "dave")
    try:
        gt = service.set_row("gt-sample")
        with open_store(db) as s:
            item = raw_sql.query(
                s, "SELECT item_id FROM set_items WHERE set_id = ? LIMIT 1", (gt.id,)
            )[0][0]
        hidden = service.item(None, item)  # as `g` on the home screen opens it
        assert hidden is not None and hidden.blind
        assert hidden.predictions == [] and hidden.votes == []
        shown = service.item(None, item, reveal=True)  # the adjudicator's review
        assert shown is not None and not shown.blind
        assert {v.annotator for v in shown.votes} >= {"alice", "bob"}
        assert any(p["labeler"] == CURRENT_KEYWORD for p in shown.predictions)
    finally:
        service.close()


async def test_home_figures_follow_votes_cast_on_the_label_screen(db: Path) -> None:
    app = CuratorApp(db, "dave")
    async with app.run_test() as pilot:
        await until(pilot, lambda: isinstance(app.screen, HomeScreen), "home")
        home = app.screen
        table = home.query_one(DataTable)

        def to_do() -> str:
            row = next(
                table.get_row_at(i)
                for i in range(table.row_count)
                if str(table.get_row_at(i)[0]) == "gt-sample"
            )
            return str(row[4])

        await until(pilot, lambda: table.row_count == 4 and to_do() == "40", "figures")
        app.push_screen(LabelScreen(next(s for s in home.sets if s.name == "gt-sample")))
        await open_label(pilot, app)
        first = shown_item(app)
        await pilot.press("1")
        await until(pilot, lambda: shown_item(app) != first, "vote cast")
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is home, "back home")
        assert to_do() in ("40", "39")  # the old figure stays until the new one arrives
        await until(pilot, lambda: to_do() == "39", "the new figure")


async def test_a_vote_that_replaces_ones_vote_in_another_set_says_so(db: Path) -> None:
    curator_cli(db, "set", "create", "quality", "--from-set", "gt-sample", "--labels", "good,bad")
    app = CuratorApp(db, "alice", open_set="quality")
    async with app.run_test() as pilot:
        await open_label(pilot, app)
        item = shown_item(app)
        before = dict((v[0], v[1]) for v in live_votes(db, "alice"))
        assert before[item] in ("perf", "non-perf")  # alice voted on it in gt-sample
        await pilot.press("1")
        await until(pilot, lambda: app._notifications, "a notification")
        note = next(iter(app._notifications))
        assert note.message.startswith(f"your {before[item]!r} on #{item} ")
        assert "no longer counts in set" in note.message and "gt-sample" in note.message
    assert dict((v[0], v[1]) for v in live_votes(db, "alice"))[item] == "good"


def test_to_do_on_a_routed_set_counts_what_routing_could_still_serve_the_annotator(
    db: Path,
) -> None:
    from curator.tui.service import CurationService

    curator_cli(db, "set", "edit", "inbox", "--overlap", "routed", "--votes-per-item", "2")
    with open_store(db) as s:
        ids = [
            row[0]
            for row in raw_sql.query(
                s,
                "SELECT item_id FROM set_items WHERE set_id = (SELECT id FROM sets"
                " WHERE name = 'inbox') ORDER BY position",
            )
        ]
    assert len(ids) == 8
    curator_cli(db, "vote", str(ids[0]), "perf", "--set", "inbox", "--annotator", "bob")
    curator_cli(db, "vote", str(ids[1]), "perf", "--set", "inbox", "--annotator", "bob")
    curator_cli(db, "vote", str(ids[0]), "perf", "--set", "inbox", "--annotator", "carol")
    curator_cli(db, "vote", str(ids[2]), "perf", "--set", "inbox", "--annotator", "dave")
    service = CurationService(db, "dave")
    try:
        set_row = service.set_row("inbox")
        overview = service.counts(set_row)
        # Item 0 is settled, item 2 has dave's vote: six are left for dave, while the
        # set still has seven items waiting for a vote (item 2 needs a second one).
        assert overview.mine == 1
        assert overview.pending_mine == 6
        state = service.queue_state(set_row)
        assert (state.size, state.mine, state.to_do) == (8, 1, 6)
        bob = CurationService(db, "bob")
        try:
            assert bob.counts(bob.set_row("inbox")).pending_mine == 6  # items 2-7
        finally:
            bob.close()
    finally:
        service.close()
