"""The sample repository: every commit meets the fate its recipe entry promises."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from engines.commits.miner import Filtered, Mined, mine_repository
from engines.commits.options import MineOptions
from engines.commits.pipeline import mine_commits
from engines.labelers.keyword import KeywordLabeler
from store import Store
from tests import raw_sql


def test_recipe_has_the_promised_shape(sample_repo: tuple[Path, list[dict]]) -> None:
    _, commits = sample_repo
    assert len(commits) >= 60
    languages = Counter(
        Path(f).suffix for c in commits for f in c["files"] if Path(f).suffix in {".py", ".java"}
    )
    assert languages[".py"] >= 15 and languages[".java"] >= 15
    assert any(Path(f).suffix in {".cpp", ".hpp", ".h", ".cc"} for c in commits for f in c["files"])
    traps = Counter(c["trap"] for c in commits if c["trap"])
    assert traps["keyword-not-perf"] >= 4 and traps["perf-without-keyword"] >= 4
    labels = Counter(c["label"] for c in commits)
    assert labels["perf"] >= 15 and labels["non-perf"] >= 15


def test_every_commit_gets_the_expected_outcome(sample_repo: tuple[Path, list[dict]]) -> None:
    path, commits = sample_repo
    outcomes = {o.sha: o for o in mine_repository(path, str(path), "main", MineOptions())}
    assert len(outcomes) == len(commits)
    for c in commits:
        outcome = outcomes[c["sha"]]
        got = "stored" if isinstance(outcome, Mined) else outcome.reason
        assert isinstance(outcome, Mined | Filtered)
        assert got == c["expect"], f"{c['id']}: expected {c['expect']}, got {got}"


def test_mining_stores_exactly_the_single_file_single_function_commits(
    sample_repo: tuple[Path, list[dict]], store: Store
) -> None:
    path, commits = sample_repo
    (summary,) = mine_commits(store, [str(path)], MineOptions(), [KeywordLabeler()])
    expected = {c["sha"] for c in commits if c["expect"] == "stored"}
    assert summary.stored == len(expected)
    assert {r[0] for r in raw_sql.query(store, "SELECT sha FROM commits")} == expected
    # every stored commit is pre-labeled by the keyword baseline, with its matches
    assert raw_sql.scalar(
        store, "SELECT COUNT(*) FROM predictions WHERE labeler = 'keyword@5'"
    ) == len(expected)


def test_keyword_traps_fool_the_keyword_baseline(
    sample_repo: tuple[Path, list[dict]], store: Store
) -> None:
    path, commits = sample_repo
    mine_commits(store, [str(path)], MineOptions(), [KeywordLabeler()])
    predicted = {
        row[0]: row[1]
        for row in raw_sql.query(
            store, "SELECT i.key, p.label FROM predictions p JOIN items i ON i.id = p.item_id"
        )
    }
    for c in commits:
        if c["expect"] != "stored" or not c["trap"]:
            continue
        want = "perf" if c["trap"] == "keyword-not-perf" else "non-perf"
        assert predicted[c["sha"]] == want, c["id"]
