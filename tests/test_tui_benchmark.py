"""The app benchmark's short form: it runs end to end and its queue agrees with the
naive baseline. No timing is asserted; ``python tests/benchmarks/bench_tui.py`` measures."""

from __future__ import annotations

import asyncio
from pathlib import Path

from store import open_store
from store.sets import get_set
from tests import raw_sql
from tests.benchmarks import bench_tui


def test_benchmark_store_and_queue_agree_with_the_naive_baseline(tmp_path: Path) -> None:
    db = bench_tui.build(tmp_path / "bench.db", 2_000)
    with open_store(db) as s:
        set_row = get_set(s, "big")
        assert set_row is not None
        assert (
            raw_sql.scalar(s, "SELECT COUNT(*) FROM set_items WHERE set_id = ?", (set_row.id,))
            == 2_000
        )
        first_open = bench_tui.naive_next(s, set_row.id, bench_tui.ANNOTATOR)
        assert first_open is not None
    figures = bench_tui.service_figures(db, votes=10, opens=3)
    assert figures["next_speedup_vs_naive"] > 0
    with open_store(db) as s:
        # the service voted on exactly the 10 items after the 200 labeled ones, in order
        voted = [
            r[0]
            for r in raw_sql.query(
                s,
                "SELECT item_id FROM live_votes WHERE annotator = ? AND label = 'perf'"
                " ORDER BY item_id",
                (bench_tui.ANNOTATOR,),
            )
        ]
    assert voted == list(range(first_open, first_open + 10))
    app = asyncio.run(bench_tui.app_figures(db, votes=3))
    assert app["key_to_next_item"]["median_ms"] > 0  # type: ignore[index]
