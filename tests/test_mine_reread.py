"""``curator mine reread``: commits stored by an earlier Curator get the model input
this one makes, from their stored message, diff and file; nothing else changes."""

from __future__ import annotations

import json
import os
from pathlib import Path

from engines.commits.representation import model_input
from store import open_store
from store.commits import insert_predictions
from store.records import PredictionRow
from tests.gitrepo import GitRepo, py_module
from tests.raw_sql import connection, query

HUNKS = "@@ -1,2 +1,2 @@\n def f(x):\n-    return sorted(x)[0]\n+    return min(x)\n"


def _stored(db: Path) -> dict[int, tuple[str, str, str, str | None]]:
    with open_store(db) as store:
        rows = query(
            store,
            "SELECT c.item_id, c.model_input, c.message, c.diff, COALESCE(c.file, i.path)"
            " FROM commits c JOIN items i ON i.id = c.item_id",
        )
    return {r[0]: (r[1], r[2], r[3], r[4]) for r in rows}


def _age(db: Path) -> None:
    """Write every commit's model input as Curator wrote it before 2026-11-28: the
    mined diff without git's ``index`` line, an imported diff of hunks without a header."""
    with open_store(db) as store:
        conn = connection(store)
        for item_id, text in conn.execute("SELECT item_id, model_input FROM commits").fetchall():
            old = "\n".join(
                line
                for line in text.split("\n")
                if not line.startswith(("index 0000000", "diff --git", "--- a/", "+++ b/"))
            )
            conn.execute("UPDATE commits SET model_input = ? WHERE item_id = ?", (old, item_id))
        conn.commit()


def _mined_and_imported(cli, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    repo = GitRepo(tmp_path / "repo")
    repo.commit("init", {"m.py": py_module("y += 1")})
    repo.commit("Shift instead of multiply", {"m.py": py_module("y <<= 1")})
    repo.commit("Cache the parsed header", {"m.py": py_module("y -= 1")})
    assert cli("mine", "commits", str(repo.path)).exit_code == 0
    rows = tmp_path / "rows.jsonl"
    row = {"id": "x1", "message": "Use min instead of sorting", "diff": HUNKS, "file": "src/s.py"}
    rows.write_text(json.dumps(row) + "\n")
    assert (
        cli("import", "items", str(rows), "--set", "s", "--labels", "perf,non-perf").exit_code == 0
    )
    return Path(os.environ["CURATOR_DB"])


def test_reread_writes_what_this_curator_makes_and_a_second_run_changes_nothing(
    cli, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    db = _mined_and_imported(cli, tmp_path)
    fresh = _stored(db)
    assert len(fresh) == 4
    _age(db)
    aged = _stored(db)
    assert all(aged[i][0] != fresh[i][0] for i in fresh)

    dry = cli("mine", "reread", "--dry-run", "--json")
    assert dry.exit_code == 0, dry.output
    assert json.loads(dry.stdout) == {
        "examined": 4,
        "changed": 4,
        "written": False,
        "changed_with_predictions": 0,
    }
    assert _stored(db) == aged

    done = cli("mine", "reread")
    assert done.exit_code == 0, done.output
    assert "4 commits: 4 model inputs changed" in done.stdout
    now = _stored(db)
    assert now == fresh
    for text, message, diff, path in now.values():
        assert text == model_input(message, diff, path=path)
    # the imported hunks read with the file their row named
    assert any("diff --git a/src/s.py b/src/s.py" in text for text, *_ in now.values())

    again = cli("mine", "reread")
    assert again.exit_code == 0
    assert "every model input is already current" in again.stdout


def test_reread_names_changed_commits_a_model_already_labeled(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    db = _mined_and_imported(cli, tmp_path)
    _age(db)
    with open_store(db) as store:
        ids = sorted(r[0] for r in query(store, "SELECT item_id FROM commits"))
        insert_predictions(store, ids[0], [PredictionRow("student@1", "perf", 0.9, {})])
        insert_predictions(store, ids[1], [PredictionRow("keyword@5", "perf", 1.0, {})])
    done = cli("mine", "reread", "--json")
    assert json.loads(done.stdout)["changed_with_predictions"] == 1
    text = cli("mine", "reread", "--dry-run")
    assert "already current" in text.stdout


def test_reread_of_one_source_leaves_the_others(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    db = _mined_and_imported(cli, tmp_path)
    _age(db)
    aged = _stored(db)
    repo = str(tmp_path / "repo")
    with open_store(db) as store:
        mined = {r[0] for r in query(store, "SELECT id FROM items WHERE source = ?", (repo,))}
    assert len(mined) == 3
    done = cli("mine", "reread", "--source", repo, "--json")
    assert json.loads(done.stdout)["changed"] == 3
    now = _stored(db)
    assert all((now[i] != aged[i]) == (i in mined) for i in now)


def test_an_unknown_source_is_one_line_and_writes_nothing(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    db = _mined_and_imported(cli, tmp_path)
    _age(db)
    aged = _stored(db)
    result = cli("mine", "reread", "--source", "https://example.org/nope")
    assert result.exit_code == 2
    assert "no commits of that source" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert _stored(db) == aged


def test_predict_says_when_the_commits_it_reads_need_a_reread(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    db = _mined_and_imported(cli, tmp_path)
    _age(db)
    told = cli("predict", "--unlabeled", "--labeler", "keyword@2", "--input", "model_input")
    assert told.exit_code == 0, told.output
    assert "4 of 4 commits checked hold a model input made by an earlier Curator" in " ".join(
        told.output.split()
    )
    # the rules read the message by default: the model input is not theirs to warn of
    message = cli("predict", "--unlabeled", "--labeler", "keyword@1")
    assert message.exit_code == 0 and "mine reread" not in message.output
    assert cli("mine", "reread").exit_code == 0
    current = cli("predict", "--unlabeled", "--labeler", "keyword@3", "--input", "model_input")
    assert current.exit_code == 0 and "mine reread" not in current.output


def test_a_smaller_token_budget_is_not_taken_for_an_old_curator(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = GitRepo(tmp_path / "repo")
    repo.commit("init", {"m.py": py_module("y += 1")})
    repo.commit("Shift instead of multiply", {"m.py": py_module("y <<= 1")})
    assert cli("mine", "commits", str(repo.path), "--token-budget", "12").exit_code == 0
    told = cli("predict", "--unlabeled", "--labeler", "keyword@2", "--input", "model_input")
    assert told.exit_code == 0 and "mine reread" not in told.output
    assert (
        json.loads(cli("mine", "reread", "--token-budget", "12", "--json").stdout)["changed"] == 0
    )
