"""Helpers that put items, predictions and votes into a store for annotation tests."""

from __future__ import annotations

from dataclasses import dataclass

from store import Store
from store.commits import insert_predictions
from store.items import ImportedItem, insert_imported_items
from store.records import PredictionRow
from store.votes import VoteRow, append_votes


@dataclass(frozen=True)
class Spec:
    key: str
    source: str = "repo-a"
    language: str = "python"
    prediction: str | None = None
    stars: int | None = None


def add_items(store: Store, specs: list[Spec], labeler: str = "keyword@1") -> dict[str, int]:
    """Store commit items (message only) with an optional prediction each; key -> id."""
    items = [
        ImportedItem(
            kind="commit",
            key=s.key,
            source=s.source,
            language=s.language,
            path=None,
            payload={"message": f"commit {s.key}", "model_input": f"commit {s.key}"},
            provenance={} if s.stars is None else {"stars": s.stars},
        )
        for s in specs
    ]
    ids = {
        s.key: item_id
        for s, (_, item_id) in zip(specs, insert_imported_items(store, items), strict=True)
    }
    for s in specs:
        if s.prediction is not None:
            insert_predictions(store, ids[s.key], [PredictionRow(labeler, s.prediction, None)])
    return ids


def many(
    n: int,
    sources: int = 5,
    languages: tuple[str, ...] = ("python", "java", "cpp"),
    positive_every: int = 2,
) -> list[Spec]:
    return [
        Spec(
            key=f"c{i:05d}",
            source=f"repo-{i % sources}",
            language=languages[i % len(languages)],
            prediction="perf" if i % positive_every == 0 else "non-perf",
            stars=(i * 37) % 5000,
        )
        for i in range(n)
    ]


def vote(store: Store, item_id: int, annotator: str, label: str | None, **kw: object) -> int:
    return append_votes(store, [VoteRow(item_id, annotator, label, **kw)])[0]  # type: ignore[arg-type]
