"""A hostile sweep of every ``curator`` command: empty, blank, 10k-character, control
and Rich-markup strings, names nothing has, 0 / -1 / nan / inf / 1e309 / 2**63 as
numbers, and a folder, a missing file, /dev/null, a FIFO, an empty and a binary file as
paths. Each refused input ends in one ``error:`` line naming the option, file or value
(never a traceback nor the catch-all ``unexpected`` line), a non-zero exit, and the
store unchanged; a few inputs that are legitimately fine must work.

One small store is built once per module (items with three annotators' votes in two
sets, keyword@latest predictions, a tfidf-lr model, an audit set); each test works on
its own copy of the database file, in its own working folder.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from curator.cli import app
from store import open_store
from tests import raw_sql

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "annotation"
TABLES = ("items", "votes", "sets", "set_items", "predictions", "models", "releases")
LONG = "x" * 10_000
MARKUP = "[red]x[/"
CONTROL = "a\x01\x1b[31mb"
I63 = str(2**63)
TEACH = ("--model", "m", "--endpoint", "http://127.0.0.1:9", "--retries", "0")  # refused at once


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The populated store, the shared cache and config folders, and hostile files."""
    top = tmp_path_factory.mktemp("fuzz")
    env = {
        "COLUMNS": "200",
        "CURATOR_CACHE": str(top / "cache"),
        "XDG_CONFIG_HOME": str(top / "xdg"),
    }
    db = top / "base.db"
    for args in (
        ("import", "items", str(SAMPLE / "items.jsonl"), "--set", "gt"),
        ("import", "votes", str(SAMPLE / "votes.csv")),
        ("set", "split", "--from-set", "gt", "--into", "tr:60,ev:40"),
        ("predict", "gt", "--labeler", "keyword@latest"),
        ("train", "--kind", "tfidf-lr", "--votes", "tr"),
        ("audit", "draw", "aud", "--from-labeler", "keyword@latest", "--size", "5"),
    ):
        made = CliRunner().invoke(app, ["--db", str(db), *args], env=env)
        assert made.exit_code == 0, (args, made.output)
    files = top / "files"
    files.mkdir()
    (files / "dir").mkdir()
    (files / "empty").write_bytes(b"")
    (files / "bin").write_bytes(bytes(range(256)) * 8)
    os.mkfifo(files / "fifo")
    return {
        **env,
        "db": str(db),
        "dir": str(files / "dir"),
        "empty": str(files / "empty"),
        "bin": str(files / "bin"),
        "fifo": str(files / "fifo"),
        "missing": str(files / "missing.jsonl"),
        "devnull": os.devnull,
    }


