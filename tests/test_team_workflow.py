"""A team sharing one database, used the way a hostile but realistic user would: sets
over the same items with other labels, undo within a set, labels that differ only in
case, gold items that become members, set edits in the middle of voting."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from annotation.formats.common import TaskVote, resolve_answer
from annotation.labels import LabelError, check_label, parse_labels
from annotation.routing import ItemTaken, serve_next, submit
from annotation.sets import SetEdit, SetError, edit_set
from annotation.votes import undo
from store import Store, open_store
from store.routing import gold_answers, member_state, put_claim
from store.sets import NewSet, SetRow, add_set_items, create_set, get_set
from store.votes import ADJUDICATOR, live_votes_for_items
from tests.annotation_data import Spec, add_items, vote
from tests.conftest import ROOT

SAMPLE = ROOT / "sample_data" / "annotation"
PERF = ["perf", "non-perf"]
QUALITY = ["good", "bad"]
T0 = datetime(2030, 1, 1, tzinfo=UTC)


def items(store: Store, n: int, prefix: str = "k") -> list[int]:
    return list(add_items(store, [Spec(f"{prefix}{i:03d}") for i in range(n)]).values())


def make(
    store: Store, name: str, labels: list[str], ids: list[int], votes_per_item: int = 2
) -> SetRow:
    return create_set(store, NewSet(name, "commit", labels, votes_per_item=votes_per_item), ids)


def live(store: Store, ids: list[int]) -> set[tuple[int, str, str, str]]:
    return {(v.item_id, v.annotator, v.role, v.label) for v in live_votes_for_items(store, ids)}


# Undo within a set ----------------------------------------------------------------------


def test_undo_in_a_set_leaves_the_vote_that_replaced_it_in_another_set(store: Store) -> None:
    ids = items(store, 1)
    perf = make(store, "perf-set", PERF, ids)
    make(store, "quality-set", QUALITY, ids)
    vote(store, ids[0], "dave", "perf")
    vote(store, ids[0], "dave", "good")  # replaces the perf: dave has one vote per item
    assert undo(store, "dave", in_set=perf) is None  # nothing of dave's is in effect there
    assert live(store, ids) == {(ids[0], "dave", "annotator", "good")}


def test_undo_of_an_adjudication_in_a_set_leaves_the_one_of_another_set(store: Store) -> None:
    ids = items(store, 1)
    perf = make(store, "perf-set", PERF, ids)
    make(store, "quality-set", QUALITY, ids)
    vote(store, ids[0], "judge", "perf", role=ADJUDICATOR)
    vote(store, ids[0], "judge", "good", role=ADJUDICATOR)
    assert undo(store, "judge", adjudicate=True, in_set=perf) is None
    assert live(store, ids) == {(ids[0], "judge", ADJUDICATOR, "good")}


def test_undo_in_a_set_still_walks_back_through_its_own_votes(store: Store) -> None:
    ids = items(store, 1)
    perf = make(store, "perf-set", PERF, ids)
    make(store, "quality-set", QUALITY, ids)
    vote(store, ids[0], "ann", "perf")
    vote(store, ids[0], "ann", "good")
    undone = undo(store, "ann", in_set=get_set(store, "quality-set"))
    assert undone is not None and undone.restored_label == "perf"  # the good is undone
    undone = undo(store, "ann", in_set=perf)  # the perf is in effect again: undo it
    assert undone is not None and (undone.undone_label, undone.restored_label) == ("perf", None)
    assert live(store, ids) == set()


def test_cli_undo_in_a_set_keeps_the_vote_in_the_other_set(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("import", "items", str(SAMPLE / "items.jsonl"), "--set", "g").exit_code == 0
    made = cli("import", "items", str(SAMPLE / "items.jsonl"), "--set", "q", "--labels", "good,bad")
    assert made.exit_code == 0, made.output
    assert cli("vote", "ex-028", "perf", "--set", "g", "--annotator", "dave").exit_code == 0
    assert cli("vote", "ex-028", "good", "--set", "q", "--annotator", "dave").exit_code == 0
    result = cli("undo", "--set", "g", "--annotator", "dave")
    assert result.exit_code == 1
    assert "nothing to undo for dave in set 'g'" in result.output
    shown = json.loads(cli("set", "show", "q", "--json").output)
    assert shown["progress"]["votes"] == 1


# Labels that differ only in case or in Unicode form -------------------------------------


@pytest.mark.parametrize("text", ["good,Good,bad", "perf,non-perf,PERF", "yes,no,Skip"])
def test_labels_that_differ_only_in_case_are_refused(text: str) -> None:
    with pytest.raises(LabelError, match="differ only in case"):
        parse_labels(text, "commit")


def test_a_label_typed_in_another_unicode_form_is_the_sets_label() -> None:
    composed, decomposed = "tr\u00e8s bon", "tre\u0300s bon"
    assert parse_labels(f"{decomposed},mauvais", "commit") == [composed, "mauvais"]
    assert check_label(decomposed, [composed, "mauvais"]) == composed


def test_set_edit_refuses_labels_that_differ_only_in_case(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("import", "items", str(SAMPLE / "items.jsonl"), "--set", "q").exit_code == 0
    result = cli("set", "edit", "q", "--labels", "perf,non-perf,PERF")
    assert result.exit_code == 2
    assert result.output.strip() == (
        "error: labels 'perf' and 'PERF' differ only in case: keep one"
    )


def test_a_tools_answer_keeps_labels_that_differ_only_in_case_apart() -> None:
    """A set made before case variants were refused keeps them: an exported ``perf`` comes
    back as ``perf``, not as the ``PERF`` that lower-cases the same."""
    labels = ["good", "bad", "perf", "PERF"]
    accept = TaskVote(where="f:1", annotator="a", answer="accept", choices=("perf",))
    assert resolve_answer(accept, labels, [])[0] == "perf"
    upper = TaskVote(where="f:1", annotator="a", answer="accept", choices=("PERF",))
    assert resolve_answer(upper, labels, [])[0] == "PERF"
    binary = TaskVote(where="f:1", annotator="a", answer="accept", binary="perf")
    assert resolve_answer(binary, labels, [])[0] == "perf"
    either = TaskVote(where="f:1", annotator="a", answer="accept", choices=("Perf",))
    with pytest.raises(ValueError, match="neither a label"):
        resolve_answer(either, labels, [])
    loose = TaskVote(where="f:1", annotator="a", answer="accept", choices=("Good",))
    assert resolve_answer(loose, labels, [])[0] == "good"  # one label without case: found


@pytest.mark.parametrize("fmt", ["prodigy", "label-studio"])
def test_export_then_import_keeps_votes_on_labels_that_differ_only_in_case(
    store: Store,
    cli,
    tmp_path: Path,
    fmt: str,  # type: ignore[no-untyped-def]
) -> None:
    ids = items(store, 2)
    quality = make(store, "q", ["perf", "PERF"], ids)  # as an older Curator allowed
    vote(store, ids[0], "ann", "perf", set_id=quality.id)
    vote(store, ids[1], "ann", "PERF", set_id=quality.id)
    out = tmp_path / ("q.jsonl" if fmt == "prodigy" else "q.json")
    exported = cli("export", fmt, "q", "--out", str(out), "--db", str(store.path))
    assert exported.exit_code == 0, exported.output
    other = tmp_path / "other.db"
    with open_store(other) as fresh:
        again = items(fresh, 2)
        make(fresh, "q", ["perf", "PERF"], again)
    imported = cli("import", fmt, str(out), "--set", "q", "--db", str(other))
    assert imported.exit_code == 0, imported.output
    with open_store(other) as fresh:
        got = {(v.item_id, v.label) for v in live_votes_for_items(fresh, again)}
    assert got == {(again[0], "perf"), (again[1], "PERF")}


# Gold items -----------------------------------------------------------------------------


def gold_setup(store: Store) -> tuple[SetRow, list[int], list[int]]:
    """A settled set ``known`` and a set ``work`` (overlap all) with two of ``known``'s
    items as hidden gold at rate 0.5."""
    known_ids = items(store, 2, "g")
    known = make(store, "known", PERF, known_ids, votes_per_item=1)
    for item in known_ids:
        vote(store, item, "oracle", "perf", set_id=known.id)
    work_ids = items(store, 3, "w")
    work = create_set(
        store, NewSet("work", "commit", PERF, votes_per_item=2, overlap="all"), work_ids
    )
    from annotation.gold import add_gold

    add_gold(store, "work", "known", 0.5, 0)
    return work, work_ids, known_ids


def test_set_edit_refuses_to_drop_a_label_gold_items_expect(store: Store) -> None:
    gold_setup(store)
    with pytest.raises(SetError, match="gold items whose known answer is perf"):
        edit_set(store, "work", SetEdit(labels=["yes", "no"]))
    assert get_set(store, "work").labels == PERF  # type: ignore[union-attr]
    grown = edit_set(store, "work", SetEdit(labels=[*PERF, "unsure"]))
    assert grown.labels == [*PERF, "unsure"]


def test_a_gold_item_that_becomes_a_member_is_voted_on_like_one(store: Store) -> None:
    work, work_ids, known_ids = gold_setup(store)
    add_set_items(store, work.id, known_ids)  # the gold items join the set itself
    served: list[int] = []
    for _ in range(len(work_ids) + len(known_ids) + 3):
        got = serve_next(store, work, "zed", now=T0)
        if got is None:
            break
        assert not got.gold
        done = submit(store, work, got.entry.item_id, "zed", "perf", now=T0)
        assert done.vote_id is not None  # a vote, not a gold answer swallowed
        served.append(got.entry.item_id)
    assert sorted(served) == sorted([*work_ids, *known_ids])  # each once, then done
    assert gold_answers(store, work.id) == []
    assert member_state(store, work.id, known_ids[0]) == (2, "unanimous")  # oracle, zed


# A vote on a routed item someone else holds ---------------------------------------------


def test_a_vote_on_an_item_others_claimed_says_who_holds_the_slots(store: Store) -> None:
    ids = items(store, 1)
    one = make(store, "one", PERF, ids, votes_per_item=1)
    put_claim(
        store, one.id, ids[0], "ann", T0.isoformat(), (T0 + timedelta(minutes=10)).isoformat()
    )
    with pytest.raises(ItemTaken) as taken:
        submit(store, one, ids[0], "ben", "perf", now=T0 + timedelta(minutes=1))
    assert str(taken.value) == (
        f"item #{ids[0]} of set 'one' needs 1 vote and has 0 votes and 1 claim by other"
        " annotators (routed; you hold no claim on it): take the next item instead"
    )
    submit(store, one, ids[0], "ann", "perf", now=T0 + timedelta(minutes=2))
    with pytest.raises(ItemTaken) as full:
        submit(store, one, ids[0], "ben", "perf", now=T0 + timedelta(minutes=3))
    assert str(full.value) == (
        f"item #{ids[0]} already has the 1 annotator it needs in set 'one' (routed; you hold"
        " no claim on it): take the next item instead"
    )


def test_a_late_vote_after_an_expired_claim_says_the_claim_expired(store: Store) -> None:
    ids = items(store, 1)
    one = make(store, "one", PERF, ids, votes_per_item=1)
    assert serve_next(store, one, "ann", lease_minutes=1, now=T0) is not None
    later = T0 + timedelta(minutes=5)
    submit(store, one, ids[0], "ben", "perf", now=later)  # ann's lease ran out: room for ben
    with pytest.raises(ItemTaken, match=r"the 1 annotator it needs .*your claim on it expired"):
        submit(store, one, ids[0], "ann", "perf", now=later)


# Audits over items other sets share -----------------------------------------------------


def test_an_audit_too_big_for_the_unvoted_items_says_which_items_it_counted(
    store: Store,
) -> None:
    from annotation.audit import draw_audit
    from annotation.sampling import SamplingError

    ids = list(add_items(store, [Spec(f"a{i}", prediction="perf") for i in range(5)]).values())
    gt = make(store, "gt", PERF, ids[:2])
    vote(store, ids[0], "ann", "perf", set_id=gt.id)
    vote(store, ids[1], "ann", "perf", set_id=gt.id)
    with pytest.raises(SamplingError) as refused:
        draw_audit(store, "au", "keyword@1", size=4, unlabeled=True)
    assert str(refused.value) == (
        "asked for 4 items but keyword@1 labeled 'perf' only 3 commit items that no one has"
        " voted on: give --size 3 or less"
    )
    with pytest.raises(
        SamplingError, match="labeled 'perf' only 2 commit items in set 'gt': give --size 2"
    ):
        draw_audit(store, "au", "keyword@1", size=4, from_set="gt")


# Importing votes with another set's labels ----------------------------------------------


def test_importing_votes_that_replace_another_sets_votes_says_so(  # type: ignore[no-untyped-def]
    cli, tmp_path: Path
) -> None:
    assert cli("import", "items", str(SAMPLE / "items.jsonl"), "--set", "gt").exit_code == 0
    assert cli("import", "votes", str(SAMPLE / "votes.csv")).exit_code == 0
    made = cli("import", "items", str(SAMPLE / "items.jsonl"), "--set", "q", "--labels", "good,bad")
    assert made.exit_code == 0, made.output
    quality = tmp_path / "quality.csv"
    quality.write_text(
        "item,annotator,label\nex-001,alice,good\nex-002,alice,bad\nex-003,zoe,good\n"
    )
    result = cli("import", "votes", str(quality))
    assert result.exit_code == 0, result.output
    assert (
        f"warning: {quality}: these votes replace the same annotators' votes that counted in"
        " other sets, which lose them (gt 2)"
    ) in result.output
    report = json.loads(cli("import", "votes", str(quality), "--json").output)
    assert report[0]["displaced"] == {} and report[0]["unchanged"] == 3  # nothing new


def test_a_prodigy_import_that_replaces_another_sets_votes_says_so(  # type: ignore[no-untyped-def]
    cli, tmp_path: Path
) -> None:
    assert cli("import", "items", str(SAMPLE / "items.jsonl"), "--set", "gt").exit_code == 0
    assert cli("import", "votes", str(SAMPLE / "votes.csv")).exit_code == 0
    tasks = tmp_path / "q.jsonl"
    line = {"text": "x", "meta": {"id": "ex-001"}, "answer": "accept", "accept": ["good"]}
    tasks.write_text(
        json.dumps({**line, "_annotator_id": "q-alice"})
        + "\n"
        + json.dumps({**line, "_annotator_id": "q-bob"})
        + "\n"
    )
    result = cli("import", "prodigy", str(tasks), "--set", "q", "--labels", "good,bad")
    assert result.exit_code == 0, result.output
    assert "which lose them (gt 2)" in result.output
