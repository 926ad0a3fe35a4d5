"""Routing a team's work over a set: who labels what next, across processes.

With ``overlap`` ``routed`` (the default for new sets) an item is served to at most
``votes_per_item`` annotators: serving an item claims it for a lease (minutes), so two
people working at once never both take the last slot; an expired lease frees it; items
with the fewest votes come first (every item reaches N votes before any gets N+1);
settled items and conflicts leave the queue (conflicts go to review). With ``all`` every
annotator labels every item (agreement studies).

The choice and the claim happen in one write transaction (``BEGIN IMMEDIATE``), which
SQLite serialises across connections and processes, so two TUIs and CLI votes on one
file never over-serve an item.

Hidden gold items (``curator set gold``) are mixed into either kind of queue at the set's
gold rate; what an annotator answers on one is stored as a gold answer, never a vote.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from annotation.labels import LabelError, annotator_problem, check_label
from annotation.queue import QueueEntry, next_items
from annotation.votes import Displaced, VoteError, cast_vote, displaced_by, prepare_vote
from store import Store
from store.items import find_by_id
from store.routing import (
    GoldItem,
    add_gold_answer,
    annotator_count,
    annotator_to_do,
    claim_expires,
    claimed_at,
    current_claim,
    drop_claim,
    drop_expired_claims,
    gold_answered,
    gold_item,
    is_tracked,
    member_state,
    next_gold,
    others_claims,
    put_claim,
    rebuild_set,
    record_timing,
    release_claims,
    routed_candidate,
    set_counters,
)
from store.sets import SetRow, get_set_by_id
from store.votes import ANNOTATOR, live_votes_for_items

DEFAULT_LEASE_MINUTES = 10


class ItemTaken(VoteError):
    """A late first vote on a routed item whose slots filled while the lease ran out."""


@dataclass(frozen=True)
class Served:
    """The item served to an annotator: ``gold`` is internal (never shown to them)."""

    entry: QueueEntry
    gold: bool = False


@dataclass(frozen=True)
class Submitted:
    """What a submission stored: a vote (``vote_id``) or a gold answer; ``displaced``,
    the annotator's vote in other sets that the new vote replaced."""

    vote_id: int | None
    gold_answer_id: int | None
    label: str
    displaced: Displaced | None = None


def current_set(store: Store, set_row: SetRow) -> SetRow:
    """The set as stored now: another process may have edited it (``curator set edit``)."""
    return get_set_by_id(store, set_row.id) or set_row


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def ensure_tracked(store: Store, set_row: SetRow) -> None:
    """Bring a set made before routing existed up to date (once)."""
    if not is_tracked(store, set_row.id):
        rebuild_set(store, set_row.id)


def progress(store: Store, set_row: SetRow) -> dict[str, int]:
    """Items, items with a vote and live annotator votes of a set, from its counters (the
    same figures as ``store.sets.set_progress`` without scanning the set)."""
    ensure_tracked(store, set_row)
    counters = set_counters(store, set_row.id)
    assert counters is not None
    return {"items": counters.items, "voted_items": counters.voted_items, "votes": counters.votes}


def states_of(store: Store, set_row: SetRow) -> dict[str, int]:
    """Items per state (unanimous, majority, adjudicated, conflict, pending; the majority
    rule), from the counters: ``summary(decisions_for_set(...))`` without the scan."""
    ensure_tracked(store, set_row)
    counters = set_counters(store, set_row.id)
    assert counters is not None
    return counters.states()


def to_do(store: Store, set_row: SetRow, annotator: str, mine: int, size: int) -> int:
    """How many of the set's items are still the annotator's to label: on a routed set
    the members routing could still serve them (others may settle the rest), otherwise
    every member they have not voted on (``mine`` of ``size``)."""
    if set_row.overlap == "routed":
        return annotator_to_do(store, set_row.id, annotator, set_row.votes_per_item)
    return max(size - mine, 0)


def gold_rate(set_row: SetRow) -> float:
    gold = set_row.params.get("gold") or {}
    return float(gold.get("rate") or 0.0)


