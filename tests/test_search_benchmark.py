"""The search benchmark's short form: it builds, indexes through the migration and
queries a small store, and the index finds what was planted. No timing is asserted;
``python tests/benchmarks/bench_search.py`` measures."""

from __future__ import annotations

from pathlib import Path

from curator.search import SearchRequest, run_search
from store import open_store
from store.search import like_scan
from tests.benchmarks import bench_search


def test_benchmark_index_finds_exactly_the_planted_phrase(tmp_path: Path) -> None:
    db = bench_search.build(tmp_path / "bench.db", 1_000)
    built = bench_search.rebuild_as_migration(db)
    assert built["progress_calls"] >= 5 and built["index_mb"] > 0
    planted = {f"{i:040x}" for i in range(0, 1_000, bench_search.PHRASE_EVERY)}
    with open_store(db) as s:
        found = run_search(s, SearchRequest(f'"{bench_search.PHRASE}"', limit=100))
        assert {h.key for h in found.hits} == planted
        assert len(like_scan(s, bench_search.PHRASE, limit=100)) == len(planted)
    figures = bench_search.query_figures(db, repeat=2)
    assert figures["fts phrase"]["hits"] == len(planted)  # type: ignore[index]
    assert figures["like miss"]["hits"] == 0  # type: ignore[index]
