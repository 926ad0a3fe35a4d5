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
    mining: dict[str, dict[str, Any]] = {}
    for kind, source, counters in store._query(
        "SELECT kind, source, counters FROM checkpoints ORDER BY updated_at, source"
    ):
        # the latest scope (set of filters) mined for each source
        mining[f"{kind}:{source}"] = json.loads(counters)
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
        "mining": mining,
        "ir": ir_counts(store),
        "kernels_by_verdict": kernel_verdict_counts(store),
    }
