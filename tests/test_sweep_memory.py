"""Work that reads a whole file or a whole store, bounded.

``curator import items`` (plain and labeled) reads its file as a stream, twice (check
every line, then write in chunks in one transaction), so its memory does not grow with
the file while a bad line, or a file changed in between, still stores nothing.
``audit draw`` and ``set split`` read their pool grouped by SQLite and draw exactly what
the draw over one ``Candidate`` per item drew (a copy of that code is kept here), and
``predict``'s "already predicted" reads the index at the ids asked about alone."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from annotation.audit import cochran_size, draw_audit
from annotation.importing import FileImportError, import_items_file
from annotation.labels import POSITIVE_LABEL
from annotation.sampling import SamplingError, allocate, labelers_for, strata_fields, stratum_of
from annotation.sets import (
    SetError,
    create_split,
    require_set,
    resolve_latest,
    resolve_strata,
    stratum_candidates,
    without_repository,
)
from annotation.splits import parse_parts
from curator.prediction import items_to_predict
from store import Store, open_store
from store.sets import Candidate, candidates, set_item_ids
from store.votes import VoteRow, append_votes
from tests import raw_sql
from tests.test_sweep_draw import build_varied

ROOT = Path(__file__).resolve().parents[1]
CURATOR = ROOT / ".venv" / "bin" / "curator"

# the peak RSS of one child process, measured by a parent that has no other child (the
# test process's own RUSAGE_CHILDREN holds the peak of every child any test waited for)
PEAK = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    "print(done.stdout + done.stderr, file=sys.stderr)\n"
)


def _items_file(path: Path, count: int) -> Path:
    """``count`` commits of about 8 KB each (a message, a diff and a 0/1 label)."""
    with path.open("w") as fh:
        for i in range(count):
            diff = "".join(f"+line {i} {j} {'x' * 70}\n" for j in range(100))
            row = {"id": f"c{i}", "message": f"speed up {i}", "diff": diff, "target": i % 2}
            fh.write(json.dumps(row) + "\n")
    return path


def _peak_kib(db: Path, path: Path, *options: str) -> int:
    """The peak RSS (KiB) of ``curator import items PATH`` run as a user runs it."""
    command = [str(CURATOR), "--db", str(db), "import", "items", str(path), *options]
    done = subprocess.run(
        [sys.executable, "-c", PEAK, *command], capture_output=True, text=True, check=True
    )
    code, peak = done.stdout.split()
    assert code == "0", done.stderr
    return int(peak)


@pytest.mark.parametrize(
    "options",
    [(), ("--set", "gt", "--label-field", "target", "--map", "1=perf,0=non-perf")],
    ids=["items", "labeled"],
)
def test_import_memory_does_not_grow_with_the_file(tmp_path: Path, options: tuple[str]) -> None:
    small = _items_file(tmp_path / "small.jsonl", 250)  # ~2 MB
    big = _items_file(tmp_path / "big.jsonl", 2500)  # ~20 MB
    assert big.stat().st_size > 19 * 2**20
    small_peak = _peak_kib(tmp_path / "small.db", small, *options)
    big_peak = _peak_kib(tmp_path / "big.db", big, *options)
    # holding the file took about 2.5 times its size (50 MB more here); read as a stream
    # the ten times bigger file costs a few MB more (its ids, a chunk, SQLite's cache)
    assert big_peak < small_peak + 16 * 1024, (small_peak, big_peak)
    print(f"peak RSS: {small_peak} KiB (2 MB file), {big_peak} KiB (20 MB file)")
    with open_store(tmp_path / "big.db") as store:
        assert raw_sql.scalar(store, "SELECT COUNT(*) FROM items") == 2500
        votes = raw_sql.scalar(store, "SELECT COUNT(*) FROM votes")
    assert votes == (2500 if options else 0)


def _lines(path: Path, count: int, bad: dict[int, str] | None = None) -> Path:
    rows = [json.dumps({"id": f"k{i}", "message": f"m {i}"}) for i in range(count)]
    for number, text in (bad or {}).items():
        rows[number - 1] = text
    path.write_text("\n".join(rows) + "\n")
    return path


def test_bad_lines_far_apart_are_all_named_and_nothing_is_stored(
    tmp_path: Path, store: Store
) -> None:
    path = _lines(
        tmp_path / "items.jsonl",
        4500,
        {3: '{"id": "k0", "message": "other"}', 4400: "{not json", 4500: '{"id": "k9"}'},
    )
    with pytest.raises(FileImportError) as caught:
        import_items_file(store, path, "commit", lambda m, d, path=None: m, "gt")
    assert [e.split(": ", 1)[0] for e in caught.value.errors] == [
        f"{path}:3",
        f"{path}:4400",
        f"{path}:4500",
    ]
    assert caught.value.errors[0].endswith("already on line 1 (a different record)")
    assert raw_sql.scalar(store, "SELECT COUNT(*) FROM items") == 0
    assert raw_sql.scalar(store, "SELECT COUNT(*) FROM sets") == 0


def test_a_file_changed_between_the_check_and_the_write_stores_nothing(
    tmp_path: Path, store: Store
) -> None:
    path = _lines(tmp_path / "items.jsonl", 4500)
    told: list[tuple[int, int]] = []

    def progress(done: int, total: int) -> None:
        told.append((done, total))
        if done == 0:  # checked: now the file is rewritten with a bad last line
            _lines(path, 4500, {4500: "{broken"})

    with pytest.raises(FileImportError) as caught:
        import_items_file(store, path, "commit", lambda m, d, path=None: m, "gt", progress=progress)
    assert "changed while it was imported" in caught.value.errors[0]
    assert f"{path}:4500: " in caught.value.errors[1]
    assert told[:3] == [(0, 4500), (2000, 4500), (4000, 4500)]
    assert raw_sql.scalar(store, "SELECT COUNT(*) FROM items") == 0
    assert raw_sql.scalar(store, "SELECT COUNT(*) FROM sets") == 0


def test_a_utf16_csv_with_a_quoted_multiline_field_is_read_as_a_stream(
    tmp_path: Path, store: Store
) -> None:
    path = tmp_path / "export.csv"
    text = 'id;message\r\n\r\nc1;"two\r\nlines"\r\n\r\nc2;plain\r\n'
    path.write_bytes(text.encode("utf-16"))
    result = import_items_file(store, path, "commit", lambda m, d, path=None: m)
    assert result.stored == 2
    rows = raw_sql.query(
        store, "SELECT i.key, c.message FROM items i JOIN commits c ON c.item_id = i.id"
    )
    assert sorted((str(k), str(m)) for k, m in rows) == [("c1", "two\nlines"), ("c2", "plain")]


# --- audit draw and split: the pool read grouped by SQLite, the same draws as before ---

AUDITS: dict[str, dict[str, Any]] = {
    "plain": {"labeler": "keyword@latest"},
    "language": {"labeler": "keyword@latest", "stratify": ["language"]},
    "language,keyword": {"labeler": "student@latest", "stratify": ["language", "keyword"]},
    "repo,stars": {"labeler": "student@2", "stratify": ["repo", "stars"], "size": 25},
    "pred:student": {"labeler": "keyword@1", "stratify": ["pred:student@latest"]},
    "keyword,pred:rules": {
        "labeler": "rules@1",
        "label": "unsure",
        "stratify": ["keyword", "pred:rules@1"],
    },
    "audited labeler as stratum": {"labeler": "keyword@latest", "stratify": ["keyword"]},
    "from-set": {"labeler": "keyword@2", "stratify": ["language"], "from_set": "pool"},
    "unlabeled": {"labeler": "keyword@latest", "stratify": ["repo"], "unlabeled": True},
    "unlabeled, from-set, margin": {
        "labeler": "student@1",
        "from_set": "pool",
        "unlabeled": True,
        "margin": 0.1,
    },
    "unpredicted stratum": {"labeler": "keyword@latest", "stratify": ["pred:nobody@1"]},
    "label nobody gave": {"labeler": "keyword@latest", "label": "unsure"},
    "labeler with no labels": {"labeler": "nobody@1"},
    "too many": {"labeler": "rules@1", "size": 500},
}
AUDIT_SEEDS = range(30)


def _old_stratified_sample(
    items: list[Candidate], n: int, fields: list[str], rng: random.Random
) -> tuple[list[Candidate], dict[str, int]]:
    """``annotation.sampling.stratified_sample`` as it was before the grouped draw."""
    key = stratum_of(fields)
    groups: dict[str, list[Candidate]] = defaultdict(list)
    for c in sorted(items, key=lambda c: c.item_id):
        groups[key(c)].append(c)
    quota = allocate({k: len(v) for k, v in groups.items()}, n)
    chosen: list[Candidate] = []
    for k in sorted(groups):
        chosen.extend(rng.sample(groups[k], quota[k]))
    rng.shuffle(chosen)
    return chosen, {k: quota[k] for k in sorted(quota) if quota[k]}


def _old_audit_draw(store: Store, option: dict[str, Any], seed: int) -> dict[str, Any]:
    """The members ``draw_audit`` picked before the change (its code, one ``Candidate``
    per pool item), or its error."""
    kind = "commit"
    within = require_set(store, option["from_set"]) if option.get("from_set") else None
    labeler = resolve_latest(store, option["labeler"])
    label = option.get("label") or POSITIVE_LABEL[kind]
    fields = strata_fields(option.get("stratify") or [])
    pinned = resolve_strata(store, labelers_for(fields))
    unlabeled = bool(option.get("unlabeled"))
    found = stratum_candidates(
        store,
        kind,
        [labeler, *pinned],
        within_set=within.id if within else None,
        pinned=pinned,
        unvoted_only=unlabeled,
    )
    items = [c for c in found if c.predictions.get(labeler) == label]
    if not items:
        if not unlabeled and not any(labeler in c.predictions for c in found):
            return {"error": "labeled none"}
        return {"error": "none with the label"}
    for name in fields:
        asked = name[len("pred:") :] if name.startswith("pred:") else None
        if asked and not any(asked in c.predictions for c in items):
            return {"error": f"unpredicted {name} of {len(items)}"}
    size = option.get("size")
    n = size if size is not None else cochran_size(len(items), 0.95, option.get("margin", 0.05))
    if n > len(items):
        return {"error": f"too many: {n} of {len(items)}"}
    chosen, allocation = _old_stratified_sample(items, n, fields, random.Random(seed))
    return {
        "members": [c.item_id for c in chosen],
        "allocation": allocation,
        "population": len(items),
    }


def _audit_draw(store: Store, name: str, option: dict[str, Any], seed: int) -> dict[str, Any]:
    """What ``draw_audit`` draws now, in the old copy's terms."""
    try:
        drawn = draw_audit(
            store,
            name,
            option["labeler"],
            label=option.get("label"),
            margin=option.get("margin", 0.05),
            stratify=option.get("stratify"),
            seed=seed,
            size=option.get("size"),
            from_set=option.get("from_set"),
            unlabeled=bool(option.get("unlabeled")),
        )
    except (SamplingError, SetError) as exc:
        text = str(exc)
        if "has labeled no" in text:
            return {"error": "labeled none"}
        if "nothing to audit" in text:
            return {"error": "none with the label"}
        if "predicted none of the" in text:
            count = text.split("predicted none of the ")[1].split()[0]
            return {"error": f"unpredicted {option['stratify'][-1]} of {count}"}
        if text.startswith("asked for"):
            return {"error": f"too many: {text.split()[2]} of {text.split(' only ')[1].split()[0]}"}
        raise
    assert drawn.set_row.params["audit"]["population"] == drawn.population
    return {
        "members": set_item_ids(store, drawn.set_row.id),
        "allocation": drawn.allocation,
        "population": drawn.population,
    }


