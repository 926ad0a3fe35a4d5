"""Two adjudicators on one item: the latest adjudication is the one in force, in the
decisions, the set's counters, what the annotators see, a release and its import."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from annotation.adjudication import decisions_for_set
from annotation.queue import visible_votes
from curator.releases.export import ExportOptions, export_release
from curator.releases.import_release import import_release
from curator.releases.labels import adjudicated_labels
from store import Store, open_store
from store.bulk import bulk_insert_commits
from store.routing import members_in_state
from store.sets import NewSet, SetRow, create_set, get_set
from store.votes import ADJUDICATOR, VoteRow, append_votes
from tests import raw_sql
from tests.release_data import commit_rows


def tied_item(store: Store) -> tuple[SetRow, int]:
    """A set of one commit that two annotators tie on."""
    bulk_insert_commits(store, commit_rows(1))
    item = int(raw_sql.scalar(store, "SELECT id FROM items"))  # type: ignore[arg-type]
    gt = create_set(store, NewSet("gt", "commit", ["perf", "non-perf"], blind=True), [item])
    append_votes(store, [VoteRow(item, "ann", "perf"), VoteRow(item, "ben", "non-perf")])
    return gt, item


def adjudicate(store: Store, item: int, who: str, label: str, category: str | None) -> None:
    append_votes(store, [VoteRow(item, who, label, category=category, role=ADJUDICATOR)])


def test_a_later_adjudication_overrides_an_earlier_one_whatever_the_names(
    store: Store, tmp_path: Path
) -> None:
    gt, item = tied_item(store)
    # zoe settles it first; adam, whose name sorts first, decides otherwise later
    adjudicate(store, item, "zoe", "non-perf", "other")
    adjudicate(store, item, "adam", "perf", "memory-inefficiency")
    (decision,) = decisions_for_set(store, gt)
    assert (decision.label, decision.adjudicated_by) == ("perf", "adam")
    assert members_in_state(store, gt.id, "adjudicated") == [item]
    shown = visible_votes(store, gt, item, "ann")  # blind: settled, so everyone's show
    assert {v.annotator for v in shown} == {"ann", "ben", "zoe", "adam"}
    info = adjudicated_labels(store, "commit")[item]
    assert (info.label, info.category) == ("perf", "memory-inefficiency")
    # then zoe changes her mind again: hers is now the latest
    adjudicate(store, item, "zoe", "perf", None)
    adjudicate(store, item, "zoe", "non-perf", None)
    assert decisions_for_set(store, gt)[0].label == "non-perf"

    out = tmp_path / "out"
    export_release(store, out, ExportOptions(version="v1", created_at="2026-01-01T00:00:00Z"))
    (record,) = [json.loads(line) for line in (out / "v1" / "commit.jsonl").open()]
    assert record["label"] == "non-perf"
    with open_store(tmp_path / "fresh.db") as fresh:
        import_release(fresh, out / "v1")
        again = get_set(fresh, "release-v1-commit")
        assert again is not None
        assert decisions_for_set(fresh, again)[0].label == "non-perf"


def test_a_release_listing_adjudications_by_name_imports_with_its_label(
    store: Store, tmp_path: Path
) -> None:
    _, item = tied_item(store)
    adjudicate(store, item, "ada", "non-perf", None)
    out = tmp_path / "out"
    export_release(store, out, ExportOptions(version="v1", created_at="2026-01-01T00:00:00Z"))
    release = out / "v1"
    data = release / "commit.jsonl"
    (record,) = [json.loads(line) for line in data.open()]
    # as a release written before adjudications were listed oldest first may hold it: an
    # overruled adjudication listed after the one in force
    overruled = {"annotator": "zed", "category": None, "label": "perf", "role": ADJUDICATOR}
    record["votes"].insert(1, overruled)
    data.write_text(json.dumps(record) + "\n", encoding="utf-8")
    manifest = json.loads((release / "manifest.json").read_text())
    manifest["files"]["commit.jsonl"].update(
        bytes=data.stat().st_size, sha256=hashlib.sha256(data.read_bytes()).hexdigest()
    )
    (release / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with open_store(tmp_path / "fresh.db") as fresh:
        import_release(fresh, release)
        imported = get_set(fresh, "release-v1-commit")
        assert imported is not None
        (decision,) = decisions_for_set(fresh, imported)
        assert (decision.label, decision.adjudicated_by) == ("non-perf", "ada")
