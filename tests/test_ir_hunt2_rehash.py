"""``curator mine ir --rehash``: a store whose IR keys were made by an older structural
hash brought up to date, duplicates merged as ingest merges them, and no vote lost.

An old store is made the way it came about: a module stored under the key the old hash
gave it (planted here), then an equal module mined under today's hash, stored a second
time because no item holds that key."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from store import open_store
from store.ir import IRModuleRow, save_ir_batch
from store.ir_rehash import rehash_ir
from store.votes import VoteRow, append_votes
from tests import raw_sql

MODULE = """\
define i32 @step(i32 %{a}) {{
entry:
  %{b} = add nsw i32 %{a}, 7
  %{c} = mul i32 %{b}, 3
  ret i32 %{c}
}}
"""
OTHER = """\
define i32 @twice(i32 %x) {
entry:
  %y = shl i32 %x, 1
  ret i32 %y
}
"""


def _write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


def _items(db: Path) -> list[tuple[int, str]]:
    with open_store(db) as store:
        return [
            (int(r[0]), str(r[1]))
            for r in raw_sql.query(store, "SELECT id, key FROM items WHERE kind = 'ir' ORDER BY id")
        ]


def _stale_store(cli, tmp_path: Path) -> tuple[Path, int, int, str]:  # type: ignore[no-untyped-def]
    """Two equal modules stored apart: #1 under an old key, #2 under today's hash."""
    db = tmp_path / "curator.db"
    first = _write(tmp_path / "a", "step.ll", MODULE.format(a="n", b="t", c="r"))
    assert cli("mine", "ir", str(first), "--db", str(db)).exit_code == 0
    [(old_id, new_hash)] = _items(db)
    with open_store(db) as store, store.transaction() as conn:
        conn.execute("UPDATE items SET key = 'old-hash-of-step' WHERE id = ?", (old_id,))
        conn.execute(
            "UPDATE ir_modules SET structural_hash = 'old-hash-of-step' WHERE item_id = ?",
            (old_id,),
        )
    second = _write(tmp_path / "b", "step_renamed.ll", MODULE.format(a="v", b="w", c="z"))
    assert cli("mine", "ir", str(second), "--db", str(db)).exit_code == 0
    items = _items(db)
    assert len(items) == 2 and items[1][1] == new_hash  # stored twice: the defect
    return db, old_id, items[1][0], new_hash


