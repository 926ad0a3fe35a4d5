"""A query whose column filters lie in different indexes (each index is searched on its
own) is one clear line saying so: it used to read ``no such column: message (columns:
key, path, message, ...)``, naming as missing a column it lists, or, with --kind, ``column
'note' holds None text``."""

from __future__ import annotations

from pathlib import Path

import pytest

from curator.search import SearchError, SearchRequest, run_search
from store import Store, open_store
from store.items import ImportedItem, insert_imported_items

MIXED = "is not in the same index as the query's other columns: each index is searched on"


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = open_store(tmp_path / "s.db")
    insert_imported_items(
        s,
        [
            ImportedItem(
                kind="commit",
                key="a",
                source="repo",
                language="python",
                path="src/linalg.py",
                payload={"message": "fix a leak", "diff": "+x\n", "model_input": "x"},
                provenance={},
            )
        ],
    )
    return s


@pytest.mark.parametrize(
    ("query", "kind", "column"),
    [
        ("path: linalg AND message: fix", None, "message"),
        ("{path message}: fix", None, "message"),
        ("note: boom AND message: fix", "commit", None),
    ],
)
def test_columns_of_two_indexes_in_one_query(
    store: Store, query: str, kind: str | None, column: str | None
) -> None:
    with pytest.raises(SearchError) as caught:
        run_search(store, SearchRequest(query, kind=kind))
    said = str(caught.value)
    assert MIXED in said and "None" not in said and "no such column" not in said
    if column is not None:
        assert f"column {column!r} is not in the same index" in said


def test_one_index_and_unknown_columns_are_as_before(store: Store) -> None:
    assert [h.key for h in run_search(store, SearchRequest("message: fix AND diff: x")).hits] == [
        "a"
    ]
    with pytest.raises(SearchError, match=r"no such column: foo \(columns: key, path"):
        run_search(store, SearchRequest("foo: bar"))
    with pytest.raises(SearchError, match="column 'message' holds commit text: --kind kernel"):
        run_search(store, SearchRequest("message: fix", kind="kernel"))