@pytest.fixture(scope="module")
def varied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    """``test_sweep_draw``'s store (languages, repositories, stars, labeler versions,
    sets ``dev`` and ``pool``), with votes on some items (``--unlabeled`` leaves them)."""
    with open_store(tmp_path_factory.mktemp("audit") / "varied.db") as store:
        build_varied(store)
        ids = [int(r[0]) for r in raw_sql.query(store, "SELECT id FROM items ORDER BY id")]
        append_votes(store, [VoteRow(i, "ann", "perf") for i in ids[::4]])
        yield store


def test_audit_draws_are_the_ones_the_per_item_draw_made(varied: Store) -> None:
    drawn = 0
    for combo, option in AUDITS.items():
        for seed in AUDIT_SEEDS:
            before = _old_audit_draw(varied, option, seed)
            now = _audit_draw(varied, f"audit-{len(AUDITS)}-{drawn}", option, seed)
            assert now == before, (combo, seed)
            drawn += "members" in now
    assert drawn >= 9 * len(AUDIT_SEEDS)  # most combinations draw (the rest: each error)


def _old_split(
    store: Store, parts: list[tuple[str, float]], seed: int, within: int | None
) -> dict[str, list[int]]:
    """``create_split``'s parts before the change: ``split_by_source`` over one
    ``Candidate`` per pool item, then each part shuffled by its seed."""
    by_source: dict[str, list[int]] = defaultdict(list)
    for c in candidates(store, "commit", within_set=within):
        by_source[c.source].append(c.item_id)
    sources = sorted(by_source)
    random.Random(seed).shuffle(sources)
    sources.sort(key=lambda s: -len(by_source[s]))
    total = sum(len(v) for v in by_source.values())
    assigned: dict[str, list[int]] = {name: [] for name, _ in parts}
    for source in sources:
        name = max(parts, key=lambda p: p[1] * total - len(assigned[p[0]]))[0]
        assigned[name].extend(sorted(by_source[source]))
    for name, ids in assigned.items():
        random.Random(f"{seed}:{name}").shuffle(ids)
    return assigned


