"""Sweep of the app's report, chart, train, search and detail screens: a chart plotext
cannot draw, a student that never predicted the set, a set edited by the CLI while its
screen is open, a baseline trained with no dev or eval set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, Static, TextArea

from annotation.annotator_report import annotator_quality
from curator.tui.app import CuratorApp
from curator.tui.screens.agreement import AgreementScreen
from curator.tui.screens.audit import AuditScreen
from curator.tui.screens.charts import ChartsScreen
from curator.tui.screens.detail import ItemDetailScreen
from curator.tui.screens.help import HelpScreen
from curator.tui.screens.home import HomeScreen
from curator.tui.screens.search import SearchScreen
from curator.tui.screens.train import TrainScreen
from curator.tui.widgets.chart_plot import ChartPlot
from curator.tui.widgets.item_panel import ItemPanel
from store import open_store
from store.models import register_model
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
from tests.tui_store import curator as curator_cli

pytestmark = pytest.mark.anyio


template = store_template("sweep-tui")


async def open_charts(pilot, app: CuratorApp, set_name: str) -> ChartsScreen:  # type: ignore[no-untyped-def]
    await until(pilot, lambda: isinstance(app.screen, HomeScreen), "home")
    with open_store(app.service.db_path) as s:
        row = get_set(s, set_name)
    assert row is not None
    screen = ChartsScreen(row)
    app.push_screen(screen)
    await until(pilot, lambda: app.screen is screen, "charts")
    return screen


def status_of(screen: ChartsScreen) -> str:
    return text_of(screen.query_one("#status", Static))


async def test_a_chart_plotext_cannot_draw_is_named_and_the_app_goes_on(
    db: Path, tmp_path: Path
) -> None:
    # Two annotators who disagree on every item: Fleiss' kappa -1, below the chart's
    # axis, which broke plotext's legend with an IndexError that ended the app.
    items = tmp_path / "split.jsonl"
    items.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"split-{i}",
                    "repo": f"https://example.org/split{i}",
                    "sha": f"{i + 500:040x}",
                    "language": "c",
                    "file": "a.c",
                    "message": f"change {i}",
                    "diff": "@@ -1 +1 @@\n-a\n+b\n",
                }
            )
            + "\n"
            for i in range(4)
        )
    )
    curator_cli(db, "import", "items", str(items), "--set", "split")
    for i in range(4):
        curator_cli(db, "vote", f"split-{i}", "perf", "--set", "split", "-a", "ann")
        curator_cli(db, "vote", f"split-{i}", "non-perf", "--set", "split", "-a", "bob")
    app = CuratorApp(db, "ann")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_charts(pilot, app, "split")
        await pilot.press("2")
        await until(pilot, lambda: status_of(screen).endswith("agreement per week"), "chart")
        shown = screen_text(app)  # draws the chart
        plot = screen.query_one(ChartPlot)
        assert app.is_running and app.screen is screen
        assert plot.failure is None or "could not draw this chart" in shown
        await pilot.press("1")  # the next chart draws as before
        await until(pilot, lambda: status_of(screen).endswith("labels"), "labels chart")
        assert "Labels in split" in screen_text(app)


async def test_threshold_chart_passes_over_a_student_that_never_predicted_the_set(
    db: Path, tmp_path: Path
) -> None:
    staged = tmp_path / "staged"
    staged.mkdir()
    with open_store(db) as s:
        register_model(s, "student", "base", {}, {}, staged)  # predicted nothing
    app = CuratorApp(db, "ann")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_charts(pilot, app, "gt-sample")
        await pilot.press("3")
        await until(pilot, lambda: "· threshold" in status_of(screen), "threshold chart")
        assert "student@1" not in status_of(screen)
        assert "settled items" in status_of(screen)
        assert "keyword@" in screen_text(app)  # the labeler that did predict the set


async def test_agreement_screen_follows_a_set_edited_by_the_cli(db: Path) -> None:
    app = CuratorApp(db, "ann")
    async with app.run_test(size=(160, 50)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, HomeScreen), "home")
        with open_store(db) as s:
            row = get_set(s, "gt-sample")
        assert row is not None
        screen = AgreementScreen(row)
        app.push_screen(screen)
        await until(pilot, lambda: app.screen is screen and screen.is_mounted, "agreement")
        await until(pilot, lambda: "carol" in screen_text(app), "the annotators")
        before = screen_text(app)
        curator_cli(db, "set", "edit", "gt-sample", "--votes-per-item", "3")
        with open_store(db) as s:
            edited = get_set(s, "gt-sample")
            assert edited is not None
            bob = next(q for q in annotator_quality(s, edited) if q.annotator == "bob")
        agrees = f"{bob.final_agreeing / bob.final_items:.1%}"
        assert agrees not in before  # the edit changes bob's agreement with the final labels
        await pilot.press("f5")
        await until(pilot, lambda: agrees in screen_text(app), "figures of the edited set")
        assert screen.set_row.votes_per_item == 3


async def test_a_baseline_trained_without_dev_or_eval_says_it_is_done_and_not_scored(
    db: Path,
) -> None:
    app = CuratorApp(db, "ann")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, HomeScreen), "home")
        await pilot.press("m")
        await until(
            pilot, lambda: isinstance(app.screen, TrainScreen) and app.screen.loaded, "train"
        )
        screen = app.screen
        assert isinstance(screen, TrainScreen)
        screen.form.kind, screen.form.votes = "tfidf-lr", ["gt-sample"]
        screen.form.dev = screen.form.eval = None
        await pilot.press("s")
        await until(pilot, lambda: screen.trained is not None, "trained", tries=6000)
        assert text_of(screen.query_one("#run", Static)) == "registered tfidf-lr@1"
        shown = screen_text(app)
        assert "not scored: no dev or eval set was chosen" in shown
        assert "on ?" not in shown


async def test_a_refused_query_clears_the_last_hits_and_says_why_in_full(db: Path) -> None:
    app = CuratorApp(db, "ann")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, HomeScreen), "home")
        await pilot.press("slash")
        await until(pilot, lambda: isinstance(app.screen, SearchScreen), "search")
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        table = screen.query_one(DataTable)
        await pilot.press(*"cache", "enter")
        await until(pilot, lambda: table.row_count > 0, "hits for cache")
        box = screen.query_one(Input)
        box.value = ""
        box.focus()
        await pilot.press(*"***", "enter")
        await until(pilot, lambda: table.row_count == 0, "the old hits cleared")
        assert screen.hits == []
        shown = screen_text(app)
        assert "so it can match nothing" in shown  # the whole reason, not cut at 100
        await pilot.press("enter")  # nothing to open: still the search screen
        await pilot.pause(0.2)
        assert app.screen is screen


async def test_a_1mb_diff_opens_clipped_and_f_shows_every_line_unwrapped(
    db: Path, tmp_path: Path
) -> None:
    big = "@@ -1,20000 +1,20000 @@\n" + "".join(
        f"-old_{i} = compute({i}) [red]x[/red]\n+new_{i} = cached({i})\n" for i in range(20000)
    )
    items = tmp_path / "big.jsonl"
    items.write_text(
        "".join(
            json.dumps(
                {
                    "id": name,
                    "repo": "https://example.org/big",
                    "sha": sha * 40,
                    "language": "python",
                    "file": "big.py",
                    "message": f"[bold]{name}[/bold]",
                    "diff": diff,
                }
            )
            + "\n"
            for name, sha, diff in (("big", "b", big), ("small", "c", "@@ -1 +1 @@\n-a\n+b\n"))
        )
    )
    assert len(big) > 1_000_000
    curator_cli(db, "import", "items", str(items), "--set", "big")
    app = CuratorApp(db, "ann")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, HomeScreen), "home")
        for name, lines, wrapped in (("big", 40_001, False), ("small", 3, True)):
            item_id = app.service.resolve(name)
            screen = ItemDetailScreen(item_id)
            app.push_screen(screen)
            await until(pilot, lambda s=screen: s.view is not None, f"{name} shown")
            shown = screen_text(app)
            assert f"[bold]{name}[/bold]" in shown
            if name == "big":
                assert "clipped, f shows all" in shown
            await pilot.press("f")
            area = screen.query_one("#item-full", TextArea)
            await until(pilot, lambda a=area: a.has_focus, "every line")
            assert area.soft_wrap is wrapped
            assert screen.query_one(ItemPanel).total_lines >= lines
            await pilot.press("escape")  # back to the clipped view, then back home
            await pilot.press("escape")
            await until(pilot, lambda: isinstance(app.screen, HomeScreen), "home again")


async def test_kernel_detail_follows_the_terminal_width_and_i_acts_at_every_width(
    db: Path,
) -> None:
    with open_store(db) as s:
        kernel_id = raw_sql.query(s, "SELECT item_id FROM kernels LIMIT 1")[0][0]
    app = CuratorApp(db, "ann")
    async with app.run_test(size=(140, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, HomeScreen), "home")
        screen = ItemDetailScreen(kernel_id)
        app.push_screen(screen)
        await until(pilot, lambda: screen.view is not None, "kernel shown")
        panel, side = screen.query_one(ItemPanel), screen.query_one("#side")
        assert panel.side_by_side and side.display and side.region.width
        await pilot.press("i")  # wide: the facts pane hides, the sources take the room
        await pilot.pause()
        assert side.region.width == 0 and panel.region.width == 140
        await pilot.press("i")
        await pilot.resize_terminal(80, 30)  # narrow: sources stacked, facts behind `i`
        await until(pilot, lambda: screen.has_class("narrow"), "narrow layout")
        await pilot.pause()
        assert not panel.side_by_side and side.region.width == 0
        assert screen.query_one("#pane-1").region.y > screen.query_one("#pane-0").region.y
        await pilot.press("i")
        await pilot.pause()
        assert side.region.width == 80 and panel.region.width == 0
        await pilot.press("i")
        await pilot.resize_terminal(140, 40)  # wide again: side by side
        await until(pilot, lambda: not screen.has_class("narrow"), "wide layout")
        await pilot.pause()
        assert panel.side_by_side and side.region.width > 0
        assert screen.query_one("#pane-1").region.y == screen.query_one("#pane-0").region.y


async def test_a_hit_opened_from_search_stays_blind_whatever_set_is_highlighted(
    db: Path,
) -> None:
    with open_store(db) as s:
        in_open, in_blind = (
            {
                r[0]
                for r in raw_sql.query(
                    s,
                    "SELECT item_id FROM set_items JOIN sets ON sets.id = set_id"
                    " WHERE sets.name = ?",
                    (name,),
                )
            }
            for name in ("open-sample", "gt-sample")
        )
    app = CuratorApp(db, "ann")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, HomeScreen), "home")
        home = app.screen
        assert isinstance(home, HomeScreen)
        await until(pilot, lambda: len(home.sets) > 0, "sets")
        row = [s.name for s in home.sets].index("open-sample")
        home.query_one(DataTable).move_cursor(row=row)  # a set that is not blind
        await pilot.press("slash")
        await until(pilot, lambda: isinstance(app.screen, SearchScreen), "search")
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        await pilot.press(*"cache", "enter")
        await until(pilot, lambda: screen.hits != [], "hits")
        blind_only = [h.item_id for h in screen.hits if h.item_id in in_blind - in_open]
        assert blind_only
        table = screen.query_one(DataTable)
        table.move_cursor(row=[h.item_id for h in screen.hits].index(blind_only[0]))
        await pilot.press("enter")
        await until(
            pilot,
            lambda: isinstance(app.screen, ItemDetailScreen) and app.screen.view is not None,
            "detail",
        )
        detail = app.screen
        assert isinstance(detail, ItemDetailScreen) and detail.view is not None
        assert detail.view.blind and detail.view.predictions == []
        assert "machine predictions hidden (blind set)" in screen_text(app)


async def test_help_of_the_audit_screen_lists_the_keys_it_inherits(db: Path) -> None:
    with open_store(db) as s:
        row = get_set(s, "audit-sample")
    assert row is not None
    app = CuratorApp(db, "ann")
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, HomeScreen), "home")
        screen = AuditScreen(row)
        app.push_screen(screen)
        await until(pilot, lambda: app.screen is screen, "audit")
        await pilot.press("question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "help")
        shown = screen_text(app)
        for key, what in (("f5,ctrl+r", "Refresh"), ("esc,q", "Back"), ("l,enter", "Label")):
            assert key in shown and what in shown, key
        await pilot.press("escape")
        await pilot.press("f5")  # the key the help names does refresh
        await until(pilot, lambda: app.screen is screen, "back on the audit")
