"""Hostile input at every import path and the main commands' arguments (hypothesis):
never a traceback, a non-zero exit with one line per problem naming FILE:LINE or the
argument, nothing dangerous echoed to the terminal, and row counts unchanged.

CI runs a short form; ``CURATOR_HOSTILE_EXAMPLES=500`` (``make bench``) runs it in full.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from curator.cli import app
from store import open_store
from tests import raw_sql

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = int(os.environ.get("CURATOR_HOSTILE_EXAMPLES", "6"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)
DANGEROUS = ("\x1b", "\u202e", "\u2066", "\x07", "\x9b")

# Text a hostile source would send: controls, escapes, bidi overrides, markup, anything.
hostile_char = st.one_of(
    st.characters(codec=None),
    st.sampled_from(["\x1b[31m", "\u202e", "\u2066", "\x00", "\x07", "[bold]", "\\", "\r", "\t"]),
)
hostile_text = st.lists(hostile_char, max_size=20).map("".join)
# the same, without surrogates: valid Unicode, however hostile
valid_text = hostile_text.map(lambda t: "".join(c for c in t if not 0xD800 <= ord(c) <= 0xDFFF))
surrogate = st.integers(0xD800, 0xDFFF).map(chr)
# bytes that are not UTF-8 as Python hands them over from argv (surrogate escapes)
bad_bytes = (
    st.binary(min_size=1, max_size=6)
    .filter(lambda b: not _is_utf8(b) and b"\x00" not in b)  # argv never holds NUL
    .map(lambda b: os.fsdecode(b))
)


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A store with a few imported items and votes, shared by every example."""
    root = tmp_path_factory.mktemp("hostile")
    db = root / "hostile.db"
    sample = ROOT / "sample_data" / "annotation"
    runner = CliRunner()
    base = ["--db", str(db)]
    made = runner.invoke(
        app, ["import", "items", str(sample / "items.jsonl"), "--set", "gt", *base]
    )
    assert made.exit_code == 0, made.output
    assert runner.invoke(app, ["import", "votes", str(sample / "votes.csv"), *base]).exit_code == 0
    return {"db": str(db), "root": str(root)}


def counts(db: str) -> tuple[int, ...]:
    with open_store(Path(db)) as store:
        return tuple(
            int(raw_sql.scalar(store, f"SELECT COUNT(*) FROM {table}"))  # type: ignore[arg-type]
            for table in ("items", "votes", "sets", "predictions", "releases")
        )


def run(env: dict[str, str], *args: str):  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(app, ["--db", env["db"], *args], env={"COLUMNS": "120"})
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{type(result.exception).__name__}: {result.exception}"
    )
    assert "Traceback" not in result.output
    return result


def assert_refused(result, code: int | None = None) -> list[str]:  # type: ignore[no-untyped-def]
    """A non-zero exit, every error one line, nothing that drives a terminal echoed."""
    assert result.exit_code != 0, result.output
    if code is not None:
        assert result.exit_code == code, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines and all(
        line.startswith(("error:", "skipped:", "warning:", "...")) for line in lines
    ), result.stderr
    for bad in DANGEROUS:
        assert bad not in result.output
    return lines


# One line that must be refused, whatever else the file holds.
def _bad_line(kind: str, text: str, sur: str) -> bytes:
    if kind == "surrogate":
        return json.dumps({"id": text + sur, "message": text}).encode()
    if kind == "nested":
        return b"[" * 100_000
    if kind == "bytes":
        return b'{"id": "x", "message": "\xff\xfe' + text.encode("utf-8", "replace") + b'"}'
    if kind == "not-object":
        return json.dumps([text]).encode()
    if kind == "nul":
        return json.dumps({"id": "x" + text, "message": text + "\x00"}).encode()
    return json.dumps({"id": text, "message": text}).encode()[:-1]  # cut short


@SETTINGS
@given(
    good=st.lists(hostile_text, max_size=3),
    bad=st.sampled_from(["surrogate", "nested", "bytes", "not-object", "nul", "cut"]),
    text=hostile_text,
    sur=surrogate,
    where=st.integers(0, 3),
)
def test_import_items_refuses_hostile_lines_whole(
    env, tmp_path_factory, good, bad, text, sur, where
) -> None:  # type: ignore[no-untyped-def]
    before = counts(env["db"])
    lines = [
        json.dumps({"id": f"hostile-{i}-{t}", "message": t}).encode() for i, t in enumerate(good)
    ]
    lines.insert(min(where, len(lines)), _bad_line(bad, text, sur))
    path = tmp_path_factory.mktemp("items") / "items.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    result = run(env, "import", "items", str(path), "--set", "hostile")
    errors = assert_refused(result, 1)
    bad_number = min(where, len(lines) - 1) + 1
    assert any(line.startswith(f"error: {path}:{bad_number}: ") for line in errors), errors
    assert counts(env["db"]) == before


