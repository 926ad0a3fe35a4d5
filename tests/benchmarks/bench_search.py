"""How fast full-text search answers on a large store, against the LIKE scan it replaced.

Builds (once, cached under build/) a store of N commit items (1,000,000 by default) whose
messages and diffs are synthetic text: words drawn from a 5,000-word made-up vocabulary
with Zipf frequencies (rank r drawn with weight 1/r), 8-16 words a message, three
diff lines of 4-8 words; a two-word phrase is planted in 0.5% of the messages. Then,
in one run:

- the FTS5 index build of the existing store, as the migration does it (the indexes
  and triggers dropped, the store reopened with a progress callback): time and size;
- p50/p95 of ``curator search`` queries (``curator.search.run_search``, every index,
  bm25, snippets, limit 20): a mid-frequency word (vocabulary ranks 200-209, each in
  about 1.5% of items), the planted phrase, a rare word (ranks 3000-3009), a common
  word (ranks 1-5);
- the baseline: the app's old search, ``LIKE '%word%'`` over key, path and message
  (``store.search.like_scan``, the predicate of ``store.item_views.search_set``), for
  the same words and for a word no item holds (a full scan).

    python tests/benchmarks/bench_search.py [--items N] [--repeat R] [--quick]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from itertools import accumulate
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from store import Store, open_store  # noqa: E402
from store.items import ImportedItem, insert_imported_items  # noqa: E402
from store.migrations import MIGRATIONS  # noqa: E402
from store.search import (  # noqa: E402
    RANK_WINDOW,
    SOURCES,
    index_bytes,
    like_scan,
    search,
)
from tests import raw_sql  # noqa: E402

VOCABULARY = 5_000
CHUNK = 50_000
PHRASE_EVERY = 200
SEED = 17


def vocabulary() -> list[str]:
    """5,000 distinct made-up words (consonant-vowel syllables), rank order."""
    rng = random.Random(SEED)
    consonants, vowels = "bdfgklmnprstvz", "aeiou"
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < VOCABULARY:
        word = "".join(
            rng.choice(consonants) + rng.choice(vowels) for _ in range(rng.randint(2, 4))
        )
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


WORDS = vocabulary()
PHRASE = f"{WORDS[300]} {WORDS[301]}"
MID = WORDS[199:209]
RARE = WORDS[2999:3009]
COMMON = WORDS[0:5]
MISS = "qqqxqqq"


def texts(n: int, start: int = 0) -> list[tuple[str, str]]:
    """(message, diff) of items ``start`` .. ``start + n - 1``, the same on every run."""
    rng = random.Random(SEED * 1_000_003 + start)
    cum = list(accumulate(1 / r for r in range(1, VOCABULARY + 1)))
    out = []
    for i in range(start, start + n):
        words = rng.choices(WORDS, cum_weights=cum, k=rng.randint(8, 16))
        if i % PHRASE_EVERY == 0:
            words[len(words) // 2 : len(words) // 2] = PHRASE.split()
        lines = [
            ("+" if j % 2 else "-")
            + " ".join(rng.choices(WORDS, cum_weights=cum, k=rng.randint(4, 8)))
            for j in range(3)
        ]
        out.append((" ".join(words), "@@ -1,2 +1,2 @@\n" + "\n".join(lines) + "\n"))
    return out


def items(start: int, n: int) -> list[ImportedItem]:
    return [
        ImportedItem(
            kind="commit",
            key=f"{start + k:040x}",
            source=f"https://example.org/r{(start + k) % 997}",
            language="python",
            path=f"src/m{(start + k) % 50}.py",
            payload={"message": m, "diff": d, "model_input": m},
            provenance={},
        )
        for k, (m, d) in enumerate(texts(n, start))
    ]


def drop_indexes(store: Store) -> None:
    """Make the store look as one written before the search indexes existed."""
    version = next(v for v, name, _ in MIGRATIONS if name.startswith("search:"))
    conn = raw_sql.connection(store)
    for source in SOURCES:
        conn.execute(f"DROP TABLE IF EXISTS {source.fts}")
        for suffix in ("ai", "ad", "au"):
            conn.execute(f"DROP TRIGGER IF EXISTS {source.table}_{suffix}")
    conn.execute("DELETE FROM schema_version WHERE version >= ?", (version,))


def build(path: Path, n: int) -> Path:
    """A store of ``n`` synthetic commits, written without the search indexes (the
    benchmark then builds them as the migration does)."""
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".building")
    for leftover in tmp.parent.glob(tmp.name + "*"):
        leftover.unlink()
    with open_store(tmp) as store:
        drop_indexes(store)
        for start in range(0, n, CHUNK):
            insert_imported_items(store, items(start, min(CHUNK, n - start)))
        raw_sql.connection(store).execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for suffix in ("", "-wal", "-shm"):
        src = Path(str(tmp) + suffix)
        if src.exists():
            src.replace(Path(str(path) + suffix))
    return path


def rebuild_as_migration(db: Path) -> dict[str, object]:
    """Drop the indexes and their triggers, then reopen: the migration builds them for
    the existing rows. Returns the build time, the progress calls and the sizes."""
    with open_store(db) as store:
        drop_indexes(store)
        raw_sql.connection(store).execute("VACUUM")
    calls: list[tuple[str, int, int]] = []
    t0 = time.perf_counter()
    with open_store(db, progress=lambda *a: calls.append(a)) as store:
        seconds = time.perf_counter() - t0
        size = index_bytes(store)
        raw_sql.connection(store).execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return {
        "build_s": round(seconds, 2),
        "progress_calls": len(calls),
        "index_mb": round(size / 2**20, 1),
        "db_mb": round(db.stat().st_size / 2**20, 1),
    }


def write_overhead(folder: Path, n: int = 20_000) -> dict[str, object]:
    """Seconds to write ``n`` commits into an empty store with the indexes kept current
    by their triggers, and without indexes."""
    figures: dict[str, object] = {}
    for name, indexed in (("with indexes", True), ("without", False)):
        db = folder / f"bench-search-write-{name.replace(' ', '-')}.db"
        for old in folder.glob(db.name + "*"):
            old.unlink()
        batch = items(0, n)
        with open_store(db) as store:
            if not indexed:
                drop_indexes(store)
            t0 = time.perf_counter()
            insert_imported_items(store, batch)
            figures[name] = round(time.perf_counter() - t0, 2)
        for old in folder.glob(db.name + "*"):
            old.unlink()
    figures["items"] = n
    return figures


def timed(fn, repeat: int) -> tuple[dict[str, float], object]:  # type: ignore[no-untyped-def]
    samples, result = [], None
    for i in range(repeat):
        t0 = time.perf_counter()
        result = fn(i)
        samples.append(time.perf_counter() - t0)
    return {
        "p50_ms": round(statistics.median(samples) * 1000, 2),
        "p95_ms": round(sorted(samples)[int(0.95 * (len(samples) - 1))] * 1000, 2),
    }, result


def query_figures(db: Path, repeat: int, window: int = RANK_WINDOW) -> dict[str, object]:
    figures: dict[str, object] = {}
    with open_store(db) as store:
        ranked = {"window": window}
        fts = {
            "word": lambda i: MID[i % len(MID)],
            "phrase": lambda i: f'"{PHRASE}"',
            "rare word": lambda i: RARE[i % len(RARE)],
            "common word": lambda i: COMMON[i % len(COMMON)],
        }
        for name, query in fts.items():
            stats, hits = timed(
                lambda i, q=query: search(store, q(i), limit=20, window=ranked["window"]), repeat
            )
            figures[f"fts {name}"] = {**stats, "hits": len(hits.hits), "windowed": hits.windowed}  # type: ignore[arg-type]
        like = {
            "word": lambda i: MID[i % len(MID)],
            "phrase": lambda i: PHRASE,
            "rare word": lambda i: RARE[i % len(RARE)],
            "miss": lambda i: MISS,
        }
        for name, text in like.items():
            stats, hits = timed(lambda i, t=text: like_scan(store, t(i)), max(3, repeat // 5))
            figures[f"like {name}"] = {**stats, "hits": len(hits)}  # type: ignore[arg-type]
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=60)
    parser.add_argument("--quick", action="store_true", help="2,000 items, 10 repeats")
    parser.add_argument(
        "--windows", default=str(RANK_WINDOW), help="Ranking windows to compare, e.g. 1000,4000."
    )
    parser.add_argument(
        "--queries-only", action="store_true", help="Reuse the built store and its index."
    )
    args = parser.parse_args()
    n, repeat = (2_000, 10) if args.quick else (args.items, args.repeat)
    db = ROOT / "build" / f"bench-search-{n}.db"
    t0 = time.perf_counter()
    fresh = not db.exists()
    build(db, n)
    report: dict[str, object] = {"items": n}
    if fresh:
        report["store_build_with_triggers_s"] = round(time.perf_counter() - t0, 1)
    if not args.queries_only:
        report["write_s"] = write_overhead(db.parent, 2_000 if args.quick else 20_000)
        report["index"] = rebuild_as_migration(db)
    for window in (int(w) for w in args.windows.split(",")):
        q = query_figures(db, repeat, window)
        report[f"queries, window {window}"] = q
        report[f"speedup_p95, window {window}"] = {
            name: round(q[f"like {name}"]["p95_ms"] / max(q[f"fts {name}"]["p95_ms"], 1e-3), 1)  # type: ignore[index]
            for name in ("word", "phrase", "rare word")
        }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