def test_splits_are_the_ones_the_per_item_split_made(varied: Store) -> None:
    pool_id = require_set(varied, "pool").id
    for index, text in enumerate(("a:1,b:1", "dev1:10,eval1:10,train:80", "x:3,y:2,z:1")):
        for seed in range(10):
            for within in (None, "pool"):
                parts = parse_parts(text)
                names = [(f"s{index}-{seed}-{within}-{n}", share) for n, share in parts]
                before = _old_split(varied, names, seed, pool_id if within else None)
                created = create_split(varied, "commit", names, seed, within)
                assert {s.name: set_item_ids(varied, s.id) for s in created} == before
    members = candidates(varied, "commit", within_set=pool_id)
    loose = sum(1 for c in members if c.source.startswith("import:"))
    assert loose > 0
    assert without_repository(varied, "commit", "pool") == loose


# --- predict: "already predicted" looks at the ids asked about, not the whole store ---


def _predicted(store: Store, items: int, labeler: str = "kw@1") -> None:
    """``items`` commits, every one predicted by ``labeler`` (every third twice)."""
    conn = raw_sql.connection(store)
    twice = [*range(1, items + 1), *range(3, items + 1, 3)]
    with store.transaction():
        conn.executemany(
            "INSERT INTO items (id, kind, key, source, created_at)"
            " VALUES (?, 'commit', ?, 'r', 'x')",
            ((i, f"c{i}") for i in range(1, items + 1)),
        )
        conn.executemany(
            "INSERT INTO predictions (item_id, labeler, label, created_at)"
            " VALUES (?, ?, 'perf', 'x')",
            ((i, labeler) for i in twice),
        )