@SETTINGS
@given(
    field=st.sampled_from(["item", "annotator", "label", "note", "category"]),
    text=valid_text,
    sur=surrogate,
    csv_too=st.booleans(),
)
def test_import_votes_refuses_surrogates_in_any_field(
    env, tmp_path_factory, field, text, sur, csv_too
) -> None:  # type: ignore[no-untyped-def]
    before = counts(env["db"])
    vote = {"item": "gt-001", "annotator": "eve", "label": "perf", "note": text}
    vote[field] = text + sur
    folder = tmp_path_factory.mktemp("votes")
    path = folder / "votes.jsonl"
    path.write_text(json.dumps(vote) + "\n")
    errors = assert_refused(run(env, "import", "votes", str(path)), 1)
    assert errors[0].startswith(f"error: {path}:1: field {field!r} holds a lone surrogate")
    if csv_too:  # CSV: invalid UTF-8 bytes in the same field
        row = {k: str(v).replace(sur, "") for k, v in vote.items()}
        header = ",".join(row)
        values = [json.dumps(v) for v in row.values()]
        raw = (header + "\n" + ",".join(values) + "\n").encode("utf-8", "replace")
        (folder / "votes.csv").write_bytes(raw.replace(b"eve", b"e\xffve"))
        if b"\xff" in (folder / "votes.csv").read_bytes():
            errors = assert_refused(run(env, "import", "votes", str(folder / "votes.csv")), 1)
            assert errors[0].startswith(f"error: {folder / 'votes.csv'}:")
    assert counts(env["db"]) == before


VOTE_ARGS = ("item", "label", "--annotator", "--note", "--set", "--category")


@SETTINGS
@given(
    position=st.sampled_from(VOTE_ARGS),
    bad=bad_bytes,
    text=hostile_text.map(lambda t: t.replace("\x00", "")),  # argv never holds NUL
)
def test_non_utf8_arguments_are_named(env, position, bad, text) -> None:  # type: ignore[no-untyped-def]
    before = counts(env["db"])
    values = {"item": "gt-001", "label": "perf", "--annotator": "eve", "--note": text}
    values[position] = text + bad
    args = ["vote", values["item"], values["label"]]
    for option in ("--annotator", "--note", "--set", "--category"):
        if option in values:
            args += [option, values[option]]
    (line,) = assert_refused(run(env, *args), 2)
    assert "is not UTF-8 text" in line and line.startswith("error: argument ")
    assert counts(env["db"]) == before


@SETTINGS
@given(
    command=st.sampled_from(
        [
            ("vote", "{t}", "perf", "--annotator", "eve"),
            ("vote", "gt-001", "{t}", "--annotator", "eve"),
            ("vote", "gt-001", "perf", "--annotator", "eve", "--set", "{t}"),
            ("vote", "gt-001", "perf", "--annotator", "eve", "--category", "{t}"),
            ("agree", "{t}"),
            ("adjudicate", "{t}"),
            ("set", "show", "{t}"),
            ("validate", "{t}"),
            ("import", "release", "{t}"),
            ("import", "items", "{t}"),
            ("eval", "{t}", "--labeler", "keyword@1"),
        ]
    ),
    text=hostile_text.filter(lambda t: t.strip() and t.strip() not in ("perf", "gt")),
)
@example(command=("validate", "{t}"), text="\x00")  # a NUL no shell could pass
def test_hostile_text_in_arguments_gets_one_clean_line(env, command, text) -> None:  # type: ignore[no-untyped-def]
    before = counts(env["db"])
    args = [part.replace("{t}", "\u202e" + text) for part in command]
    result = run(env, *args)
    if result.exit_code != 0:
        assert_refused(result)
    else:  # a hostile but valid value (e.g. a note) may be accepted; never echoed raw
        for bad in DANGEROUS:
            assert bad not in result.output
    if command[0] != "vote" or result.exit_code != 0:
        assert counts(env["db"]) == before