def _gold_due(store: Store, set_row: SetRow, annotator: str, done: int) -> bool:
    """Whether the annotator's next item should be gold: answered gold stays at the
    set's rate of everything they did (``done``: their votes in the set)."""
    rate = gold_rate(set_row)
    if rate <= 0:
        return False
    answered = gold_answered(store, set_row.id, annotator)
    return answered < rate * (done + answered + 1)


def serve_next(
    store: Store,
    set_row: SetRow,
    annotator: str,
    *,
    lease_minutes: float = DEFAULT_LEASE_MINUTES,
    after_position: int = -1,
    now: datetime | None = None,
) -> Served | None:
    """Claim and return the annotator's next item (their unexpired claim first)."""
    problem = annotator_problem(annotator.strip())
    if problem is not None:
        raise VoteError(problem)
    set_row = current_set(store, set_row)
    ensure_tracked(store, set_row)
    moment = now or datetime.now(UTC)
    stamp, expires = _stamp(moment), _stamp(moment + timedelta(minutes=lease_minutes))
    with store.transaction():
        drop_expired_claims(store, set_row.id, stamp)
        while (held := current_claim(store, set_row.id, annotator, stamp)) is not None:
            served = _entry_for(store, set_row, held)
            if served is not None and (
                served.gold or _has_room(store, set_row, held, annotator, stamp)
            ):
                put_claim(store, set_row.id, held, annotator, stamp, expires)
                return served
            # Filled or settled meanwhile (votes from another set with the same labels or
            # without --set, a lowered votes per item): a vote on it would be refused.
            drop_claim(store, set_row.id, held, annotator)
        done = annotator_count(store, set_row.id, annotator)
        if _gold_due(store, set_row, annotator, done):
            gold = next_gold(store, set_row.id, annotator)
            if gold is not None:
                put_claim(store, set_row.id, gold.item_id, annotator, stamp, expires)
                return Served(_gold_entry(gold), gold=True)
        if set_row.overlap == "routed":
            found = routed_candidate(store, set_row.id, annotator, set_row.votes_per_item, stamp)
        else:
            page = next_items(store, set_row, annotator, after_position, 1) or next_items(
                store, set_row, annotator, -1, 1
            )
            found = (page[0].position, page[0].item_id) if page else None
        if found is None:
            return None
        put_claim(store, set_row.id, found[1], annotator, stamp, expires)
        return Served(QueueEntry(found[0], found[1]))


def _gold_entry(gold: GoldItem) -> QueueEntry:
    # Gold items sit outside the set's positions; negative positions keep them apart.
    return QueueEntry(-1 - gold.position, gold.item_id)


def _entry_for(store: Store, set_row: SetRow, item_id: int) -> Served | None:
    from store.item_views import set_position

    position = set_position(store, set_row.id, item_id)
    if position is not None:
        return Served(QueueEntry(position, item_id))
    gold = gold_item(store, set_row.id, item_id)
    return None if gold is None else Served(_gold_entry(gold), gold=True)


def release(store: Store, set_row: SetRow, annotator: str) -> int:
    """End the annotator's claims in the set (leaving the label screen)."""
    return release_claims(store, set_row.id, annotator)


def is_gold(store: Store, set_row: SetRow, item_id: int) -> bool:
    return gold_item(store, set_row.id, item_id) is not None


