"""Casting and undoing votes, with the checks that keep labels inside a set's choices."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from annotation.labels import (
    DEFAULT_LABELS,
    SKIP,
    LabelError,
    annotator_problem,
    check_label,
    normalize_category,
)
from store import Store
from store.items import (
    ItemRef,
    find_by_id,
    find_by_key,
    find_by_key_prefix,
    find_by_sha_prefix,
)
from store.sets import SetRow, is_member, sets_of_item
from store.votes import (
    ADJUDICATOR,
    ANNOTATOR,
    UndoResult,
    VoteRow,
    append_votes,
    counts_toward,
    live_votes_for_items,
    undo_last,
)


class VoteError(ValueError):
    """A vote that cannot be recorded (unknown item, label outside the set...)."""


def resolve_item(store: Store, ref: str, kind: str | None = None) -> ItemRef:
    """An item by external id (its key) or by ``#N`` / ``N`` for the internal id, or a
    commit by the first seven or more digits of its sha when no key or id is ``ref``.

    A bare number is taken as a key first; when it is both some item's key and another
    item's internal id the caller must say which (``#N`` for the id, or ``--kind``)."""
    text = ref.strip()
    if text.startswith("#") and text[1:].isdecimal():
        found = find_by_id(store, int(text[1:]))
        if found is None or (kind is not None and found.kind != kind):
            raise VoteError(f"no item with id {text}")
        return found
    by_key = find_by_key(store, text, kind)
    by_id = find_by_id(store, int(text)) if text.isdecimal() else None
    if by_id is not None and kind is not None and by_id.kind != kind:
        by_id = None
    if len(by_key) > 1:
        kinds = ", ".join(r.kind for r in by_key)
        raise VoteError(f"{text!r} names items of several kinds ({kinds}); pass --kind")
    if by_key and by_id is not None and by_id.id != by_key[0].id:
        raise VoteError(
            f"{text!r} is the key of item #{by_key[0].id} and the id of another item;"
            f" write #{by_id.id} for the id"
        )
    if by_key:
        return by_key[0]
    if by_id is not None:
        return by_id
    if _SHA_PREFIX.fullmatch(text) and kind in (None, "commit"):
        found = find_by_key_prefix(store, "commit", text.lower())
        if len(found) == 1:
            return found[0]
        if found:
            raise VoteError(f"{text!r} starts the sha of several commits: give more digits")
        # an imported commit's key is its external id; its sha is in the commit row
        by_sha = find_by_sha_prefix(store, text)
        if len(by_sha) == 1:
            return by_sha[0][0]
        if len({sha.lower() for _, sha in by_sha}) > 1:
            raise VoteError(f"{text!r} starts the sha of several commits: give more digits")
        if by_sha:
            keys = ", ".join(repr(ref.key) for ref, _ in by_sha[:2])
            more = ", ..." if len(by_sha) > 2 else ""
            raise VoteError(
                f"{text!r} is the sha of several items ({keys}{more}): give the external id or #N"
            )
    raise VoteError(f"no item {text!r} (give its external id, or #N for the internal id)")


_SHA_PREFIX = re.compile(r"[0-9a-fA-F]{7,63}")
"""A commit's sha written short, as git does (seven digits or more)."""


@dataclass(frozen=True)
class Allowed:
    labels: list[str]
    categories: list[str]
    set_id: int | None


def allowed_for(store: Store, item: ItemRef, in_set: SetRow | None = None) -> Allowed:
    """Labels and categories an item may get: those of the named set, else the union of
    the sets holding it, else the kind's defaults."""
    if in_set is not None:
        return Allowed(in_set.labels, in_set.categories, in_set.id)
    sets = sets_of_item(store, item.id)
    if not sets:
        return Allowed(DEFAULT_LABELS[item.kind], [], None)
    labels = list(dict.fromkeys(label for s in sets for label in s.labels))
    categories = (
        []
        if any(not s.categories for s in sets)
        else sorted({c for s in sets for c in s.categories})
    )
    return Allowed(labels, categories, sets[0].id if len(sets) == 1 else None)


