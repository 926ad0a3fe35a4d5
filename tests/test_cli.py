"""The ``curator`` command as a user runs it: help, database location, mine, stats."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from curator import __version__
from engines.commits.gitlog import count_commits
from store import open_store
from tests import raw_sql
from tests.gitrepo import GitRepo, py_module

ANSI = re.compile(r"\x1b\[[0-9;]*m")
SUMMARY = re.compile(r"seen (\d+), filtered (\d+), duplicates (\d+), stored (\d+)")


def text(stream: str) -> str:
    """Output with any colour codes removed (CI may force colours on)."""
    return ANSI.sub("", stream)


def summary_counts(stdout: str) -> dict[str, int]:
    match = SUMMARY.search(text(stdout))
    assert match, stdout
    names = ("seen", "filtered", "duplicates", "stored")
    return dict(zip(names, map(int, match.groups()), strict=True))


def query(db: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    with open_store(db, create=False) as s:
        return [tuple(r) for r in raw_sql.query(s, sql, params)]


def build_repo(repo: GitRepo) -> dict[str, list[str]]:
    """Commits with a known fate each: stored, duplicate or filtered (by reason)."""
    fates: dict[str, list[str]] = {}

    def commit(fate: str, message: str, files: dict[str, str | bytes | None]) -> None:
        fates.setdefault(fate, []).append(repo.commit(message, files))

    commit("too-many-functions", "init", {"m.py": py_module("y += 1", "y += 2")})
    commit("stored", "Use a shift for the doubling", {"m.py": py_module("y += 1", "y <<= 1")})
    commit("language", "docs", {"README.md": "hello\n"})
    commit("stored", "Cache the lookup", {"m.py": py_module("y *= 3", "y <<= 1")})
    commit("stored", "revert: cache the lookup", {"m.py": py_module("y += 1", "y <<= 1")})
    commit("duplicate", "Cache the lookup again", {"m.py": py_module("y *= 3", "y <<= 1")})
    commit(
        "too-many-files",
        "two files",
        {"m.py": py_module("y *= 4", "y <<= 1"), "n.py": py_module("y -= 1")},
    )
    return fates


# --------------------------------------------------------------------------- help


def test_help_lists_the_commands(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("--help")
    assert result.exit_code == 0
    out = text(result.stdout)
    assert "mine" in out and "stats" in out


def test_mine_commits_help_lists_the_options(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("mine", "commits", "--help")
    assert result.exit_code == 0
    out = text(result.stdout)
    for option in ("--lang", "--since", "--until", "--max-files", "--branch", "--limit", "--db"):
        assert option in out
    assert "--batch-size" not in out  # hidden
    assert "CURATOR_DB" in out and "./curator.db" in out  # where the database is


def test_version(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("--version")
    assert result.exit_code == 0
    assert result.stdout.strip() == f"curator {__version__}"


def test_help_works_as_a_user_runs_it(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "curator", "mine", "commits", "--help"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert proc.returncode == 0, proc.stderr
    assert "--lang" in text(proc.stdout)
    assert not (tmp_path / "curator.db").exists()  # help opens no database


# --------------------------------------------------------------------------- database location


def test_db_flag_beats_env_which_beats_the_current_directory(
    cli,  # type: ignore[no-untyped-def]
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    flag, env = tmp_path / "flag.db", tmp_path / "env.db"
    monkeypatch.setenv("CURATOR_DB", str(env))

    items = tmp_path / "one.jsonl"
    items.write_text('{"id": "c1", "message": "Speed up the parser"}\n')

    def location(*args: str) -> Path:
        made = cli("import", "items", str(items), "--set", "s", *args)  # creates the store
        assert made.exit_code == 0, made.output
        result = cli("stats", "--json", *args)
        assert result.exit_code == 0, result.output
        return Path(json.loads(text(result.stdout))["database"])

    assert location("--db", str(flag)) == flag
    assert flag.is_file() and not env.exists() and not (work / "curator.db").exists()

    assert location() == env
    assert env.is_file() and not (work / "curator.db").exists()

    monkeypatch.delenv("CURATOR_DB")
    assert location().resolve() == work / "curator.db"
    assert (work / "curator.db").is_file()


def test_a_database_that_is_not_sqlite_is_one_error_line(
    cli,  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    bad = tmp_path / "notes.db"
    bad.write_bytes(b"these are my notes, not a database\n" * 50)
    result = cli("stats", "--db", str(bad))
    assert result.exit_code == 2
    err = text(result.stderr)
    assert err.startswith("error:") and str(bad) in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in result.output


# --------------------------------------------------------------------------- mine commits


def test_mine_summary_matches_the_store(
    cli,  # type: ignore[no-untyped-def]
    tmp_path: Path,
    repo: GitRepo,
) -> None:
    fates = build_repo(repo)
    db = tmp_path / "cli.db"
    result = cli("mine", "commits", str(repo.path))
    assert result.exit_code == 0, result.output
    counts = summary_counts(result.stdout)

    all_commits = [sha for shas in fates.values() for sha in shas]
    filtered = {k: len(v) for k, v in fates.items() if k not in {"stored", "duplicate"}}
    assert counts == {
        "seen": len(all_commits),
        "filtered": sum(filtered.values()),
        "duplicates": len(fates["duplicate"]),
        "stored": len(fates["stored"]),
    }
    assert counts["seen"] == count_commits(repo.path, "main")
    # ... and the store agrees with the summary
    assert {r[0] for r in query(db, "SELECT key FROM items")} == set(fates["stored"])
    assert query(db, "SELECT COUNT(*) FROM commits") == [(counts["stored"],)]
    assert {r[0] for r in query(db, "SELECT key FROM duplicates")} == set(fates["duplicate"])
    reasons = text(result.stdout).split("filtered by reason:")[1].splitlines()[0]
    for reason, n in filtered.items():
        assert f"{reason} {n}" in reasons

    again = cli("mine", "commits", str(repo.path))  # resumes: nothing new
    assert again.exit_code == 0
    assert summary_counts(again.stdout) == dict.fromkeys(counts, 0)
    assert query(db, "SELECT COUNT(*) FROM items") == [(counts["stored"],)]


def test_a_failing_source_gives_exit_code_1_and_the_others_are_mined(
    cli,  # type: ignore[no-untyped-def]
    tmp_path: Path,
    repo: GitRepo,
) -> None:
    fates = build_repo(repo)
    plain_dir = tmp_path / "plain"
    plain_dir.mkdir()
    missing = tmp_path / "missing"
    result = cli("mine", "commits", str(missing), str(repo.path), str(plain_dir))
    assert result.exit_code == 1
    err = text(result.stderr)
    assert f"error: {missing}: no such file or directory" in err
    assert f"error: {plain_dir}: not a git repository" in err
    stdout = text(result.stdout)
    assert stdout.count("failed:") == 2  # one summary row each
    assert "failed repositories by reason: not-a-repository 1, not-found 1" in stdout
    assert summary_counts(result.stdout)["stored"] == len(fates["stored"])
    stored = {r[0] for r in query(tmp_path / "cli.db", "SELECT key FROM items")}
    assert stored == set(fates["stored"])


@pytest.mark.parametrize(
    ("args", "option", "mention"),
    [
        (("--lang", "cobol"), "--lang", "cobol"),
        (("--lang", "python,cobol"), "--lang", "cobol"),
        (("--since", "notadate"), "--since", "notadate"),
        (("--until", "2024-13-45"), "--until", "2024-13-45"),
        (("--max-files", "0"), "--max-files", "0 is not in the range x>=1"),
        (("--since", "2021-01-01", "--until", "2020-01-01"), "--until", "before --since"),
    ],
)
def test_bad_options_are_usage_errors(
    cli,  # type: ignore[no-untyped-def]
    tmp_path: Path,
    repo: GitRepo,
    args: tuple[str, ...],
    option: str,
    mention: str,
) -> None:
    repo.commit("init", {"m.py": py_module("y += 1")})
    result = cli("mine", "commits", str(repo.path), *args)
    assert result.exit_code == 2
    err = text(result.stderr)
    assert option in err and mention in err
    assert "Traceback" not in result.output
    assert not (tmp_path / "cli.db").exists()  # refused before touching the database


# --------------------------------------------------------------------------- stats


def test_stats_json_matches_the_store(
    cli,  # type: ignore[no-untyped-def]
    tmp_path: Path,
    repo: GitRepo,
) -> None:
    fates = build_repo(repo)
    other = GitRepo(tmp_path / "other")
    other.commit("init", {"k.cc": "int g(int x) {\n  return x;\n}\n"})
    other.commit("faster", {"k.cc": "int g(int x) {\n  return x << 1;\n}\n"})
    assert cli("mine", "commits", str(repo.path), str(other.path)).exit_code == 0
    result = cli("stats", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(text(result.stdout))
    db = tmp_path / "cli.db"

    items = query(db, "SELECT kind, language, source FROM items")
    assert data["items"] == len(items) == len(fates["stored"]) + 2
    assert data["by_kind"] == dict(Counter(kind for kind, _, _ in items))
    by_language: dict[str, Counter[str]] = {}
    for kind, language, _ in items:
        by_language.setdefault(kind, Counter())[language] += 1
    assert data["by_language"] == {k: dict(v) for k, v in by_language.items()}
    assert data["by_language"]["commit"] == {"python": len(fates["stored"]), "cpp": 2}
    assert data["by_source"] == dict(Counter(source for _, _, source in items))
    assert data["by_source"][str(repo.path.resolve())] == len(fates["stored"])
    predictions: dict[str, Counter[str]] = {}
    for labeler, label in query(db, "SELECT labeler, label FROM predictions"):
        predictions.setdefault(labeler, Counter())[label] += 1
    assert data["predictions"] == {k: dict(v) for k, v in predictions.items()}
    assert sum(sum(v.values()) for v in data["predictions"].values()) == data["items"]
    assert data["duplicates"] == {"commit": len(fates["duplicate"])}
    assert (data["votes"], data["sets"]) == (0, 0)

    tables = cli("stats")
    assert tables.exit_code == 0
    shown = text(tables.stdout)
    assert f"{data['items']} items" in shown
    for title in ("Items by kind", "Items by language", "Items by source"):
        assert title in shown


def test_stats_on_an_empty_store(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    missing = cli("stats")
    assert missing.exit_code == 2 and "no such database" in missing.output
    open_store(tmp_path / "cli.db").close()
    result = cli("stats", "--json")
    assert result.exit_code == 0
    data = json.loads(text(result.stdout))
    assert (data["items"], data["by_kind"], data["predictions"]) == (0, {}, {})
    assert cli("stats").exit_code == 0


# --------------------------------------------------------------------------- hostile text


MARKUP_DIR = "[/bold][bold red]repo"
HOSTILE_MESSAGE = (
    "Speed up [bold red]x[/] and [link=http://evil]this[/link]\n\n"
    "\x1b[31mred\x1b[0m \x1b]8;;http://x\x07a link\x1b]8;;\x07 \x1b]0;title\x07 done"
)
MISSING_SOURCE = "[link=http://evil]gone\x1b]8;;http://x\x07"


def run_curator(cwd: Path, db: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"FORCE_COLOR", "PY_COLORS", "CLICOLOR_FORCE", "TTY_COMPATIBLE"}
        and k != "GITHUB_ACTIONS"
    }
    env.update(COLUMNS="200", CURATOR_DB=str(db), CURATOR_CACHE=str(cwd / "cache"))
    return subprocess.run(
        [sys.executable, "-m", "curator", *args], capture_output=True, cwd=cwd, env=env
    )


def assert_clean(proc: subprocess.CompletedProcess[bytes]) -> tuple[str, str]:
    for stream in (proc.stdout, proc.stderr):
        assert b"\x1b" not in stream
        assert b"\x07" not in stream
        assert b"Traceback" not in stream
    return proc.stdout.decode(), proc.stderr.decode()


def test_markup_and_escapes_in_messages_and_paths_are_inert(tmp_path: Path) -> None:
    repo = GitRepo(tmp_path / MARKUP_DIR)
    repo.commit("init", {"m.py": py_module("y += 1", "y += 2")})
    sha = repo.commit(HOSTILE_MESSAGE, {"m.py": py_module("y += 1", "y *= 2")})
    binary = repo.commit("add data", {"evil\x1b[31m[bold].py": b"\x00\x01\x02" * 40})
    db = tmp_path / "hostile.db"

    mined = run_curator(tmp_path, db, "mine", "commits", MARKUP_DIR, MISSING_SOURCE)
    out, err = assert_clean(mined)
    assert mined.returncode == 1, err  # the missing source failed; the repo was mined
    assert summary_counts(out)["stored"] == 1
    # the names are shown literally, never interpreted as markup
    assert "[link=http://evil]gone" in out
    # and their control characters are shown escaped, never sent to the terminal
    assert "error: [link=http://evil]gone\\x1b]8;;http://x\\x07: no such file or directory" in err
    assert f"@{binary[:12]}: evil\\x1b[31m[bold].py is a binary file" in err
    # the message is stored exactly as written: sanitising is for display only
    assert query(db, "SELECT message FROM commits WHERE sha = ?", (sha,)) == [
        (HOSTILE_MESSAGE.strip(),)
    ]

    as_json = run_curator(tmp_path, db, "stats", "--json")
    out, _ = assert_clean(as_json)
    assert as_json.returncode == 0
    assert json.loads(out)["by_source"] == {str((tmp_path / MARKUP_DIR).resolve()): 1}

    tables = run_curator(tmp_path, db, "stats")
    out, _ = assert_clean(tables)
    assert tables.returncode == 0
    assert "keyword@5" in out


def test_a_long_repository_list_in_process_shows_totals_and_lists_the_failures(
    cli,  # type: ignore[no-untyped-def]
    tmp_path: Path,
    repo: GitRepo,
) -> None:
    fates = build_repo(repo)
    listing = tmp_path / "repos.csv"
    missing = [tmp_path / f"gone-{n}" for n in range(31)]
    listing.write_text("repo\n" + "\n".join(map(str, [repo.path, *missing])) + "\n")
    result = cli("mine", "commits", "--repos-file", str(listing))
    assert result.exit_code == 1
    stdout = text(result.stdout)
    assert "Mining summary: 32 repositories, failed ones listed" in stdout
    assert stdout.count("failed: not-found") == 30  # the table stops at 30 rows
    assert "failed repositories by reason: not-found 31" in stdout
    assert summary_counts(result.stdout)["stored"] == len(fates["stored"])
    assert f"error: {missing[0]}: no such file or directory" in text(result.stderr)


def test_a_command_that_only_reads_refuses_a_database_that_is_not_there(  # type: ignore[no-untyped-def]
    cli, tmp_path: Path
) -> None:
    typo = tmp_path / "no" / "such.db"
    for args in (
        ["search", "cache"],
        ["eval", "gt", "--labeler", "keyword@1"],
        ["models", "list"],
        ["agree", "gt"],
        ["export", "v1", "--out", str(tmp_path / "out")],
    ):
        result = cli(*args, "--db", str(typo))
        assert result.exit_code == 2, args
        assert f"{typo}: no such database" in text(result.output), args
    assert not typo.parent.exists()  # nothing was created on the way