def _steps(store: Store, labeler: str, ids: list[int]) -> tuple[int, tuple[list[int], int]]:
    """SQLite's virtual-machine steps (in hundreds) :func:`items_to_predict` takes, and
    what it returns."""
    conn = raw_sql.connection(store)
    steps = [0]

    def step() -> int:
        steps[0] += 1
        return 0

    conn.set_progress_handler(step, 100)
    try:
        found = items_to_predict(store, labeler, ids)
    finally:
        conn.set_progress_handler(None, 0)
    return steps[0], found


def test_already_predicted_is_looked_up_for_the_ids_asked_about_alone(tmp_path: Path) -> None:
    asked = 3000
    dense = [*range(1, asked, 2), *range(asked + 1, 2 * asked, 2)]  # half of 1..2*asked
    sparse = list(range(1, 5 * asked, 5))  # one in five of 1..5*asked
    counts: dict[str, list[int]] = {"dense": [], "sparse": []}
    for items in (2 * 5 * asked // 2, 10 * asked):
        with open_store(tmp_path / f"{items}.db") as store:
            _predicted(store, items)
            for name, ids in (("dense", dense), ("sparse", sparse)):
                # an id twice, and one with no prediction (not even an item)
                steps, (todo, done) = _steps(store, "kw@1", [*ids, items + 7, ids[0]])
                assert (todo, done) == ([items + 7], len(ids)), name
                counts[name].append(steps)
            steps, (todo, done) = _steps(store, "other@1", sparse[:100])
            assert (todo, done) == (sparse[:100], 0)
    # a store twice as big (the labeler's predictions too): the same work, give or take
    # the index's depth, where reading every prediction of the labeler takes twice as much
    for name, (small, big) in counts.items():
        assert big < small * 1.3, (name, small, big)