def test_rehash_updates_a_stale_key_and_merges_the_module_stored_twice(
    cli,  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    db, old_id, twin_id, new_hash = _stale_store(cli, tmp_path)
    result = cli("mine", "ir", "--rehash", "--db", str(db))
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == (
        "2 IR modules: 0 already current, 1 were rehashed,"
        " 1 were merged into the module they repeat"
    )
    assert _items(db) == [(old_id, new_hash)]
    with open_store(db) as store:
        inputs = raw_sql.query(store, "SELECT path, status, item_id FROM ir_inputs ORDER BY id")
        assert [tuple(r) for r in inputs] == [
            ("step.ll", "stored", old_id),
            ("step_renamed.ll", "duplicate", old_id),
        ]
        dup = raw_sql.query(store, "SELECT key, original_item_id, matched_on FROM duplicates")
        assert [(r[0].split("@")[0], r[1], r[2]) for r in dup] == [
            ("step_renamed.ll", old_id, "structural_hash")
        ]
        assert raw_sql.scalar(store, "SELECT COUNT(*) FROM ir_modules") == 1
        assert (
            raw_sql.scalar(
                store, "SELECT structural_hash FROM ir_modules WHERE item_id = ?", (old_id,)
            )
            == new_hash
        )
    # ingest finds the module again under today's hash: a third copy is a duplicate
    third = _write(tmp_path / "c", "step_again.ll", MODULE.format(a="p", b="q", c="s"))
    mined = cli("mine", "ir", str(third), "--db", str(db), "--json")
    assert json.loads(mined.stdout)["duplicates"] == 1
    assert _items(db) == [(old_id, new_hash)]
    # a second rehash finds nothing to do
    again = cli("mine", "ir", "--rehash", "--db", str(db), "--json")
    body = json.loads(again.stdout)
    assert (body["current"], body["rehashed"], body["merged"], body["written"]) == (1, 0, 0, False)
    assert twin_id not in dict(_items(db))


def test_dry_run_counts_the_same_and_writes_nothing(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    db, _old_id, _twin_id, _new_hash = _stale_store(cli, tmp_path)
    before = _items(db)
    dry = cli("mine", "ir", "--rehash", "--dry-run", "--db", str(db), "--json")
    assert dry.exit_code == 0, dry.output
    planned = json.loads(dry.stdout)
    assert _items(db) == before
    assert (planned["rehashed"], planned["merged"], planned["written"]) == (1, 1, False)
    done = json.loads(cli("mine", "ir", "--rehash", "--db", str(db), "--json").stdout)
    assert {k: done[k] for k in ("examined", "current", "rehashed", "merged")} == {
        k: planned[k] for k in ("examined", "current", "rehashed", "merged")
    }
    assert done["written"] is True
    text = cli("mine", "ir", "--rehash", "--dry-run", "--db", str(db))
    assert "dry run, nothing written" in text.stdout


def test_the_module_with_votes_is_kept_and_the_other_merged_into_it(
    cli,  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    db, _old_id, twin_id, new_hash = _stale_store(cli, tmp_path)
    with open_store(db) as store:
        append_votes(store, [VoteRow(twin_id, "ann", "positive", note="fast path")])
    result = cli("mine", "ir", "--rehash", "--db", str(db), "--json")
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert (body["rehashed"], body["merged"], body["kept"]) == (0, 1, [])
    assert body["current"] == 1
    assert _items(db) == [(twin_id, new_hash)]
    with open_store(db) as store:
        votes = raw_sql.query(store, "SELECT item_id, label, note FROM votes")
        assert [tuple(v) for v in votes] == [(twin_id, "positive", "fast path")]
        assert raw_sql.scalar(store, "SELECT COUNT(*) FROM live_votes") == 1
        assert {
            tuple(r) for r in raw_sql.query(store, "SELECT status, item_id FROM ir_inputs")
        } == {("duplicate", twin_id), ("stored", twin_id)}


def test_two_modules_with_votes_are_both_kept_and_the_pair_reported(
    cli,  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    db, old_id, twin_id, new_hash = _stale_store(cli, tmp_path)
    with open_store(db) as store:
        append_votes(
            store, [VoteRow(old_id, "ann", "positive"), VoteRow(twin_id, "bo", "negative")]
        )
    result = cli("mine", "ir", "--rehash", "--db", str(db))
    assert result.exit_code == 0, result.output
    assert (
        f"IR item #{old_id} repeats item #{twin_id} under the new hash but has live_votes, votes"
        in " ".join(result.stderr.split())
    )
    assert "1 kept apart" in result.stdout
    # the one already under the new hash keeps it, the other its old key; no vote is lost
    assert _items(db) == [(old_id, "old-hash-of-step"), (twin_id, new_hash)]
    with open_store(db) as store:
        assert raw_sql.scalar(store, "SELECT COUNT(*) FROM votes") == 2
        assert raw_sql.scalar(store, "SELECT COUNT(*) FROM ir_modules") == 2


def test_keys_that_swap_places_are_rehashed_in_one_go(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # two modules each stored under the hash the other now has: a one-step update
    # would meet the unique index
    db = tmp_path / "curator.db"
    step = _write(tmp_path / "a", "step.ll", MODULE.format(a="n", b="t", c="r"))
    twice = _write(tmp_path / "a", "twice.ll", OTHER)
    assert cli("mine", "ir", str(step), str(twice), "--db", str(db)).exit_code == 0
    (a, ha), (b, hb) = _items(db)
    with open_store(db) as store, store.transaction() as conn:
        for item_id, key in ((a, "swap"), (b, ha), (a, hb)):
            conn.execute("UPDATE items SET key = ? WHERE id = ?", (key, item_id))
            conn.execute(
                "UPDATE ir_modules SET structural_hash = ? WHERE item_id = ?", (key, item_id)
            )
    result = cli("mine", "ir", "--rehash", "--db", str(db), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["rehashed"] == 2
    assert _items(db) == [(a, ha), (b, hb)]


def test_a_module_that_no_longer_parses_keeps_its_key_and_is_named(
    cli,  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    db, old_id, twin_id, new_hash = _stale_store(cli, tmp_path)
    with open_store(db) as store, store.transaction() as conn:
        conn.execute(
            "UPDATE ir_modules SET text = 'define i32 @broken(' WHERE item_id = ?", (old_id,)
        )
    result = cli("mine", "ir", "--rehash", "--db", str(db))
    assert result.exit_code == 1
    assert f"IR item #{old_id}: kept its key:" in " ".join(result.stderr.split())
    assert "1 unreadable (kept their key)" in result.stdout
    assert _items(db) == [(old_id, "old-hash-of-step"), (twin_id, new_hash)]


def test_rehash_takes_no_paths_and_dry_run_needs_it(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    db = tmp_path / "curator.db"
    assert cli("mine", "ir", "--rehash", str(tmp_path), "--db", str(db)).exit_code == 2
    assert cli("mine", "ir", "--dry-run", str(tmp_path), "--db", str(db)).exit_code == 2
    missing = cli("mine", "ir", "--rehash", "--db", str(db))
    assert missing.exit_code == 2 and "no such database" in missing.stderr


def _row(name: str, key: str) -> IRModuleRow:
    """A module row whose text is only a label for the test's hasher."""
    return IRModuleRow(
        source="src",
        path=f"{name}.ll",
        language="c",
        structural_hash=key,
        input_sha256=hashlib.sha256(name.encode()).hexdigest(),
        input_format="ll",
        compile_command=None,
        project="p",
        license="MIT",
        text=name,
        bitcode=b"",
        text_bytes=1,
        bitcode_bytes=0,
        tokens=1,
        functions=1,
        declarations=0,
        globals=0,
        basic_blocks=1,
        instructions=1,
    )


def test_a_group_whose_new_hash_a_kept_key_holds_is_left_as_it_was(tmp_path: Path) -> None:
    # a and b now match (hash H); both have votes, b holds H already, so a keeps its
    # old key "K", which is what c now hashes to: c cannot take it, and stays as it was
    new = {"a": "H", "b": "H", "c": "K", "d": "D2"}
    with open_store(tmp_path / "c.db") as store:
        results = save_ir_batch(
            store, [_row("a", "K"), _row("b", "H"), _row("c", "C1"), _row("d", "D1")]
        )
        a, b, c, d = (r.item_id for r in results)
        append_votes(store, [VoteRow(a, "ann", "positive"), VoteRow(b, "ann", "negative")])
        planned = rehash_ir(store, new.__getitem__, dry_run=True)
        summary = rehash_ir(store, new.__getitem__)
        keys = dict(
            (int(r[0]), str(r[1]))
            for r in raw_sql.query(store, "SELECT id, key FROM items WHERE kind = 'ir'")
        )
    for found in (planned, summary):
        assert [(p.item_id, p.repeats) for p in found.kept] == [(a, b)]
        assert [item for item, _why in found.blocked] == [c]
        assert (found.current, found.rehashed, found.merged) == (1, 1, 0)
    assert "is the key item #" in summary.blocked[0][1]
    assert keys == {a: "K", b: "H", c: "C1", d: "D2"}
