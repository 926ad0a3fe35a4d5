"""How fast the app opens a huge set and moves to the next item.

Builds (once, cached under build/) a store whose one set holds N commit items (1,000,000
by default), of which the annotator has already labeled the first 10%, then measures
what the label screen does, through the app's own service:

- open: resume the queue after the annotator's last vote and load the item on screen;
- next: cast a vote, advance the queue, load the next item;

against a baseline measured in the same run: a queue that reads the whole set's
membership and the annotator's votes into memory to find the next unlabeled item.
Then the same two operations through the running app (Textual Pilot, headless).

    python tests/benchmarks/bench_tui.py [--items N] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from curator.tui.app import CuratorApp  # noqa: E402
from curator.tui.screens.label import LabelScreen  # noqa: E402
from curator.tui.service import CurationService  # noqa: E402
from store import Store, open_store  # noqa: E402
from store.items import ImportedItem, insert_imported_items  # noqa: E402
from store.sets import NewSet, create_set  # noqa: E402
from store.votes import VoteRow, append_votes  # noqa: E402
from tests import raw_sql  # noqa: E402

ANNOTATOR = "bench"
CHUNK = 50_000


def build(path: Path, n: int) -> Path:
    """A store with one set of ``n`` commits, the first 10% labeled by ``ANNOTATOR``."""
    if path.exists():
        return path
    tmp = path.with_suffix(".building")
    for leftover in tmp.parent.glob(tmp.name + "*"):
        leftover.unlink()
    with open_store(tmp) as store:
        ids: list[int] = []
        for start in range(0, n, CHUNK):
            items = [
                ImportedItem(
                    kind="commit",
                    key=f"{i:040x}",
                    source=f"https://example.org/r{i % 997}",
                    language=("python", "java", "cpp")[i % 3],
                    path=f"src/m{i % 50}.py",
                    payload={
                        "message": f"Change {i}: avoid a copy in the hot path of module {i % 50}",
                        "model_input": f"change {i}",
                        "diff": f"@@ -1 +1 @@\n-copy(x{i})\n+view(x{i})\n",
                        "file": f"src/m{i % 50}.py",
                    },
                    provenance={},
                )
                for i in range(start, min(n, start + CHUNK))
            ]
            ids.extend(item_id for _, item_id in insert_imported_items(store, items))
        set_row = create_set(
            store, NewSet(name="big", kind="commit", labels=["perf", "non-perf"]), ids
        )
        done = ids[: n // 10]
        for start in range(0, len(done), CHUNK):
            append_votes(
                store,
                [
                    VoteRow(item_id=i, annotator=ANNOTATOR, label="non-perf", set_id=set_row.id)
                    for i in done[start : start + CHUNK]
                ],
            )
    for suffix in ("", "-wal", "-shm"):
        src = Path(str(tmp) + suffix)
        if src.exists():
            src.replace(Path(str(path) + suffix))
    return path


def naive_next(store: Store, set_id: int, annotator: str) -> int | None:
    """The baseline: every member and every vote of the annotator read into memory."""
    members = [
        r[0]
        for r in raw_sql.connection(store).execute(
            "SELECT item_id FROM set_items WHERE set_id = ? ORDER BY position", (set_id,)
        )
    ]
    voted = {
        r[0]
        for r in raw_sql.connection(store).execute(
            "SELECT item_id FROM live_votes WHERE annotator = ? AND role = 'annotator'",
            (annotator,),
        )
    }
    return next((i for i in members if i not in voted), None)


def ms(samples: list[float]) -> dict[str, float]:
    return {
        "median_ms": round(statistics.median(samples) * 1000, 2),
        "p95_ms": round(sorted(samples)[int(0.95 * (len(samples) - 1))] * 1000, 2),
    }


def service_figures(db: Path, votes: int, opens: int) -> dict[str, object]:
    service = CurationService(db, ANNOTATOR)
    set_row = service.set_row("big")
    open_times: list[float] = []
    for _ in range(opens):
        t0 = time.perf_counter()
        cursor, entry = service.open_queue(set_row)
        assert entry is not None
        view = service.item(set_row, entry.item_id)
        open_times.append(time.perf_counter() - t0)
        assert view is not None
    next_times: list[float] = []
    for _ in range(votes):
        assert cursor.current is not None
        t0 = time.perf_counter()
        service.vote(set_row, cursor.current.item_id, "perf")
        entry = service.advance(cursor)
        assert entry is not None
        service.item(set_row, entry.item_id)
        next_times.append(time.perf_counter() - t0)
    naive_times: list[float] = []
    with open_store(db) as store:
        for _ in range(max(3, opens // 3)):
            t0 = time.perf_counter()
            first = naive_next(store, set_row.id, ANNOTATOR)
            naive_times.append(time.perf_counter() - t0)
        assert first == cursor.current.item_id if cursor.current else True
    service.close()
    return {
        "open": ms(open_times),
        "next": ms(next_times),
        "naive_next": ms(naive_times),
        "next_speedup_vs_naive": round(
            statistics.median(naive_times) / statistics.median(next_times), 1
        ),
    }


async def app_figures(db: Path, votes: int) -> dict[str, object]:
    """The same through the running app: from the vote key reaching the label screen to
    the next item drawn (the Pilot's own key-press pacing is left out)."""
    app = CuratorApp(db, ANNOTATOR, open_set="big")
    t0 = time.perf_counter()
    async with app.run_test() as pilot:

        def shown() -> int | None:
            s = app.screen
            return s.view.item_id if isinstance(s, LabelScreen) and s.view and not s.busy else None

        while shown() is None:
            await asyncio.sleep(0.001)
        opened = time.perf_counter() - t0
        screen = app.screen
        assert isinstance(screen, LabelScreen)
        marks: dict[str, float] = {}
        vote, show = screen.vote, screen._show

        def timed_vote(label: str) -> None:
            marks["key"] = time.perf_counter()
            vote(label)

        def timed_show(*args: object) -> None:
            show(*args)  # type: ignore[arg-type]
            marks["shown"] = time.perf_counter()

        screen.vote = timed_vote  # type: ignore[method-assign]
        screen._show = timed_show  # type: ignore[method-assign]
        samples = []
        for _ in range(votes):
            before = shown()
            marks.clear()
            await pilot.press("1")
            while shown() in (None, before) or "shown" not in marks:
                await asyncio.sleep(0.001)
            samples.append(marks["shown"] - marks["key"])
    return {"app_start_to_first_item_s": round(opened, 2), "key_to_next_item": ms(samples)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true", help="20,000 items, few samples")
    parser.add_argument("--db", type=Path, default=None)
    args = parser.parse_args()
    n = 20_000 if args.quick else args.items
    db = args.db or ROOT / "build" / f"bench-tui-{n}.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    build(db, n)
    built = time.perf_counter() - t0
    votes, opens = (20, 5) if args.quick else (200, 20)
    result: dict[str, object] = {"items": n, "build_s": round(built, 1)}
    result.update(service_figures(db, votes, opens))
    result.update(asyncio.run(app_figures(db, votes)))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
