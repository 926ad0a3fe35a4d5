"""The app (Textual, driven headless by Pilot) on a store the size annotators open every
day, against the same steps on a store ten times smaller measured in the same run.

Usage (from the repository root)::

    python tests/benchmarks/bench_tui_scale.py [--quick] [--scale F] [--dir DIR] [--keep]

The stores are built by ``bench_store_scale.build`` (200,000 commits at ``--scale 1``,
each predicted by ``keyword@5`` and two more labelers, kernels, IR modules, 20 routed
blind sets and their votes), plus what the app is timed on:

- ``daily``: 500 commits, open (not blind), every item voted by all of three
  annotators (3 votes per item), ``ben`` and ``cat`` on 400 items, ``ann`` (the one
  running the app) on the first 200: ``ann`` resumes at the 201st;
- ``routed``: 2,000 commits, routed, not blind; ``blind``: 2,000 commits, blind, all
  annotators see every item;
- ``audit``: an audit draw of ``keyword@5``'s perf calls (``draw_audit``);
- one commit with a 40,000-line diff (about 2.5 MB).

Then the app is started for ``ann`` and timed, step by step, until what the step shows
is on screen:

- ``home rows``: the app starts until the home screen lists every set;
- ``home counts``/``home agreement``: every set's counts, then its kappa/alpha, shown;
- ``open label``: enter on ``daily`` until the first item to do is shown;
- ``vote x20``: twenty votes in a row, each until the next item is shown (and the
  slowest one, ``vote max``);
- ``label / search``: ``/``, ``cache``, enter on the label screen until the set's hits
  are offered;
- ``detail big diff``: ``g #ID`` until the detail of the big-diff commit is shown;
  ``show all big diff``: ``f`` there until every line is shown;
- ``open routed``/``open blind``: enter on those sets until their first item is shown;
- ``search /``: ``/``, ``cache``, enter until the hits of the whole store are listed;
- ``agreement``/``audit``: ``a`` on ``daily`` and ``t`` on ``audit`` until the figures are in;
- ``train``: ``m`` until the teachers, sets, models and the AL note are shown;
- ``home ... +300 sets``: the app started again once 300 more sets of 100 commits each
  are stored (drawn sets, splits and audits pile up), until its home screen is filled in.

Beside each time, ``block`` is the longest the event loop did not run (a probe task
that sleeps 5 ms and measures how late it wakes): anything over about 100 ms is work
on the event loop that should be in a worker. ``--quick`` runs 1/100 and 1/1000 of
the full size (seconds). This is a benchmark, not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from annotation.audit import draw_audit  # noqa: E402
from store import open_store  # noqa: E402
from store.bulk import bulk_insert_commits  # noqa: E402
from store.records import CommitRow, PredictionRow  # noqa: E402
from store.sets import NewSet, create_set  # noqa: E402
from store.votes import VoteRow, append_votes  # noqa: E402
from tests import raw_sql  # noqa: E402
from tests.benchmarks.bench_store_scale import build  # noqa: E402
from tests.tui_helpers import screen_text  # noqa: E402

ANNOTATOR = "ann"
STEP_TIMEOUT_S = float(os.environ.get("BENCH_STEP_TIMEOUT", "300"))
BIG_DIFF_LINES = 40_000
BLOCK_MS = 100.0
EXTRA_SETS = 300


def _big_commit() -> CommitRow:
    path = "src/huge/generated.c"
    lines = [f"--- a/{path}", f"+++ b/{path}", f"@@ -1,1 +1,{BIG_DIFF_LINES} @@"]
    lines += [
        f"+static int table_{i} = {i * 7 % 1000}; /* generated cache entry */"
        for i in range(BIG_DIFF_LINES)
    ]
    diff = "\n".join(lines)
    message = "Regenerate the lookup tables\n\nFaster start-up: the cache is precomputed."
    return CommitRow(
        source="https://github.com/org-big/huge",
        sha=hashlib.sha1(b"big-diff").hexdigest(),
        branch="main",
        author_date="2024-05-01T12:00:00+00:00",
        message=message,
        diff=diff,
        file=path,
        files=[path],
        language="c",
        functions=[],
        code_before="",
        code_after="",
        added=BIG_DIFF_LINES,
        deleted=0,
        model_input=f"{message}\n{diff[:400]}",
        function_md5=None,
        diff_hash=hashlib.md5(b"big-diff").hexdigest(),
        predictions=[PredictionRow("keyword@5", "perf", 1.0, {})],
    )


def prepare(path: Path, fraction: float) -> dict[str, Any]:
    """The scale store at ``fraction`` with the sets and the item the app is timed on."""
    info = build(path, fraction)
    started = time.perf_counter()
    with open_store(path) as store:
        bulk_insert_commits(store, [_big_commit()])
        big = int(
            raw_sql.scalar(
                store,
                "SELECT id FROM items WHERE key = ?",
                (hashlib.sha1(b"big-diff").hexdigest(),),
            )
        )
        commits = [
            r[0]
            for r in raw_sql.query(
                store, "SELECT id FROM items WHERE kind = 'commit' ORDER BY id DESC LIMIT 4600"
            )
        ][1:]  # the newest commits (in no other set), the big one left out
        labels = ["perf", "non-perf"]
        size, other = min(500, len(commits) // 4), min(2000, len(commits) // 4)
        daily = create_set(
            store,
            NewSet("daily", "commit", labels, blind=False, overlap="all", votes_per_item=3),
            commits[:size],
        )
        votes = [
            VoteRow(item, who, labels[(item + k) % 2 if k else item % 2], set_id=daily.id)
            for j, item in enumerate(commits[:size])
            for k, who in enumerate(("ben", "cat", ANNOTATOR))
            if j < (size * 2 // 5 if who == ANNOTATOR else size * 4 // 5)
        ]
        append_votes(store, votes)
        create_set(
            store,
            NewSet("routed", "commit", labels, blind=False, overlap="routed"),
            commits[size : size + other],
        )
        create_set(
            store,
            NewSet("blind", "commit", labels, blind=True, overlap="all"),
            commits[size + other : size + 2 * other],
        )
        draw_audit(store, "audit", "keyword@5", size=min(200, info["commits"] // 20), seed=1)
    return {**info, "big": big, "extras_s": time.perf_counter() - started}


class Probe:
    """How late the event loop runs a task that sleeps 5 ms: the longest wait per step."""

    def __init__(self) -> None:
        self.step = ""
        self.worst: dict[str, float] = {}
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while True:
            before = time.perf_counter()
            await asyncio.sleep(0.005)
            late = time.perf_counter() - before - 0.005
            if late > self.worst.get(self.step, 0.0):
                self.worst[self.step] = late

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()


async def _until(check: Callable[[], object], what: str) -> None:
    started = time.perf_counter()
    while not check():
        if time.perf_counter() - started > STEP_TIMEOUT_S:
            raise SystemExit(f"the app never got to: {what} ({STEP_TIMEOUT_S:.0f} s)")
        await asyncio.sleep(0.005)


async def drive(db: Path, big: int) -> tuple[dict[str, float], dict[str, float]]:
    """Seconds per step and the longest event-loop block per step (seconds)."""
    from curator.tui.app import CuratorApp

    t: dict[str, float] = {}
    probe = Probe()
    probe.start()
    probe.step = "home rows"
    app = CuratorApp(db, ANNOTATOR)
    started = time.perf_counter()
    async with app.run_test(size=(160, 50)) as pilot:
        try:
            await _steps(app, pilot, probe, t, big, started)
        except SystemExit:
            print(screen_text(app), file=sys.stderr)
            raise
    probe.stop()
    return t, probe.worst


async def _home(app: Any, probe: Probe, t: dict[str, float], started: float, tag: str = "") -> None:
    """Until the home screen lists every set, shows their counts, then their agreement."""
    from textual.widgets import DataTable

    from curator.tui.screens.home import HomeScreen

    def home() -> HomeScreen:
        screen = app.screen
        assert isinstance(screen, HomeScreen)
        return screen

    def rows_shown() -> bool:
        if not isinstance(app.screen, HomeScreen):
            return False
        h = home()
        return bool(h.sets and h.query_one(DataTable).row_count == len(h.sets))

    def cells(column: str) -> list[str]:
        table = home().query_one(DataTable)
        return [str(table.get_cell(str(s.id), column)) for s in home().sets]

    probe.step = f"home rows{tag}"
    await _until(rows_shown, "the home screen's rows")
    t[f"home rows{tag}"] = time.perf_counter() - started
    probe.step = f"home counts{tag}"
    await _until(lambda: all(c not in ("…", "") for c in cells("items")), "set counts")
    t[f"home counts{tag}"] = time.perf_counter() - started
    probe.step = f"home agreement{tag}"
    await _until(lambda: all(c != "…" for c in cells("κ")), "agreement per set")
    t[f"home agreement{tag}"] = time.perf_counter() - started


async def drive_home(db: Path, tag: str) -> tuple[dict[str, float], dict[str, float]]:
    """The app started again, timed until its home screen is filled in."""
    from curator.tui.app import CuratorApp

    t: dict[str, float] = {}
    probe = Probe()
    probe.start()
    app = CuratorApp(db, ANNOTATOR)
    started = time.perf_counter()
    async with app.run_test(size=(160, 50)):
        await _home(app, probe, t, started, tag)
    probe.stop()
    return t, probe.worst


def add_sets(path: Path, count: int) -> None:
    """``count`` more sets of 100 commits each (drawn sets, splits and audits pile up)."""
    with open_store(path) as store:
        commits = [
            r[0]
            for r in raw_sql.query(store, "SELECT id FROM items WHERE kind = 'commit' ORDER BY id")
        ]
        step = max((len(commits) - 100) // max(count, 1), 1)
        for k in range(count):
            members = commits[k * step : k * step + 100]
            create_set(store, NewSet(f"extra{k:03d}", "commit", ["perf", "non-perf"]), members)


async def _steps(
    app: Any, pilot: Any, probe: Probe, t: dict[str, float], big: int, started: float
) -> None:
    """The timed steps (see the module's docstring)."""
    from textual.widgets import DataTable, Input, ProgressBar, Static

    from curator.tui.screens.agreement import AgreementScreen
    from curator.tui.screens.audit import AuditScreen
    from curator.tui.screens.detail import ItemDetailScreen
    from curator.tui.screens.home import HomeScreen
    from curator.tui.screens.label import LabelScreen
    from curator.tui.screens.prompts import ChoicePrompt
    from curator.tui.screens.search import SearchScreen
    from curator.tui.screens.train import TrainScreen
    from curator.tui.widgets.item_panel import ItemPanel

    def home() -> HomeScreen | None:
        return app.screen if isinstance(app.screen, HomeScreen) else None

    await _home(app, probe, t, started)

    async def select(name: str) -> None:
        h = home()
        assert h is not None
        row = next(i for i, s in enumerate(h.sets) if s.name == name)
        h.query_one(DataTable).move_cursor(row=row)
        await pilot.pause()

    async def back_home() -> None:
        while home() is None:
            await pilot.press("escape")
            await pilot.pause()

    # Label: open, then 20 votes in a row.
    await select("daily")
    probe.step = "open label"
    started = time.perf_counter()
    await pilot.press("enter")

    def label() -> LabelScreen | None:
        s = app.screen
        return s if isinstance(s, LabelScreen) and s.view and not s.busy else None

    await _until(label, "the label screen's first item")
    t["open label"] = time.perf_counter() - started
    probe.step = "vote x20"
    worst = 0.0
    started = time.perf_counter()
    for _ in range(20):
        screen = label()
        assert screen is not None and screen.view is not None
        shown, one = screen.view.item_id, time.perf_counter()
        await pilot.press("1")
        await _until(lambda: (s := label()) and s.view and s.view.item_id != shown, "next item")  # noqa: B023
        worst = max(worst, time.perf_counter() - one)
    t["vote x20"] = time.perf_counter() - started
    t["vote max"] = worst
    await pilot.press("slash")
    await pilot.press(*"cache")
    probe.step = "label / search"
    started = time.perf_counter()
    await pilot.press("enter")
    await _until(lambda: isinstance(app.screen, ChoicePrompt), "the set's search hits")
    t["label / search"] = time.perf_counter() - started
    await back_home()

    # The detail of the big-diff commit, by g #ID.
    await pilot.press("g")
    await pilot.press(*f"#{big}")
    probe.step = "detail big diff"
    started = time.perf_counter()
    await pilot.press("enter")

    def detail_shown() -> bool:
        s = app.screen
        return isinstance(s, ItemDetailScreen) and s.view is not None

    await _until(detail_shown, "the big item's detail")
    await pilot.pause()
    t["detail big diff"] = time.perf_counter() - started
    probe.step = "show all big diff"
    started = time.perf_counter()
    await pilot.press("f")
    await _until(lambda: app.screen.query_one(ItemPanel).showing_all, "every line shown")
    await pilot.pause()
    t["show all big diff"] = time.perf_counter() - started
    await back_home()

    # The routed and the blind set's label screens.
    for name in ("routed", "blind"):
        await select(name)
        probe.step = f"open {name}"
        started = time.perf_counter()
        await pilot.press("enter")
        await _until(label, f"the first item of {name}")
        t[f"open {name}"] = time.perf_counter() - started
        await back_home()

    # Search the whole store.
    await pilot.press("slash")
    await _until(lambda: isinstance(app.screen, SearchScreen), "the search screen")
    await pilot.press(*"cache")
    probe.step = "search /"
    started = time.perf_counter()
    await pilot.press("enter")

    def hits_shown() -> bool:
        s = app.screen
        if not isinstance(s, SearchScreen):
            return False
        status = s.query_one("#status", Static).render()
        return "for 'cache'" in str(status) and s.query_one(DataTable).row_count > 0

    await _until(hits_shown, "the search hits")
    t["search /"] = time.perf_counter() - started
    assert isinstance(app.screen, SearchScreen)
    app.screen.query_one(Input).blur()
    await back_home()

    # Agreement and audit reports.
    def report_in(kind: type) -> bool:
        s = app.screen
        return isinstance(s, kind) and not s.query_one("#loading", ProgressBar).display

    for step, name, key, kind in (
        ("agreement", "daily", "a", AgreementScreen),
        ("audit", "audit", "t", AuditScreen),
    ):
        await select(name)
        probe.step = step
        started = time.perf_counter()
        await pilot.press(key)
        await _until(lambda: report_in(kind), step)  # noqa: B023
        t[step] = time.perf_counter() - started
        await back_home()

    # Train.
    probe.step = "train"
    started = time.perf_counter()
    await pilot.press("m")

    def train_in() -> bool:
        s = app.screen
        if not isinstance(s, TrainScreen) or not s.loaded:
            return False
        return bool(str(s.query_one("#models", Static).render()).strip())

    await _until(train_in, "the train screen's choices and models")
    t["train"] = time.perf_counter() - started
    probe.step = "quit"


def run(db: Path, fraction: float) -> tuple[dict[str, Any], dict[str, float], dict[str, float]]:
    info = prepare(db, fraction)
    times, blocks = asyncio.run(drive(db, info["big"]))
    add_sets(db, EXTRA_SETS)
    more, more_blocks = asyncio.run(drive_home(db, f" +{EXTRA_SETS} sets"))
    return info, {**times, **more}, {**blocks, **more_blocks}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1/100 and 1/1000 of the size")
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of 200,000 commits")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/tui-scale"))
    parser.add_argument("--keep", action="store_true", help="keep the stores afterwards")
    args = parser.parse_args()
    scale = 0.01 if args.quick else args.scale
    args.dir.mkdir(parents=True, exist_ok=True)
    results = []
    for name, fraction in (("full", scale), ("tenth", scale / 10)):
        db = args.dir / f"tui-{name}.db"
        info, times, blocks = run(db, fraction)
        print(
            f"{name}: {info['commits']:,} commits, {info['sets'] + 4} sets; built in"
            f" {info['build_s'] + info['extras_s']:.1f} s",
            flush=True,
        )
        results.append((times, blocks))
        if not args.keep:
            for suffix in ("", "-wal", "-shm"):
                Path(str(db) + suffix).unlink(missing_ok=True)
    (full, full_block), (tenth, tenth_block) = results
    print(f"\n{'step':<26}{'full s':>9}{'block ms':>10}{'tenth s':>10}{'block ms':>10}")
    for step in full:
        fb = full_block.get(step, 0.0) * 1000
        tb = tenth_block.get(step, 0.0) * 1000
        flag = "  <- blocks" if max(fb, tb) > BLOCK_MS else ""
        print(f"{step:<26}{full[step]:>9.3f}{fb:>10.0f}{tenth[step]:>10.3f}{tb:>10.0f}{flag}")


if __name__ == "__main__":
    main()
