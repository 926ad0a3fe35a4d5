"""Votes: one live vote per annotator, full history, undo, label checks, two writers."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from annotation.sets import DrawSpec, create_sampled_set
from annotation.votes import VoteError, cast_vote, prepare_vote, resolve_item, undo
from store import Store, open_store
from store.items import find_by_id
from store.sets import queue_page
from store.votes import live_votes_for_items, vote_history
from tests import raw_sql
from tests.annotation_data import Spec, add_items, many


def _vote(store: Store, item_id: int, label: str, who: str = "ann", **kw: object) -> int:
    item = find_by_id(store, item_id)
    assert item is not None
    return cast_vote(store, prepare_vote(store, item, label, who, **kw))  # type: ignore[arg-type]


def _live(store: Store, item_id: int) -> dict[str, str]:
    return {v.annotator: v.label for v in live_votes_for_items(store, [item_id])}


def test_latest_vote_wins_and_history_is_kept(store: Store) -> None:
    ids = add_items(store, [Spec("a")])
    _vote(store, ids["a"], "perf")
    _vote(store, ids["a"], "non-perf", note="second thoughts")
    assert _live(store, ids["a"]) == {"ann": "non-perf"}
    history = vote_history(store, ids["a"])
    assert [h["label"] for h in history] == ["perf", "non-perf"]
    assert history[1]["note"] == "second thoughts"


def test_undo_walks_back_through_history(store: Store) -> None:
    ids = add_items(store, [Spec("a"), Spec("b")])
    _vote(store, ids["a"], "perf")
    _vote(store, ids["a"], "non-perf")
    _vote(store, ids["b"], "skip")
    first = undo(store, "ann")
    assert first is not None and first.item_id == ids["b"] and first.restored_label is None
    assert _live(store, ids["b"]) == {}
    second = undo(store, "ann")
    assert second is not None and second.restored_label == "perf"
    assert _live(store, ids["a"]) == {"ann": "perf"}
    third = undo(store, "ann")
    assert third is not None and third.restored_label is None
    assert _live(store, ids["a"]) == {}
    assert undo(store, "ann") is None
    assert len(vote_history(store, ids["a"])) == 4  # two votes, two undos


def test_undo_is_per_annotator_and_per_set(store: Store) -> None:
    ids = add_items(store, many(20))
    s, _ = create_sampled_set(store, "s", DrawSpec(kind="commit", sample=5, seed=1))
    members = [i for _, i in queue_page(store, s.id, "ann")]
    outside = next(i for i in ids.values() if i not in members)
    _vote(store, members[0], "perf")
    _vote(store, outside, "perf")
    _vote(store, members[1], "perf", who="bob")
    result = undo(store, "ann", in_set=s)
    assert result is not None and result.item_id == members[0]
    assert _live(store, outside) == {"ann": "perf"}
    assert _live(store, members[1]) == {"bob": "perf"}


def test_labels_and_categories_are_checked(store: Store) -> None:
    add_items(store, many(10))
    s, _ = create_sampled_set(store, "s", DrawSpec(kind="commit", sample=3, seed=1))
    item_id = queue_page(store, s.id, "ann")[0][1]
    item = find_by_id(store, item_id)
    assert item is not None
    with pytest.raises(VoteError, match="label 'maybe' is not one of perf, non-perf, skip"):
        prepare_vote(store, item, "maybe", "ann")
    with pytest.raises(VoteError, match="not in this set's taxonomy"):
        prepare_vote(store, item, "perf", "ann", category="cosmic rays")
    row = prepare_vote(store, item, "perf", "ann", category="Memory Inefficiency / Memory Leak")
    assert row.category == "memory-inefficiency/memory-leak"
    with pytest.raises(VoteError, match="annotator name"):
        prepare_vote(store, item, "perf", "  ")


def test_resolve_item_by_key_or_internal_id(store: Store) -> None:
    ids = add_items(store, [Spec("abc"), Spec(str(10_000))])
    assert resolve_item(store, "abc").id == ids["abc"]
    assert resolve_item(store, f"#{ids['abc']}").id == ids["abc"]
    assert resolve_item(store, str(ids["abc"])).id == ids["abc"]
    with pytest.raises(VoteError, match="no item 'zzz'"):
        resolve_item(store, "zzz")


def test_a_commit_is_named_by_the_first_digits_of_its_sha(store: Store) -> None:
    shas = [
        "0864d54ad2ab8cd75c204a3183161c53b0c4d43f",
        "0864d54f00000000000000000000000000000000",
        "09a77b383f819d2d669c8e175b49908ffaf925e3",
    ]
    ids = add_items(store, [Spec(sha) for sha in shas])
    assert resolve_item(store, "09a77b3").id == ids[shas[2]]
    assert resolve_item(store, "0864D54A").id == ids[shas[0]]  # any case, as git reads it
    with pytest.raises(VoteError, match="starts the sha of several commits: give more"):
        resolve_item(store, "0864d54")
    with pytest.raises(VoteError, match="no item '09a77b'"):
        resolve_item(store, "09a77b")  # six digits: too few to stand for a sha
    with pytest.raises(VoteError, match="no item '09a77b3'"):
        resolve_item(store, "09a77b3", kind="kernel")


def test_blind_queue_skips_own_votes_with_keyset_pages(store: Store) -> None:
    add_items(store, many(30))
    s, _ = create_sampled_set(store, "s", DrawSpec(kind="commit", sample=12, seed=1))
    page = queue_page(store, s.id, "ann", limit=5)
    assert [p for p, _ in page] == [0, 1, 2, 3, 4]
    _vote(store, page[0][1], "perf")
    _vote(store, page[2][1], "non-perf", who="bob")
    after = queue_page(store, s.id, "ann", limit=5)
    assert page[0][1] not in [i for _, i in after]
    assert page[2][1] in [i for _, i in after]  # bob's vote does not take it off ann's queue
    nxt = queue_page(store, s.id, "ann", after_position=after[-1][0], limit=50)
    assert len(after) + len(nxt) == 11


def _writer(db: str, item_ids: list[int], who: str) -> None:
    with open_store(db) as store:
        for item_id in item_ids:
            item = find_by_id(store, item_id)
            assert item is not None
            cast_vote(store, prepare_vote(store, item, "perf", who))


def test_two_processes_voting_at_once_lose_nothing(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    with open_store(db) as store:
        ids = list(add_items(store, many(150)).values())
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(db), ids, who)) for who in ("ann", "bob")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    with open_store(db) as store:
        assert raw_sql.scalar(store, "SELECT COUNT(*) FROM votes") == 300
        assert raw_sql.scalar(store, "SELECT COUNT(*) FROM live_votes") == 300


def test_blind_sets_hide_other_votes_until_adjudicated(store: Store) -> None:
    from annotation.queue import next_items, visible_votes
    from store.votes import ADJUDICATOR
    from tests.annotation_data import vote

    add_items(store, many(10))
    blind, _ = create_sampled_set(store, "b", DrawSpec(kind="commit", sample=3, seed=1))
    item = next_items(store, blind, "ann")[0].item_id
    vote(store, item, "ann", "perf")
    vote(store, item, "bob", "non-perf")
    assert [v.annotator for v in visible_votes(store, blind, item, "ann")] == ["ann"]
    assert [v.annotator for v in visible_votes(store, blind, item, "carol")] == []
    vote(store, item, "judge", "perf", role=ADJUDICATOR)
    assert {v.annotator for v in visible_votes(store, blind, item, "ann")} == {
        "ann",
        "bob",
        "judge",
    }
    opened, _ = create_sampled_set(
        store, "o", DrawSpec(kind="commit", sample=3, seed=1), blind=False
    )
    other = next_items(store, opened, "ann")[0].item_id
    vote(store, other, "bob", "perf")
    assert [v.annotator for v in visible_votes(store, opened, other, "ann")] == ["bob"]


def test_an_imported_commit_is_named_by_its_sha_too(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """An imported commit's key is its external id; its sha (given in the file) names it
    as a mined commit's does: ``curator vote`` and the app's go-to said "no item"."""
    import json

    rows = [
        {"id": "evil-1", "message": "m1", "sha": "eeee5678" + "0" * 32},
        {"id": "two-a", "message": "m2", "sha": "abcdef12" + "1" * 32, "file": "a.c"},
        {"id": "two-b", "message": "m2", "sha": "abcdef12" + "1" * 32, "file": "b.c"},
    ]
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert cli("import", "items", str(path), "--set", "s").exit_code == 0
    voted = cli("vote", "EEEE567", "perf", "--annotator", "ann")
    assert voted.exit_code == 0, voted.output
    with open_store(tmp_path / "cli.db") as store:
        assert resolve_item(store, "eeee5678" + "0" * 32).key == "evil-1"
        with pytest.raises(VoteError, match=r"is the sha of several items \('two-a', 'two-b'\)"):
            resolve_item(store, "abcdef1")