def prepare_vote(
    store: Store,
    item: ItemRef,
    label: str,
    annotator: str,
    category: str | None = None,
    note: str | None = None,
    adjudicate: bool = False,
    in_set: SetRow | None = None,
    origin: str = "cli",
    allowed: Allowed | None = None,
) -> VoteRow:
    """Check a vote against the item's set(s) and build the row to append. ``allowed``:
    the item's :func:`allowed_for`, when the caller has it already (a file of votes
    checks several on one item)."""
    problem = annotator_problem(annotator.strip())
    if problem is not None:
        raise VoteError(problem)
    if in_set is not None and in_set.kind != item.kind:
        raise VoteError(f"set {in_set.name!r} holds {in_set.kind} items; item is a {item.kind}")
    if in_set is not None and not is_member(store, in_set.id, item.id):
        raise VoteError(f"item #{item.id} is not in set {in_set.name!r}")
    if allowed is None:
        allowed = allowed_for(store, item, in_set)
    try:
        checked = check_label(label.strip(), allowed.labels)
        slug = normalize_category(category, allowed.categories)
    except LabelError as exc:
        raise VoteError(str(exc)) from None
    if adjudicate and checked == SKIP:
        settling = ", ".join(x for x in allowed.labels if x != SKIP)
        raise VoteError(
            f"an adjudication settles item #{item.id} with a label ({settling}); skip"
            " settles nothing"
        )
    return VoteRow(
        item_id=item.id,
        annotator=annotator.strip(),
        label=checked,
        category=slug,
        note=note.strip() if note and note.strip() else None,
        role=ADJUDICATOR if adjudicate else ANNOTATOR,
        set_id=allowed.set_id,
        origin=origin,
    )


@dataclass(frozen=True)
class Displaced:
    """An annotator's live vote that a new vote replaces, and the sets that counted it
    but will not count the new one (their labels differ)."""

    label: str
    sets: list[str]

    def sentence(self, annotator: str, item: str) -> str:
        """One line for the annotator who cast the new vote."""
        plural = "s" if len(self.sets) > 1 else ""
        return (
            f"this replaces {annotator}'s {self.label!r} on {item}, which counted in set"
            f"{plural} {', '.join(self.sets)}: an annotator has one vote per item, so"
            f" {'those sets need' if plural else 'that set needs'} this annotator's vote"
            " on it again"
        )


def displaced_line(source: str, displaced: dict[str, int]) -> str:
    """One warning line for an import whose votes replaced, per other set, that many of
    the same annotators' votes there."""
    lost = ", ".join(f"{name} {n}" for name, n in displaced.items())
    return (
        f"{source}: these votes replace the same annotators' votes that counted in other"
        f" sets, which lose them ({lost}): an annotator has one vote per item, so those"
        " sets need their votes on those items again"
    )


def displaced_by(store: Store, row: VoteRow) -> Displaced | None:
    """What casting ``row`` takes away from other sets: an annotator keeps one live vote
    per item, so a vote with one set's label replaces their vote with another's."""
    old = next(
        (
            v.label
            for v in live_votes_for_items(store, [row.item_id], row.role)
            if v.annotator == row.annotator
        ),
        None,
    )
    return _displacing(store, row.item_id, old, row.label)


def _displacing(store: Store, item_id: int, old: str | None, new: str | None) -> Displaced | None:
    """The sets holding the item that count a live vote ``old`` and would not count its
    replacement ``new``."""
    if old is None or old == new:
        return None
    lost = [
        s.name
        for s in sets_of_item(store, item_id)
        if counts_toward(old, s.labels) and not counts_toward(new, s.labels)
    ]
    return Displaced(old, lost) if lost else None


def append_changed(store: Store, rows: Sequence[VoteRow]) -> tuple[list[VoteRow], dict[str, int]]:
    """Append the rows that change a live vote (label, category or note), in the caller's
    transaction, so an import run twice changes nothing; returns them, and per other set
    how many of its votes they replaced with a label it does not count."""
    live = {
        (v.item_id, v.annotator, v.role): (v.label, v.category, v.note)
        for v in live_votes_for_items(store, {r.item_id for r in rows})
    }
    before = {key: value[0] for key, value in live.items()}
    fresh: list[VoteRow] = []
    for row in rows:
        key = (row.item_id, row.annotator, row.role)
        if live.get(key) != (row.label, row.category, row.note):
            fresh.append(row)
            live[key] = (row.label, row.category, row.note)
    displaced: Counter[str] = Counter()
    last = {(row.item_id, row.annotator, row.role): row for row in fresh}
    for key, row in last.items():
        lost = _displacing(store, row.item_id, before.get(key), row.label)
        displaced.update(lost.sets if lost else [])
    append_votes(store, fresh)
    return fresh, dict(sorted(displaced.items()))


def cast_vote(store: Store, row: VoteRow) -> int:
    return append_votes(store, [row])[0]


def undo(
    store: Store, annotator: str, adjudicate: bool = False, in_set: SetRow | None = None
) -> UndoResult | None:
    return undo_last(
        store, annotator, ADJUDICATOR if adjudicate else ANNOTATOR, in_set.id if in_set else None
    )
