"""A source of labels named by a person counts their adjudications: an adjudicator who
settled conflicts has votes, and `--labeler NAME` / `--disagree NAME,...` used to say
they had none."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from curator.cli import app
from curator.search import SearchError, SearchRequest, run_search
from store import Store, open_store
from store.items import ImportedItem, insert_imported_items
from store.sets import NewSet, create_set
from store.votes import ADJUDICATOR, VoteRow, append_votes
from tests import raw_sql


def _commit(key: str) -> ImportedItem:
    return ImportedItem(
        kind="commit",
        key=key,
        source="repo-a",
        language="python",
        path=f"src/{key}.py",
        payload={"message": f"cache change {key}", "diff": "+x\n", "model_input": key},
        provenance={},
    )


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = open_store(tmp_path / "s.db")
    insert_imported_items(s, [_commit(k) for k in ("a", "b", "c")])
    ids = [int(r[0]) for r in raw_sql.query(s, "SELECT id FROM items ORDER BY id")]
    row = create_set(s, NewSet(name="gt", kind="commit", labels=["perf", "non-perf"]), ids)
    a, b, c = ids
    append_votes(
        s,
        [
            VoteRow(a, "ann", "perf", set_id=row.id),
            VoteRow(a, "bob", "non-perf", set_id=row.id),
            VoteRow(a, "dana", "perf", role=ADJUDICATOR, set_id=row.id),
            VoteRow(b, "ann", "perf", set_id=row.id),
            VoteRow(b, "bob", "non-perf", set_id=row.id),
            VoteRow(b, "dana", "non-perf", role=ADJUDICATOR, set_id=row.id),
            VoteRow(c, "dana", "non-perf", set_id=row.id),
            VoteRow(c, "ann", "non-perf", set_id=row.id),
        ],
    )
    return s


def _keys(store: Store, request: SearchRequest) -> list[str]:
    hits = run_search(store, request).hits
    return sorted(h.key for h in hits)


def test_an_adjudicators_decisions_are_their_labels(store: Store) -> None:
    assert _keys(store, SearchRequest("", label="perf", labeler="dana")) == ["a"]
    assert _keys(store, SearchRequest("", label="non-perf", labeler="dana")) == ["b", "c"]
    assert _keys(store, SearchRequest("", disagree=("dana", "ann"))) == ["b"]
    with pytest.raises(SearchError, match="'nobody' is neither a labeler"):
        run_search(store, SearchRequest("", disagree=("nobody", "ann")))


def test_cli_disagree_with_an_adjudicator(store: Store) -> None:
    result = CliRunner().invoke(
        app, ["search", "", "--disagree", "dana,bob", "--json", "--db", str(store.path)]
    )
    assert result.exit_code == 0, result.output
    assert '"key": "a"' in result.stdout and '"key": "b"' not in result.stdout
