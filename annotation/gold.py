"""Hidden gold items: settled items of another set mixed into a set's queues, and what
each annotator's answers on them say about their accuracy.

A gold item is not a member of the set: it appears in no count, no agreement and no
release of it, and an answer given on it is stored as a gold answer, never a vote
(``annotation.routing.submit``). Routing serves one whenever an annotator's answered
gold falls below the set's rate of their work.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from annotation.adjudication import final_labels
from annotation.sets import SetError, require_set
from store import Store
from store.routing import add_gold_items, gold_claim_sets, gold_count
from store.sets import SetRow, get_set_by_id, set_item_ids, set_size, update_set


@dataclass(frozen=True)
class GoldResult:
    set_row: SetRow
    added: int
    total: int
    rate: float
    skipped_labels: int


def add_gold(store: Store, name: str, from_set: str, rate: float, seed: int = 0) -> GoldResult:
    """Draw ``rate`` x the set's size (at least one) settled items of ``from_set`` that
    are not members of the set, as hidden gold items with their final labels."""
    if not 0 < rate <= 1:
        raise SetError(f"--rate {rate}: give a share between 0 and 1, e.g. 0.05")
    # Read and write under one write lock: two `set gold` runs at once would each count
    # the gold already there before the other added its own, and add it twice over.
    with store.transaction():
        target = require_set(store, name)
        source = require_set(store, from_set)
        if source.id == target.id:
            raise SetError("gold items come from another set (--from names the set itself)")
        if source.kind != target.kind:
            raise SetError(f"set {from_set!r} holds {source.kind} items, not {target.kind}")
        members = set(set_item_ids(store, target.id))
        known = final_labels(store, source)
        fits = {i: label for i, label in known.items() if i not in members}
        usable = sorted(i for i, label in fits.items() if label in target.labels)
        if not usable:
            raise SetError(
                f"set {from_set!r} has no settled item outside {name!r} labelled"
                f" {' or '.join(target.labels)} (the labels of {name!r})"
            )
        wanted = max(1, round(rate * set_size(store, target.id))) - gold_count(store, target.id)
        chosen = random.Random(seed).sample(usable, min(max(wanted, 0), len(usable)))
        added = add_gold_items(store, target.id, [(i, fits[i]) for i in chosen], from_set)
        params = {**target.params, "gold": {"rate": rate, "from": from_set, "seed": seed}}
        update_set(store, target.id, params=params)
        return GoldResult(
            require_set(store, name),
            added,
            gold_count(store, target.id),
            rate,
            len(fits) - len(usable),
        )


def served_gold_set(store: Store, item_id: int, annotator: str) -> SetRow | None:
    """The set that served the item to the annotator as hidden gold (they hold its claim,
    expired or not), if one did: a vote on it named without ``--set`` is their answer
    there, not a vote in the set the gold item came from."""
    sets = gold_claim_sets(store, item_id, annotator)
    return get_set_by_id(store, sets[0]) if sets else None