def submit(
    store: Store,
    set_row: SetRow,
    item_id: int,
    annotator: str,
    label: str,
    category: str | None = None,
    note: str | None = None,
    *,
    origin: str = "cli",
    now: datetime | None = None,
) -> Submitted:
    """Record an annotator's answer on an item of a set: a gold answer for a hidden gold
    item, else a checked vote; the claim ends and its time is kept."""
    moment = now or datetime.now(UTC)
    item = find_by_id(store, item_id)
    if item is None:
        raise VoteError(f"no item with id #{item_id}")
    set_row = current_set(store, set_row)
    ensure_tracked(store, set_row)
    with store.transaction():
        started = claimed_at(store, set_row.id, item_id, annotator.strip())
        seconds = _seconds(started, moment)
        gold = gold_item(store, set_row.id, item_id)
        if gold is not None:
            try:
                checked = check_label(label.strip(), set_row.labels)
            except LabelError as exc:
                raise VoteError(str(exc)) from None
            answer = add_gold_answer(
                store,
                set_row.id,
                item_id,
                annotator.strip(),
                checked,
                gold.label,
                seconds,
                _stamp(moment),
            )
            return Submitted(None, answer, checked)
        row = prepare_vote(
            store, item, label, annotator, category, note, in_set=set_row, origin=origin
        )
        if set_row.overlap == "routed":
            _check_room(store, set_row, item_id, row.annotator, _stamp(moment), started)
        displaced = displaced_by(store, row)
        vote_id = cast_vote(store, row)
        if seconds is not None and row.role == ANNOTATOR:
            record_timing(store, vote_id, set_row.id, row.annotator, seconds)
    return Submitted(vote_id, None, row.label or "", displaced)


def _live_claim(
    store: Store, set_row: SetRow, item_id: int, annotator: str, now: str
) -> str | None:
    """When the annotator's unexpired claim on the item began, if they hold one."""
    expires = claim_expires(store, set_row.id, item_id, annotator)
    if expires is None or expires <= now:
        return None
    return claimed_at(store, set_row.id, item_id, annotator)


def _has_room(store: Store, set_row: SetRow, item_id: int, annotator: str, now: str) -> bool:
    """Whether the annotator's live claim on a member still leads to a vote: on a routed
    set the item is pending with a slot left after its votes and the claims taken before
    theirs (a claim on an item that settled, went to review or filled up meanwhile is
    stale); with ``overlap`` ``all`` every member stays theirs to label."""
    state = member_state(store, set_row.id, item_id)
    if state is None:
        return False
    if set_row.overlap != "routed":
        return True
    if state[1] != "pending":
        return False
    before = _live_claim(store, set_row, item_id, annotator, now)
    taken = others_claims(store, set_row.id, item_id, annotator, now, before=before)
    return state[0] + taken < set_row.votes_per_item


def _check_room(
    store: Store,
    set_row: SetRow,
    item_id: int,
    annotator: str,
    now: str,
    claimed: str | None = None,
) -> None:
    """Refuse a first vote on a routed item whose slots are all taken (votes and others'
    live claims, only those taken before the annotator's own when they hold a live
    one): a late vote after an expired lease must not over-serve the item.
    ``claimed``: when the annotator's own claim on it began, if one is left."""
    if any(
        v.annotator == annotator and v.role == ANNOTATOR
        for v in live_votes_for_items(store, [item_id], set_id=set_row.id)
    ):
        return  # changing one's own vote in the set takes no new slot
    state = member_state(store, set_row.id, item_id)
    votes = state[0] if state else 0
    live = _live_claim(store, set_row, item_id, annotator, now)
    claims = others_claims(store, set_row.id, item_id, annotator, now, before=live)
    need = set_row.votes_per_item
    if votes + claims < need:
        return
    if live is not None:
        mine = "it filled up while you held it"
    elif claimed is not None:
        mine = "your claim on it expired"
    else:
        mine = "you hold no claim on it"
    if votes >= need:
        raise ItemTaken(
            f"item #{item_id} already has the {_count(need, 'annotator')} it needs in set"
            f" {set_row.name!r} (routed; {mine}): take the next item instead"
        )
    raise ItemTaken(
        f"item #{item_id} of set {set_row.name!r} needs {_count(need, 'vote')} and has"
        f" {_count(votes, 'vote')} and {_count(claims, 'claim')} by other annotators (routed;"
        f" {mine}): take the next item instead"
    )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _seconds(started: str | None, moment: datetime) -> float | None:
    if started is None:
        return None
    return max(0.0, (moment - datetime.fromisoformat(started)).total_seconds())
