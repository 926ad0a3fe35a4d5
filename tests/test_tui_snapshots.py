"""The look of every screen pinned at 80x24 and 120x40 (SVG snapshots).

Update them after an intended change with ``pytest tests/test_tui_snapshots.py
--snapshot-update`` and review the SVGs in tests/__snapshots__/.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from curator.tui.app import CuratorApp
from curator.tui.screens.agreement import AgreementScreen
from curator.tui.screens.audit import AuditScreen
from curator.tui.screens.charts import ChartsScreen
from curator.tui.screens.detail import ItemDetailScreen
from curator.tui.screens.home import HomeScreen
from curator.tui.screens.label import LabelScreen
from curator.tui.screens.review import ReviewScreen
from curator.tui.screens.search import SearchScreen
from curator.tui.screens.train import TrainScreen
from store import open_store
from store.sets import get_set
from tests import raw_sql
from tests.al_data import store_fixed_simulation
from tests.tui_helpers import store_copy  # noqa: F401 - fixtures
from tests.tui_store import build

SIZES = [(80, 24), (120, 40)]


# A fixed place, so the paths recorded as provenance (shown on the detail screens) are
# the same on every machine and in every clone.
FIXED = Path(tempfile.gettempdir()) / "curator-tui-snapshots"


@pytest.fixture(scope="module")
def template() -> Path:
    """The store, built once per test run: pytest-xdist workers share the one place, so
    the first builds it under a lock and the others find it built for this run."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID") or f"pid-{os.getpid()}"
    db = FIXED / "template.db"
    with (Path(tempfile.gettempdir()) / "curator-tui-snapshots.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        built = FIXED / "built-for"
        if not (built.is_file() and built.read_text() == run):
            shutil.rmtree(FIXED, ignore_errors=True)
            FIXED.mkdir(parents=True)
            build(db)
            built.write_text(run)
    return db


async def settle(pilot: Pilot, done: Callable[[], object]) -> None:
    for _ in range(1500):
        await pilot.pause(0.02)
        if done():
            await pilot.wait_for_scheduled_animations()
            await pilot.pause()
            return
    raise AssertionError("the screen never finished loading")


def home_loaded(app: CuratorApp) -> bool:
    from textual.widgets import DataTable

    if not isinstance(app.screen, HomeScreen):
        return False
    table = app.screen.query_one(DataTable)
    return table.row_count > 0 and all(
        "…" not in str(table.get_row_at(i)) for i in range(table.row_count)
    )


def opens(screen_factory: Callable[[Path], object], ready: Callable[[CuratorApp], bool]):  # type: ignore[no-untyped-def]
    def run_before_for(db: Path) -> Callable[[Pilot], Awaitable[None]]:
        async def run_before(pilot: Pilot) -> None:
            app = pilot.app
            assert isinstance(app, CuratorApp)
            await settle(pilot, lambda: home_loaded(app))
            screen = screen_factory(db)
            if screen is not None:
                app.push_screen(screen)  # type: ignore[arg-type]
            await settle(pilot, lambda: ready(app))

        return run_before

    return run_before_for


def then_press(before, key: str, ready: Callable[[CuratorApp], bool]):  # type: ignore[no-untyped-def]
    """``before``, then ``key``, then wait until ``ready``."""

    def run_before_for(db: Path) -> Callable[[Pilot], Awaitable[None]]:
        async def run_before(pilot: Pilot) -> None:
            await before(db)(pilot)
            await pilot.press(key)
            await settle(pilot, lambda: ready(pilot.app))  # type: ignore[arg-type]

        return run_before

    return run_before_for


def with_simulation(db: Path) -> TrainScreen:
    with open_store(db) as s:
        store_fixed_simulation(s)
    return TrainScreen()


def set_named(db: Path, name: str):  # type: ignore[no-untyped-def]
    with open_store(db) as s:
        return get_set(s, name)


def first_id(db: Path, sql: str) -> int:
    with open_store(db) as s:
        return int(raw_sql.query(s, sql)[0][0])


def status_has(app: CuratorApp, word: str) -> bool:
    from textual.widgets import Static

    try:
        content = app.screen.query_one("#status", Static).content
    except Exception:
        return False
    return word in str(content)


SCREENS = {
    "home": opens(lambda db: None, home_loaded),
    "label": opens(
        lambda db: LabelScreen(set_named(db, "gt-sample")),
        lambda app: (
            isinstance(app.screen, LabelScreen)
            and app.screen.view is not None
            and status_has(app, "to do")
        ),
    ),
    "label-open": opens(
        lambda db: LabelScreen(set_named(db, "open-sample")),
        lambda app: (
            isinstance(app.screen, LabelScreen)
            and app.screen.view is not None
            and status_has(app, "to do")
        ),
    ),
    "review": opens(
        lambda db: ReviewScreen(set_named(db, "gt-sample")),
        lambda app: (
            isinstance(app.screen, ReviewScreen)
            and app.screen.conflicts
            and "#" in str(app.screen.query_one("#votes").content)
        ),  # type: ignore[attr-defined]
    ),
    "audit": opens(
        lambda db: AuditScreen(set_named(db, "audit-sample")),
        lambda app: isinstance(app.screen, AuditScreen) and status_has(app, "judged"),
    ),
    "agreement": opens(
        lambda db: AgreementScreen(set_named(db, "gt-sample")),
        lambda app: isinstance(app.screen, AgreementScreen) and status_has(app, "annotators"),
    ),
    "kernel-detail": opens(
        lambda db: ItemDetailScreen(first_id(db, "SELECT item_id FROM kernels ORDER BY 1")),
        lambda app: isinstance(app.screen, ItemDetailScreen) and app.screen.view is not None,
    ),
    "ir-detail": opens(
        lambda db: ItemDetailScreen(first_id(db, "SELECT item_id FROM ir_modules ORDER BY 1")),
        lambda app: isinstance(app.screen, ItemDetailScreen) and app.screen.view is not None,
    ),
    "search": opens(
        lambda db: SearchScreen(set_named(db, "inbox"), '"speed up" cache'),
        lambda app: isinstance(app.screen, SearchScreen) and status_has(app, "matches"),
    ),
    "charts": opens(
        lambda db: ChartsScreen(set_named(db, "gt-sample")),
        lambda app: isinstance(app.screen, ChartsScreen) and app.screen.chart is not None,
    ),
    "train": opens(
        lambda db: TrainScreen(),
        lambda app: (
            isinstance(app.screen, TrainScreen)
            and status_has(app, "commit sets")
            and "student" in str(app.screen.query_one("#models").content)  # type: ignore[attr-defined]
            and "simulate" in str(app.screen.query_one("#al-note").content)  # type: ignore[attr-defined]
        ),
    ),
    # the active-learning curve given the whole screen by c
    "train-al-curve": then_press(
        opens(
            with_simulation,
            lambda app: (
                isinstance(app.screen, TrainScreen)
                and status_has(app, "commit sets")
                and app.screen.al_chart is not None
            ),
        ),
        "c",
        lambda app: not app.screen.query_one("#settings").display,
    ),
}


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("name", list(SCREENS))
def test_screen_looks_as_pinned(snap_compare, db: Path, name: str, size: tuple[int, int]) -> None:  # type: ignore[no-untyped-def]
    app = CuratorApp(db, "dave")
    assert snap_compare(app, terminal_size=size, run_before=SCREENS[name](db))