@pytest.fixture
def db(world: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This test's copy of the store; the working folder is the test's own."""
    copy = tmp_path / "fuzz.db"
    shutil.copy(world["db"], copy)
    monkeypatch.chdir(tmp_path)
    return copy


@pytest.fixture
def fed_fifo(world: dict[str, str]) -> Iterator[None]:
    """Whoever opens the FIFO to read gets a few bytes of junk, then end of file."""
    stop = threading.Event()

    def feed() -> None:
        while not stop.is_set():
            try:
                fd = os.open(world["fifo"], os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # no reader yet
                time.sleep(0.01)
                continue
            with contextlib.suppress(OSError):
                os.write(fd, b"\xff\xfe\x00junk\r\nmore,1,2\n")
            os.close(fd)
            return

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    yield
    stop.set()
    feeder.join(timeout=2)


def snapshot(db: Path) -> tuple[int, ...]:
    with open_store(db) as store:
        return tuple(
            int(raw_sql.scalar(store, f"SELECT COUNT(*) FROM {table}"))  # type: ignore[arg-type]
            for table in TABLES
        )


def run(world: dict[str, str], db: Path, args: tuple[str, ...]):  # type: ignore[no-untyped-def]
    filled = [a.format(**world) if a.startswith("{") else a for a in args]
    env = {k: world[k] for k in ("COLUMNS", "CURATOR_CACHE", "XDG_CONFIG_HOME")}
    result = CliRunner().invoke(app, ["--db", str(db), *filled], env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        f"{type(result.exception).__name__}: {result.exception}"
    )
    assert "Traceback" not in result.output, result.output
    assert "error: unexpected" not in result.output, result.output
    return result


# (command and arguments, exit code, a fragment the error line must hold)
REFUSED: list[tuple[tuple[str, ...], int, str]] = [
    # found by this sweep, fixed
    (("mine", "commits", "--repos-file", "{bin}"), 1, "not a CSV list of repositories"),
    (("mine", "commits", "/nowhere", "--max-diff-mb", "nan"), 2, "--max-diff-mb"),
    (("mine", "commits", "/nowhere", "--max-diff-mb", "inf"), 2, "--max-diff-mb"),
    (("mine", "commits", "/nowhere", "--max-diff-mb", "1e309"), 2, "--max-diff-mb"),
    (("mine", "commits", ""), 2, "'' is empty"),
    (("mine", "kernels", " "), 2, "' ' is empty"),
    (("mine", "ir", ""), 2, "'' is empty"),
    (("mine", "ir", "{dir}", "--build", ""), 2, "--build"),
    (("mine", "ir", "--build", "{missing}"), 2, "missing.jsonl: no such folder"),
    (("mine", "ir", "--build", "{bin}"), 2, "bin: not a folder"),
    (("teach", "gt", *TEACH, "--concurrency", I63), 2, "--concurrency"),
    (("teach", "gt", *TEACH, "--timeout", "nan"), 2, "--timeout"),
    (("teach", "gt", *TEACH, "--backoff", "nan"), 2, "--backoff"),
    (("teach", "gt", *TEACH, "--backoff", "inf"), 2, "--backoff"),
    (("teach", "gt", *TEACH, "--endpoint", "http://\x01x"), 2, "'http://\\x01x'"),
    (("teach", "gt", *TEACH, "--endpoint", "http://a:99999"), 2, "out of range"),
    (("audit", "draw", "a", "--from-labeler", "keyword", "--confidence", "nan"), 2, "--confid"),
    (("audit", "draw", "a", "--from-labeler", "keyword", "--margin", "nan"), 2, "--margin"),
    (("export", "label-studio", "gt", "--out", ""), 2, "--out"),
    (("export", "prodigy", "gt", "--out", ""), 2, "--out"),
    (("export", "release", "1.0.0", "--out", ""), 2, "--out"),
    (("keys", "generate", ""), 2, "'' is empty"),
    (("export", "prodigy", "gt", "--out", "/dev/full", "--force"), 1, "cannot write /dev/full"),
    (("audit", "draw", "a", "--from-labeler", " "), 2, "--from-labeler"),
    (("check", "kernels", ""), 2, "no such set: ''"),
    (("eval", "ev", "--labeler", "keyword", "--out", ""), 2, "--out"),
    (("eval", "ev", "--labeler", "keyword", "--markdown", " "), 2, "--markdown"),
    (("import", "items", ""), 2, "'' is empty"),
    (("import", "votes", " "), 2, "' ' is empty"),
    (("import", "prodigy", "", "--set", "p1"), 2, "'' is empty"),
    (("import", "label-studio", "", "--set", "l1"), 2, "'' is empty"),
    (("import", "release", ""), 2, "'' is empty"),
    (("validate", ""), 2, "'' is empty"),
    (("validate", "{dir}", "--key", ""), 2, "--key"),
    (("export", "release", "2.0", "--out", "{dir}", "--sign", ""), 2, "--sign"),
    (("mine", "commits", "--repos-file", ""), 2, "--repos-file"),
    (("mine", "commits", "/nowhere", "--clone-dir", ""), 2, "--clone-dir"),
    # already refused well: kept so they stay so
    (("vote", "ex-001", "perf", "-a", "a\x00b"), 2, "NUL character"),
    (("search", "cache", "--limit", "nan"), 2, "--limit"),
    (("search", "cache", "--limit", "1e309"), 2, "--limit"),
    (("next", "gt", "-a", "zed", "--lease", I63), 2, "--lease"),
    (("set", "create", "n1", "--from-set", "gt", "--sample", I63), 1, I63),
    (("predict", "gt", "--labeler", "keyword@latest", "--batch", "-1"), 2, "--batch"),
    (("chart", "labels", "--set", "gt", "--height", "inf"), 2, "--height"),
    (("train", "--kind", "tfidf-lr", "--votes", "tr", "--epochs", "0"), 2, "--epochs"),
    (("audit", "draw", "a", "--from-labeler", "keyword", "--size", "-1"), 2, "--size"),
    (("teach", "gt", *TEACH, "--retries", I63), 2, "--retries"),
    (("stats", "--kind", MARKUP), 2, "--kind"),
    (("search", "cache", "--limit", "0"), 2, "--limit"),
    (("search", "cache", "--set", "nosuch"), 1, "nosuch"),
    (("search", "cache", "--label", "perf", "--labeler", CONTROL), 1, "\\x01"),
    (("chart", "nosuch"), 2, "nosuch"),
    (("chart", "labels", "--set", "gt", "--width", I63), 2, "--width"),
    (("chart", "labels", "--set", "gt", "--svg", ""), 2, "--svg"),
    (("chart", "labels", "--set", "gt", "--svg", "{dir}"), 1, "dir"),
    (("set", "create", "", "--from-set", "gt", "--sample", "3"), 2, "''"),
    (("set", "create", "n1", "--from-set", "gt", "--sample", "-1"), 2, "--sample"),
    (("set", "create", "n1", "--from-set", "nosuch", "--sample", "3"), 1, "nosuch"),
    (("set", "split", "--from-set", "gt", "--into", "a:nan,b:50"), 2, "'a:nan'"),
    (("set", "show", LONG), 1, "no set"),
    (("set", "edit", "gt", "--votes-per-item", I63), 2, "--votes-per-item"),
    (("set", "gold", "gt", "--from", "ev", "--rate", "nan"), 1, "--rate nan"),
    (("set", "gold", "gt", "--from", "ev", "--rate", "inf"), 1, "--rate inf"),
    (("import", "items", "{dir}", "--set", "i1"), 1, "dir"),
    (("import", "items", "{missing}", "--set", "i1"), 1, "missing.jsonl"),
    (("import", "items", "{bin}", "--set", "i1"), 1, "bin"),
    (("import", "items", "{devnull}", "--set", "i1"), 1, "/dev/null"),
    (("import", "votes", "{bin}"), 1, "bin"),
    (("import", "votes", "{dir}"), 1, "dir"),
    (("import", "prodigy", "{bin}", "--set", "p1"), 1, "bin"),
    (("import", "label-studio", "{bin}", "--set", "l1"), 1, "bin"),
    (("import", "label-studio", "{missing}", "--set", "l1"), 1, "missing.jsonl"),
    (("import", "release", "{empty}"), 1, "empty"),
    (("import", "release", "{dir}"), 1, "dir"),
    (("vote", "nosuch", "perf", "-a", "zed"), 1, "nosuch"),
    (("vote", "ex-001", MARKUP, "-a", "zed"), 1, MARKUP),
    (("vote", "ex-001", "perf", "-a", ""), 2, "annotator"),
    (("undo", "-a", "nobody"), 1, "nobody"),
    (("next", "nosuch", "-a", "zed"), 1, "nosuch"),
    (("next", "gt", "-a", "zed", "--lease", "-1"), 2, "--lease"),
    (("agree", MARKUP), 1, MARKUP),
    (("adjudicate", "gt", "--rule", "nosuch"), 2, "--rule"),
    (("audit", "report", "nosuch"), 1, "nosuch"),
    (("audit", "draw", "a2", "--from-labeler", "nosuch@3"), 1, "nosuch@3"),
    (("eval", "ev", "--labeler", "nosuch@3"), 1, "nosuch@3"),
    (("eval", "ev", "--labeler", "keyword@latest", "--out", "{dir}"), 1, "dir"),
    (("export", "release", "1.0.0", "--out", "{bin}"), 2, "a file, not a folder"),
    (("export", "prodigy", "nosuch", "--out", "p.jsonl"), 1, "nosuch"),
    (("validate", "{empty}"), 1, "empty"),
    (("validate", "{bin}"), 1, "bin"),
    (("validate", "{missing}"), 1, "missing.jsonl"),
    (("label", "nosuch", "-a", "zed"), 1, "needs a terminal"),
    (("train", "--kind", "tfidf-lr", "--votes", "nosuch"), 1, "nosuch"),
    (("train", "--kind", "tfidf-lr", "--votes", "tr", "--tau", "nan"), 2, "--tau"),
    (("train", "--kind", "tfidf-lr", "--votes", "tr", "--lr", "inf"), 2, "--lr"),
    (("models", "show", "nosuch@3"), 1, "nosuch@3"),
    (("models", "show", "tfidf-lr@" + I63), 1, I63),
    (("models", "promote", "nosuch@3", "-a", "zed"), 1, "nosuch@3"),
    (("models", "list", "--family", MARKUP), 2, "--family"),
    (("predict", "gt", "--labeler", "nosuch@3"), 1, "nosuch@3"),
    (("predict", "gt", "--labeler", "keyword@latest", "--batch", "0"), 2, "--batch"),
    (("simulate", "active-learning", "{missing}", "--eval", "{missing}"), 1, "missing.jsonl"),
    (("simulate", "active-learning", "{bin}", "--eval", "{bin}"), 1, "bin"),
    (("keys", "generate", "{bin}"), 1, "bin"),
]


@pytest.mark.parametrize(
    ("args", "code", "named"),
    REFUSED,
    ids=[" ".join(x for x in a if x not in TEACH)[:60] for a, _, _ in REFUSED],
)
def test_hostile_input_is_one_line_naming_it(
    world: dict[str, str], db: Path, args: tuple[str, ...], code: int, named: str
) -> None:
    before = snapshot(db)
    result = run(world, db, args)
    assert result.exit_code == code, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert errors and any(named in line for line in errors), result.stderr
    assert snapshot(db) == before


@pytest.mark.parametrize(
    "args",
    [
        ("import", "items", "{fifo}", "--set", "f1"),
        ("import", "votes", "{fifo}"),
    ],
    ids=["items", "votes"],
)
def test_a_fifo_of_junk_is_read_and_refused(
    world: dict[str, str], db: Path, fed_fifo: None, args: tuple[str, ...]
) -> None:
    before = snapshot(db)
    result = run(world, db, args)
    assert result.exit_code != 0, result.output
    assert "fifo" in result.stderr, result.stderr
    assert snapshot(db) == before


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (("vote", "ex-001", "perf", "-a", "zed", "--note", MARKUP), "zed -> perf"),
        (("vote", "ex-001", "perf", "-a", MARKUP), MARKUP),
        (("set", "create", MARKUP, "--from-set", "gt", "--sample", "3"), MARKUP),
        (("search", LONG), "no item matches"),
        (("next", "gt", "-a", MARKUP), MARKUP),
        (("import", "items", "{empty}", "--set", "i1"), "empty: no items in the file"),
        (("mine", "commits", "--repos-file", "{empty}"), "nothing to mine"),
    ],
    ids=[
        "note-markup",
        "annotator-markup",
        "set-markup",
        "long-query",
        "next-markup",
        "empty-items",
        "empty-repos",
    ],
)
def test_odd_but_valid_input_is_taken_literally(
    world: dict[str, str], db: Path, args: tuple[str, ...], shown: str
) -> None:
    result = run(world, db, args)
    assert result.exit_code == 0, result.output
    assert shown in result.output


def test_nothing_lands_in_the_working_folder(world: dict[str, str], db: Path) -> None:
    # '' as --out or as a key folder used to mean '.', and wrote the release there
    for args in (("export", "release", "9.9", "--out", ""), ("keys", "generate", "")):
        assert run(world, db, args).exit_code == 2
    assert [p.name for p in Path.cwd().iterdir() if not p.name.startswith("fuzz.db")] == []


def test_a_repository_list_with_a_nul_is_refused_naming_it(
    world: dict[str, str], db: Path, tmp_path: Path
) -> None:
    listed = tmp_path / "repos.csv"
    listed.write_bytes(b"repo,stars\na\x00b,5\n")
    result = run(world, db, ("mine", "commits", "--repos-file", str(listed)))
    assert result.exit_code == 1
    assert f"error: {listed}: not a CSV list of repositories" in result.stderr


def test_a_fifo_repository_list_names_its_bad_lines(
    world: dict[str, str], db: Path, fed_fifo: None
) -> None:
    before = snapshot(db)
    result = run(world, db, ("mine", "commits", "--repos-file", "{fifo}"))
    assert f"warning: {world['fifo']}:1: not UTF-8 text; line skipped" in result.stderr
    assert snapshot(db) == before
