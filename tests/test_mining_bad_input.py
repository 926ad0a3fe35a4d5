"""Bad input gets one clear line, the run goes on, and nothing stored is lost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engines.commits.options import MineOptions
from engines.commits.pipeline import SilentReporter, mine_commits
from store import Store
from tests import raw_sql
from tests.gitrepo import GitRepo, py_module


def test_bad_sources_are_reported_and_the_next_source_is_mined(
    tmp_path: Path, repo: GitRepo, store: Store
) -> None:
    good = repo.commit("init", {"m.py": py_module("y += 1")})
    plain_dir = tmp_path / "plain"
    plain_dir.mkdir()
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    reporter = SilentReporter()
    # an unreachable URL fails, never prompts: a prompt would hang to the suite's timeout
    summaries = mine_commits(
        store,
        [
            str(tmp_path / "missing"),
            str(plain_dir),
            str(a_file),
            "http://127.0.0.1:9/nobody/nothing.git",
            f"file://{tmp_path}/missing.git",
            str(repo.path),
        ],
        MineOptions(),
        reporter=reporter,
        clone_dir=tmp_path / "clones",
    )
    reasons = [s.failed for s in summaries]
    assert reasons[0] == "no such file or directory"
    assert reasons[1] == reasons[2] == "not a git repository"
    assert reasons[3] is not None and reasons[3].startswith("cannot clone:")
    assert "127.0.0.1" in reasons[3] or "connect" in reasons[3].lower()
    assert reasons[4] is not None and reasons[4].startswith("cannot clone:")
    assert all("\n" not in r for r in reasons[:5] if r)
    assert summaries[5].failed is None and summaries[5].stored == 1
    assert raw_sql.scalar(store, "SELECT key FROM items") == good
    assert not list((tmp_path / "clones").glob(".clone-*"))  # no half-written clone left


def test_file_url_is_cloned_and_fetched_again(tmp_path: Path, repo: GitRepo, store: Store) -> None:
    repo.commit("init", {"m.py": py_module("y += 1", "y += 2")})
    first = repo.commit("one", {"m.py": py_module("y += 1", "y += 3")})
    url = f"file://{repo.path}"
    (s1,) = mine_commits(store, [url], MineOptions(), clone_dir=tmp_path / "clones")
    assert s1.stored == 1 and s1.source == url
    second = repo.commit("two", {"m.py": py_module("y += 1", "y += 4")})
    (s2,) = mine_commits(store, [url], MineOptions(), clone_dir=tmp_path / "clones")
    assert (s2.seen, s2.stored) == (1, 1)  # resumed after "one", fetched "two"
    assert {r[0] for r in raw_sql.query(store, "SELECT sha FROM commits")} == {first, second}
    assert raw_sql.scalar(store, "SELECT DISTINCT repo FROM commits") == url


def test_unknown_branch_is_one_error(repo: GitRepo, store: Store) -> None:
    repo.commit("init", {"m.py": py_module("y += 1")})
    (summary,) = mine_commits(store, [str(repo.path)], MineOptions(branch="nope"))
    assert summary.failed == "branch 'nope' not found"


def test_corrupt_object_costs_only_its_commits(repo: GitRepo, store: Store) -> None:
    repo.commit("init", {"m.py": py_module("y += 1", "y += 2"), "n.py": py_module("y += 1")})
    ok1 = repo.commit("ok 1", {"m.py": py_module("y += 1", "y += 3")})
    bad = repo.commit("touches n", {"n.py": py_module("y += 99")})
    ok2 = repo.commit("ok 2", {"m.py": py_module("y += 1", "y += 4")})
    blob = repo.git("rev-parse", f"{bad}:n.py").strip()
    obj = repo.path / ".git" / "objects" / blob[:2] / blob[2:]
    obj.chmod(0o644)
    obj.write_bytes(b"this is not a zlib stream")
    reporter = SilentReporter()
    (summary,) = mine_commits(store, [str(repo.path)], MineOptions(), reporter=reporter)
    assert summary.failed is None
    assert summary.filtered["error"] == 1
    assert {r[0] for r in raw_sql.query(store, "SELECT sha FROM commits")} == {ok1, ok2}
    (line,) = [p for p in reporter.problems if bad[:12] in p]
    assert "cannot read commit" in line and "\n" not in line


def test_non_utf8_message_is_stored_with_replacements_and_a_warning(
    repo: GitRepo, store: Store
) -> None:
    repo.commit("init", {"m.py": py_module("y += 1", "y += 2")})
    sha = repo.commit(b"Avoid copying \xff\xfe buffers\n", {"m.py": py_module("y += 1", "y += 5")})
    reporter = SilentReporter()
    (summary,) = mine_commits(store, [str(repo.path)], MineOptions(), reporter=reporter)
    assert summary.stored == 1
    message = raw_sql.scalar(store, "SELECT message FROM commits WHERE sha = ?", (sha,))
    assert isinstance(message, str)
    assert message.startswith("Avoid copying ") and "buffers" in message
    assert any(sha[:12] in p and "not valid UTF-8" in p for p in reporter.problems)


def test_binary_source_file_is_rejected_with_a_line(repo: GitRepo, store: Store) -> None:
    repo.commit("init", {"m.py": py_module("y += 1")})
    sha = repo.commit("add data", {"blob.py": b"\x00\x01\x02binary\x00" * 50})
    reporter = SilentReporter()
    (summary,) = mine_commits(store, [str(repo.path)], MineOptions(), reporter=reporter)
    assert summary.filtered["binary"] == 1
    assert any(sha[:12] in p and "blob.py is a binary file" in p for p in reporter.problems)


def test_fifty_megabyte_diff_is_skipped_and_the_run_goes_on(repo: GitRepo, store: Store) -> None:
    repo.commit("init", {"m.py": py_module("y += 1", "y += 2")})
    long_line = "    y += 1  # " + "x" * 9_990 + "\n"
    huge = "def big(x):\n    y = x\n" + long_line * 5_000 + "    return y\n"  # ~50 MB
    big = repo.commit("vendor a generated table", {"big.py": huge})
    after = repo.commit("small", {"m.py": py_module("y += 1", "y += 6")})
    many_lines = "def tall(x):\n" + "    x += 1\n" * 60_000 + "    return x\n"
    tall = repo.commit("generated", {"tall.py": many_lines})
    reporter = SilentReporter()
    (summary,) = mine_commits(store, [str(repo.path)], MineOptions(), reporter=reporter)
    assert summary.filtered["diff-too-large"] == 2
    assert {r[0] for r in raw_sql.query(store, "SELECT sha FROM commits")} == {after}
    assert any(big[:12] in p and "MB, over the limit" in p for p in reporter.problems)
    assert any(tall[:12] in p and "changed lines, over the limit" in p for p in reporter.problems)


def test_odd_file_names_survive_the_numstat(repo: GitRepo, store: Store) -> None:
    name = "dir with space/ün\tïcode.py"
    repo.commit("init", {name: py_module("y += 1", "y += 2")})
    sha = repo.commit("tweak", {name: py_module("y += 1", "y += 7")})
    (summary,) = mine_commits(store, [str(repo.path)], MineOptions())
    assert summary.stored == 1
    assert raw_sql.scalar(store, "SELECT file FROM commits WHERE sha = ?", (sha,)) == name


def test_line_counts_from_the_patch_decide_as_the_numstat_walk_does(repo: GitRepo) -> None:
    """The default path's walk counts no lines: a binary source file and a commit over
    the line limit are caught in the extraction, with the lizard path's outcomes (its
    walk counts lines as ``git log --numstat``)."""
    from engines.commits.miner import Mined, mine_repository

    repo.commit("init", {"m.py": py_module("y += 1", "y += 2")})
    repo.commit("binary source", {"blob.c": b"\x00\x01binary\x00" * 50})
    repo.commit("edit and data", {"m.py": py_module("y += 3", "y += 2"), "t.txt": "t\n" * 60})
    repo.commit("edit and more data", {"m.py": py_module("y += 3", "y += 4"), "t.txt": "u\n" * 120})
    repo.commit("edit", {"m.py": py_module("y += 5", "y += 4")})
    options = MineOptions(max_files=2, max_diff_lines=100)

    def outcomes(boundaries: str) -> list[tuple[str, ...]]:
        found = mine_repository(
            repo.path, "r", "main", MineOptions(**{**vars(options), "boundaries": boundaries})
        )
        return [
            (o.sha, "mined")
            if isinstance(o, Mined)
            else (o.sha, o.reason, vars(o).get("message", ""))
            for o in found
        ]

    fast = outcomes("tree-sitter")
    assert fast == outcomes("lizard")
    reasons = [row[1] for row in fast]
    assert reasons == ["too-many-functions", "binary", "mined", "diff-too-large", "mined"]
    assert "diff has 182 changed lines, over the limit of 100" in fast[3][2]


@pytest.mark.parametrize("boundaries", ["tree-sitter", "lizard"])
@pytest.mark.parametrize(
    "date", [b"notadate +0000", b"99999999999999999999 +0000", b"1700000000 +99999"]
)
def test_unreadable_author_date_is_stored_undated_with_one_warning(
    repo: GitRepo, store: Store, boundaries: str, date: bytes
) -> None:
    """git shows an unparseable date as the literal ``%aI`` and one out of range as the
    epoch: neither is stored as a date; one warning line names the repository and the
    commit, the summary counts it, and the commits after it are mined as usual."""
    repo.commit("init", {"m.py": py_module("y += 1", "y += 2")})
    repo.commit("bad date", {"m.py": py_module("y += 1", "y += 5")})
    bad = repo.set_author_date(date)
    after = repo.commit("later", {"m.py": py_module("y += 1", "y += 6")})
    reporter = SilentReporter()
    options = MineOptions(boundaries=boundaries)
    (summary,) = mine_commits(store, [str(repo.path)], options, reporter=reporter)
    assert (summary.stored, summary.undated) == (2, 1)
    dates = dict(raw_sql.query(store, "SELECT sha, author_date FROM commits"))
    assert dates == {bad: None, after: "2024-03-01T00:03:00+00:00"}
    (line,) = reporter.problems
    assert line.startswith(f"{repo.path.resolve()}@{bad[:12]}: author date unreadable")
    assert repr(date.decode()) in line and "\n" not in line


def test_a_commit_dated_at_the_epoch_keeps_its_date(repo: GitRepo, store: Store) -> None:
    repo.commit("init", {"m.py": py_module("y += 1", "y += 2")})
    repo.commit("old", {"m.py": py_module("y += 1", "y += 5")})
    sha = repo.set_author_date(b"0 +0000")
    reporter = SilentReporter()
    (summary,) = mine_commits(store, [str(repo.path)], MineOptions(), reporter=reporter)
    assert (summary.stored, summary.undated, reporter.problems) == (1, 0, [])
    date = raw_sql.scalar(store, "SELECT author_date FROM commits WHERE sha = ?", (sha,))
    assert date == "1970-01-01T00:00:00+00:00"


def test_the_cli_warns_once_and_counts_undated_commits_in_its_summary(  # type: ignore[no-untyped-def]
    cli, repo: GitRepo, tmp_path: Path
) -> None:
    repo.commit("init", {"m.py": py_module("y += 1", "y += 2")})
    repo.commit("bad date", {"m.py": py_module("y += 1", "y += 5")})
    bad = repo.set_author_date(b"notadate +0000")
    result = cli("mine", "commits", str(repo.path))
    assert result.exit_code == 0, result.output
    warnings = [ln for ln in result.stderr.splitlines() if "author date" in ln]
    assert warnings == [
        f"warning: {repo.path.resolve()}@{bad[:12]}: author date unreadable"
        " ('notadate +0000' in the commit object); stored without a date"
    ]
    assert "kept without a date (author date unreadable, see the warnings): 1" in result.stdout
    fresh = cli("mine", "commits", str(repo.path), "--json", "--db", str(tmp_path / "j.db"))
    report = json.loads(fresh.stdout)
    assert (report["stored"], report["undated"], report["sources"][0]["undated"]) == (1, 1, 1)
