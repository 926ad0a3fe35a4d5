"""A release's charts on a team's busy store: the sets a release names are the ones
charted, the busiest sets when there are more than fit, and two set names that share
their safe characters keep two chart files."""

from __future__ import annotations

from pathlib import Path

from curator.releases.export import ExportOptions, export_release
from store import Store
from store.bulk import bulk_insert_commits
from store.sets import NewSet, create_set
from store.votes import VoteRow, append_votes
from tests import raw_sql
from tests.release_data import commit_rows

LABELS = ["perf", "non-perf"]


def voted_set(store: Store, name: str, items: list[int], voters: int = 1) -> None:
    made = create_set(store, NewSet(name, "commit", LABELS, votes_per_item=1), items)
    append_votes(
        store,
        [
            VoteRow(item, f"ann{k}", LABELS[item * k % 2], set_id=made.id)
            for item in items
            for k in range(voters)
        ],
    )


def charts(release: Path) -> set[str]:
    return {p.name for p in (release / "charts").glob("*.svg")}


def test_the_named_and_the_busiest_sets_are_charted(store: Store, tmp_path: Path) -> None:
    bulk_insert_commits(store, commit_rows(20))
    ids = [int(r[0]) for r in raw_sql.query(store, "SELECT id FROM items ORDER BY id")]
    for i in range(13):  # scratch sets sorting before the team's, one vote each
        voted_set(store, f"a-scratch-{i:02d}", ids[i : i + 1])
    voted_set(store, "team", ids[13:20], voters=2)
    options = ExportOptions(version="all", created_at="2026-01-01T00:00:00Z")
    export_release(store, tmp_path, options)
    shown = charts(tmp_path / "all")
    assert "labels-team.svg" in shown and "agreement-team.svg" in shown
    assert len({name.split("-", 1)[1] for name in shown if name.startswith("labels-")}) == 12
    named = ExportOptions(version="one", sets=["team"], created_at="2026-01-01T00:00:00Z")
    export_release(store, tmp_path, named)
    assert {n for n in charts(tmp_path / "one") if not n.startswith("learning")} == {
        "labels-team.svg",
        "agreement-team.svg",
    }


def test_set_names_alike_in_safe_characters_keep_their_own_charts(
    store: Store, tmp_path: Path
) -> None:
    bulk_insert_commits(store, commit_rows(4))
    ids = [int(r[0]) for r in raw_sql.query(store, "SELECT id FROM items ORDER BY id")]
    voted_set(store, "a/b", ids[:2])
    voted_set(store, "a\\b", ids[2:])
    export_release(store, tmp_path, ExportOptions(version="v", created_at="2026-01-01T00:00:00Z"))
    labels = sorted(n for n in charts(tmp_path / "v") if n.startswith("labels-"))
    assert len(labels) == 2 and all(n.startswith("labels-a_b-") for n in labels)
    sheet = (tmp_path / "v" / "DATASHEET.md").read_text(encoding="utf-8")
    assert all(f"(charts/{n})" in sheet for n in labels)
