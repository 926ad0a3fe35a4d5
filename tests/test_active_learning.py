"""Active learning: sets drawn and ordered by a labeler's uncertainty."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from annotation.sampling import uncertain_sample, uncertainty
from annotation.sets import redraw
from store import Store, open_store
from store.predictions import add_predictions
from store.records import PredictionRow
from store.sets import Candidate, get_set, set_item_ids
from tests.annotation_data import Spec, add_items


def test_uncertainty_is_closeness_to_one_half_for_two_classes() -> None:
    assert uncertainty(0.5, binary=True) == 1.0
    assert uncertainty(0.9, binary=True) == pytest.approx(0.2)
    assert uncertainty(0.1, binary=True) == pytest.approx(0.2)
    assert uncertainty(1.0, binary=True) == 0.0
    assert uncertainty(None, binary=True) == 0.0
    assert uncertainty(0.3, binary=False) == pytest.approx(0.7)  # a category's confidence


def _candidate(i: int, language: str) -> Candidate:
    return Candidate(i, f"k{i}", "repo", language, None, {})


def test_uncertain_sample_takes_the_least_sure_per_stratum_most_uncertain_first() -> None:
    items = [_candidate(i, "python" if i < 6 else "java") for i in range(10)]
    unsure = {i: i / 10 for i in range(10)}  # item 9 is the least sure
    chosen, allocation = uncertain_sample(items, 4, unsure, [], random.Random(0))
    assert [c.item_id for c in chosen] == [9, 8, 7, 6]
    assert allocation == {"all": 4}
    chosen, allocation = uncertain_sample(items, 5, unsure, ["language"], random.Random(0))
    assert allocation == {"java": 2, "python": 3}
    assert [c.item_id for c in chosen] == [9, 8, 5, 4, 3]
    # Ties are broken by the seed, the same way every time.
    flat = dict.fromkeys(range(10), 0.5)
    a = uncertain_sample(items, 3, flat, [], random.Random(7))[0]
    b = uncertain_sample(items, 3, flat, [], random.Random(7))[0]
    assert a == b


def _scored_items(store: Store) -> dict[str, int]:
    ids = add_items(store, [Spec(f"c{i}", source=f"repo-{i % 2}") for i in range(8)])
    # student@1 is sure of everything; student@2 is unsure of c5, c2 and c7 (in that order).
    newer = {"c0": 0.99, "c1": 0.9, "c2": 0.55, "c3": 0.97, "c4": 0.8, "c5": 0.5, "c7": 0.6}
    rows = [(ids[k], PredictionRow("student@1", "perf", 0.99)) for k in ids]
    rows += [
        (ids[k], PredictionRow("student@2", "perf" if i % 2 else "non-perf", score))
        for i, (k, score) in enumerate(newer.items())
    ]
    add_predictions(store, rows)
    return ids


def test_set_create_prefer_uncertain_through_the_cli(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with open_store(tmp_path / "cli.db") as store:
        ids = _scored_items(store)
    result = cli(
        "set", "create", "q", "--prefer", "uncertain", "--labeler", "student@latest",
        "--sample", "3",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "uncertainty of student@2" in result.output
    with open_store(tmp_path / "cli.db") as store:
        q = get_set(store, "q")
        assert q is not None
        assert set_item_ids(store, q.id) == [ids["c5"], ids["c2"], ids["c7"]]
        assert q.params["draw"]["labeler"] == "student@2"  # the version used, for redraws
        assert redraw(store, "q") == set_item_ids(store, q.id)
    shown = json.loads(cli("set", "show", "q", "--json").output)
    assert shown["params"]["draw"]["prefer"] == "uncertain"

    # Without --sample: every item the labeler predicted (c6 never was), least sure first.
    assert (
        cli("set", "create", "all", "--prefer", "uncertain", "--labeler", "student@2").exit_code
        == 0
    )
    with open_store(tmp_path / "cli.db") as store:
        members = set_item_ids(store, get_set(store, "all").id)  # type: ignore[union-attr]
    assert members[:3] == [ids["c5"], ids["c2"], ids["c7"]]
    assert members[-1] == ids["c0"] and ids["c6"] not in members


def test_prefer_refusals(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    with open_store(tmp_path / "cli.db") as store:
        _scored_items(store)
    assert cli("set", "create", "a", "--prefer", "uncertain").exit_code == 2
    assert cli("set", "create", "a", "--prefer", "oldest", "--labeler", "student@1").exit_code == 2
    both = cli(
        "set", "create", "a", "--prefer", "uncertain", "--labeler", "student@1",
        "--balanced", "student@1",
    )  # fmt: skip
    assert both.exit_code == 2
    missing = cli("set", "create", "a", "--prefer", "uncertain", "--labeler", "tfidf@latest")
    assert missing.exit_code == 1 and "no predictions" in missing.output
    too_many = cli(
        "set", "create", "a", "--prefer", "uncertain", "--labeler", "student@2", "--sample", "8"
    )
    assert too_many.exit_code == 1 and "predicted only 7" in too_many.output