def test_a_real_process_with_a_non_utf8_argument(env) -> None:  # type: ignore[no-untyped-def]
    """The bytes come from the operating system, as in `curator vote $'\\xff' perf`."""
    done = subprocess.run(
        [sys.executable, "-m", "curator", "--db", env["db"], "vote", b"\xff", "perf"],
        capture_output=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "CURATOR_ANNOTATOR": "eve"},
    )
    assert done.returncode == 2
    assert done.stderr.decode() == (
        "error: argument 4 (b'\\xff') is not UTF-8 text: give names, notes, labels and paths"
        " in UTF-8\n"
    )


def test_an_unexpected_error_is_one_line_unless_debugging(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The guard the root group uses, on a command that fails in a way nothing caught."""
    import typer

    from curator.cli_guard import GuardedGroup, set_debug

    failing = typer.Typer(cls=GuardedGroup)

    @failing.callback()
    def root(debug: bool = False) -> None:
        set_debug(debug)

    @failing.command()
    def boom() -> None:
        raise RuntimeError("gone\nsecond line")

    @failing.command()
    def full() -> None:
        raise OSError(28, "No space left on device", "/data/curator.db-wal")

    result = CliRunner().invoke(failing, ["boom"])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert result.stderr == (
        "error: unexpected RuntimeError: gone (run with --debug or CURATOR_DEBUG=1 to see the"
        " traceback)\n"
    )

    @failing.command()
    def raced() -> None:  # another process created the set between the check and the insert
        from store.sets import SetExistsError

        raise SetExistsError("a set named 'gt' already exists")

    disk = CliRunner().invoke(failing, ["full"])
    assert disk.stderr.startswith("error: no space left writing /data/curator.db-wal")
    lost = CliRunner().invoke(failing, ["raced"])
    assert lost.exit_code == 1 and lost.stderr == "error: a set named 'gt' already exists\n"
    debug = CliRunner().invoke(failing, ["--debug", "boom"])
    assert isinstance(debug.exception, RuntimeError)
    monkeypatch.setenv("CURATOR_DEBUG", "1")
    set_debug(False)
    assert isinstance(CliRunner().invoke(failing, ["boom"]).exception, RuntimeError)


def test_bidi_controls_never_reach_the_terminal(tmp_path: Path) -> None:
    """A commit title with U+202E (it would print `fast` backwards) in `curator adjudicate`
    and a votes CSV with a column nobody reads."""
    items = tmp_path / "items.jsonl"
    items.write_text(
        json.dumps({"id": "rtl-1", "message": "Make it \u202etsaf\u202c now \u2066x\u2069"}) + "\n"
    )
    votes = tmp_path / "votes.csv"
    votes.write_text("item,annotator,label,mood\nrtl-1,ann,perf,happy\nrtl-1,bob,non-perf,sad\n")
    db = ["--db", str(tmp_path / "bidi.db")]
    runner = CliRunner()
    assert runner.invoke(app, ["import", "items", str(items), "--set", "s", *db]).exit_code == 0
    imported = runner.invoke(app, ["import", "votes", str(votes), *db])
    assert imported.exit_code == 0
    assert f"warning: {votes}:1: column(s) mood ignored" in imported.stderr
    shown = runner.invoke(app, ["adjudicate", "s", *db], env={"COLUMNS": "200"})
    # shown escaped, as repr writes them: the title reads as stored, not backwards
    assert shown.exit_code == 0
    assert "Make it \\u202etsaf\\u202c now \\u2066x\\u2069" in shown.stdout
    assert not any(c in shown.stdout for c in "\u202e\u202c\u2066\u2069")


def test_a_database_held_by_another_process_is_one_line_saying_so(
    tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    import sqlite3

    import store.connection
    from curator.cli import app

    db = tmp_path / "held.db"
    items = tmp_path / "one.jsonl"
    items.write_text('{"id": "c1", "message": "Speed up the parser"}\n')
    runner = CliRunner()
    made = runner.invoke(app, ["--db", str(db), "import", "items", str(items), "--set", "s"])
    assert made.exit_code == 0, made.output
    monkeypatch.setattr(store.connection, "BUSY_TIMEOUT_MS", 200)
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process writing
    try:
        voted = runner.invoke(app, ["--db", str(db), "vote", "c1", "perf", "-a", "ann"])
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert voted.exit_code == 1
    line = voted.output.strip()
    assert line.startswith(f"error: {db}: locked by another process"), line
    assert "\n" not in line
