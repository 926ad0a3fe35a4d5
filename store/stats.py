"""Corpus counts for ``curator stats``: by kind, language, source, labeler and label."""

from __future__ import annotations

import json
from typing import Any

from store.connection import Store
from store.ir import ir_counts
from store.kernels import kernel_verdict_counts
from store.migrations import SCHEMA_VERSION


def _pairs(store: Store, sql: str) -> dict[str, int]:
    return {str(row[0]): int(row[1]) for row in store._query(sql)}


def corpus_stats(store: Store) -> dict[str, Any]:
    """Every count ``curator stats`` shows, as plain JSON-ready data."""
    by_labeler: dict[str, dict[str, int]] = {}
    for labeler, label, count in store._query(
        "SELECT labeler, label, COUNT(*) FROM predictions GROUP BY labeler, label"
        " ORDER BY labeler, label"
    ):
        by_labeler.setdefault(labeler, {})[label] = count
    by_kind_language: dict[str, dict[str, int]] = {}
    for kind, language, count in store._query(
        "SELECT kind, COALESCE(language, 'unknown'), COUNT(*) FROM items"
        " GROUP BY kind, language ORDER BY kind, language"
    ):
        by_kind_language.setdefault(kind, {})[language] = count
    return {
        "database": str(store.path),
        "schema_version": SCHEMA_VERSION,
        "items": int(store._scalar("SELECT COUNT(*) FROM items") or 0),
        "by_kind": _pairs(store, "SELECT kind, COUNT(*) FROM items GROUP BY kind ORDER BY kind"),
        "by_language": by_kind_language,
        "by_source": _pairs(
            store,
            "SELECT source, COUNT(*) FROM items GROUP BY source ORDER BY COUNT(*) DESC, source",
        ),
        "duplicates": _pairs(
            store, "SELECT kind, COUNT(*) FROM duplicates GROUP BY kind ORDER BY kind"
        ),
        "predictions": by_labeler,
        "votes": int(store._scalar("SELECT COUNT(*) FROM votes") or 0),
        "live_votes": int(store._scalar("SELECT COUNT(*) FROM live_votes") or 0),
        "sets": int(store._scalar("SELECT COUNT(*) FROM sets") or 0),
        "mining": mining_stats(store),
        "ir": ir_counts(store),
        "kernels_by_verdict": kernel_verdict_counts(store),
    }


def mining_stats(store: Store) -> dict[str, dict[str, Any]]:
    """Per ``kind:source``, the counters of the latest walk (scope, i.e. set of filters)
    with ``stored`` the items the store holds from that source, of that kind, from every
    walk: a walk that started over (history rewritten, a deepened clone, other filters
    or another window) recognises what earlier walks stored instead of storing it, so
    its own count (kept as ``stored_by_walk``) leaves those out."""
    held = {
        (str(kind), str(source)): int(count)
        for kind, source, count in store._query(
            "SELECT kind, source, COUNT(*) FROM items GROUP BY kind, source"
        )
    }
    mining: dict[str, dict[str, Any]] = {}
    for kind, source, counters in store._query(
        "SELECT kind, source, counters FROM checkpoints ORDER BY updated_at, source"
    ):
        walk = json.loads(counters)
        mining[f"{kind}:{source}"] = {
            **walk,
            "stored_by_walk": walk.get("stored", 0),
            "stored": held.get((kind, source), 0),
        }
    return mining
