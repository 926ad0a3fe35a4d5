"""Options that would be dropped without a word are refused in one line, and outputs go
where they say: ``train`` refuses an option its ``--kind`` does not read, ``set create``
a ``--labeler`` without ``--prefer``; ``eval --out -``/``--markdown -`` print (never a
file named ``-``) and two outputs into one file are refused; ``export label-studio``
into standard output or a FIFO writes its tasks only, never a config in ``/dev``."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.conftest import ROOT

SAMPLE = ROOT / "sample_data" / "annotation"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
CURATOR = Path(sys.executable).with_name("curator")


@pytest.fixture
def gt(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Set ``gt`` with the sample's votes; the working folder is tmp_path/work."""
    assert cli("import", "items", str(SAMPLE / "items.jsonl"), "--set", "gt").exit_code == 0
    assert cli("import", "votes", str(SAMPLE / "votes.csv")).exit_code == 0
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return cli


def _error(result, code: int = 2) -> str:  # type: ignore[no-untyped-def]
    """The one error line of a refused command."""
    message = ANSI.sub("", result.stderr).strip()
    assert result.exit_code == code, result.output
    assert len(message.splitlines()) == 1 and "Traceback" not in result.output, message
    return message


def _count(db: Path, table: str) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


@pytest.mark.parametrize(
    ("kind", "flags", "line"),
    [
        ("tfidf-lr", ("--epochs", "3"), "--epochs is for --kind student, not tfidf-lr"),
        ("tfidf-lr", ("--lr", "1e-4"), "--lr is for --kind student, not tfidf-lr"),
        ("tfidf-svm", ("--soft",), "--soft is for --kind student, not tfidf-svm"),
        ("tfidf-lr", ("--base", "minilm"), "--base is for --kind student, not tfidf-lr"),
        ("tfidf-lr", ("--layers", "2"), "--layers is for --kind student, not tfidf-lr"),
        ("tfidf-lr", ("--combiner", "auto"), "--combiner is for --kind ensemble, not tfidf-lr"),
        ("student", ("--members", "keyword@1"), "--members is for --kind ensemble, not student"),
        (
            "ensemble",
            ("--diff-dropout", "0.3"),  # its default, given: still refused
            "--diff-dropout is for --kind student, tfidf-lr or tfidf-svm, not ensemble",
        ),
        (
            "ensemble",
            ("--votes", "gt"),
            "--votes is for --kind student, tfidf-lr or tfidf-svm, not ensemble",
        ),
        ("tfidf-lr", ("--tau", "90"), "--tau is for --from (teacher labels): give it, or"),
        ("student", ("--replay", "1"), "--replay is for --from-model (a warm start): give"),
        ("tfidf-lr", ("--weak-limit", "9"), "--weak-limit is for --weak: give it, or leave"),
    ],
)
def test_train_refuses_an_option_its_kind_does_not_read(  # type: ignore[no-untyped-def]
    gt, tmp_path: Path, kind: str, flags: tuple[str, ...], line: str
) -> None:
    votes = () if "--votes" in flags or kind == "ensemble" else ("--votes", "gt")
    result = gt("train", "--kind", kind, *votes, *flags)
    assert _error(result).startswith(f"error: {line}")
    assert _count(tmp_path / "cli.db", "models") == 0
    assert not (tmp_path / "models").exists() or not any((tmp_path / "models").iterdir())


def test_train_defaults_left_alone_are_not_given(gt, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    trained = gt("train", "--kind", "tfidf-lr", "--votes", "gt", "--seed", "1", "--json")
    assert trained.exit_code == 0, trained.output
    assert json.loads(trained.stdout)["model"] == "tfidf-lr@1"
    ensemble = gt("train", "--kind", "ensemble", "--seed", "1")  # reads --seed too
    assert ensemble.exit_code == 1 and "is for --kind" not in ensemble.output


def test_set_create_refuses_labeler_without_prefer(gt, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = gt("set", "create", "drawn", "--sample", "5", "--labeler", "keyword@1")
    assert _error(result) == (
        "error: --labeler is for --prefer uncertain (the labeler it reads), not a draw"
        " without --prefer (--balanced LABELER and --stratify pred:LABELER name their own)"
    )
    assert _count(tmp_path / "cli.db", "sets") == 1  # gt only


def test_eval_dash_prints_json_or_markdown_and_writes_no_file(gt) -> None:  # type: ignore[no-untyped-def]
    printed = gt("eval", "gt", "--labeler", "keyword@latest", "--out", "-")
    assert printed.exit_code == 0, printed.output
    assert json.loads(printed.stdout)["set"] == "gt"  # the JSON alone, no table after it
    markdown = gt("eval", "gt", "--labeler", "keyword@latest", "--markdown", "-")
    assert markdown.exit_code == 0, markdown.output
    assert markdown.stdout.startswith("Evaluation on `gt`") and "┃" not in markdown.stdout
    assert not Path("-").exists() and list(Path.cwd().iterdir()) == []


@pytest.mark.parametrize(
    ("flags", "line"),
    [
        (
            ("--out", "same.json", "--markdown", "./sub/../same.json"),
            "error: --out and --markdown both write to same.json: give each its own",
        ),
        (
            ("--out", "-", "--markdown", "-"),
            "error: --out and --markdown both write to standard output: give each its own",
        ),
        (
            ("--out", "-", "--markdown", "/dev/stdout"),
            "error: --out and --markdown both write to standard output: give each its own",
        ),
        (
            ("--markdown", "-", "--json"),
            "error: --markdown - and --json both print to standard output: give one",
        ),
        (
            ("--out", "/dev/stdout", "--json"),  # was: the JSON printed twice
            "error: --out /dev/stdout and --json both print to standard output: give one",
        ),
    ],
)
def test_eval_refuses_two_outputs_into_one(gt, flags: tuple[str, ...], line: str) -> None:  # type: ignore[no-untyped-def]
    Path("sub").mkdir()
    result = gt("eval", "gt", "--labeler", "keyword@latest", *flags)
    assert _error(result) == line
    assert result.stdout == ""
    assert [p.name for p in Path.cwd().iterdir()] == ["sub"]


def test_eval_refuses_a_link_and_its_file(gt) -> None:  # type: ignore[no-untyped-def]
    Path("real.json").write_text("old\n", encoding="utf-8")
    Path("link.md").symlink_to("real.json")
    result = gt(
        "eval", "gt", "--labeler", "keyword@latest", "--out", "real.json", "--markdown", "link.md"
    )
    assert (
        _error(result) == "error: --out and --markdown both write to real.json: give each its own"
    )
    assert Path("real.json").read_text(encoding="utf-8") == "old\n"


NO_CONFIG = (
    "warning: no labeling config written: {out} is not a file to write it beside;"
    " `curator export label-studio gt --out FILE.json` writes it as FILE.label-config.xml"
)


def test_export_label_studio_to_stdout_writes_no_config_in_dev(gt, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    beside = Path("/dev/stdout.label-config.xml")
    assert not beside.exists()
    done = subprocess.run(
        [str(CURATOR), "export", "label-studio", "gt", "--out", "/dev/stdout"],
        capture_output=True,
        text=True,
        env={**os.environ, "CURATOR_DB": str(tmp_path / "cli.db")},
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)) == 40  # the tasks alone: the summary is on stderr
    lines = ANSI.sub("", done.stderr).strip().splitlines()
    assert lines == [
        "40 items, 107 votes of set gt -> /dev/stdout",
        NO_CONFIG.format(out="/dev/stdout"),
    ]
    assert not beside.exists()


def test_export_label_studio_into_a_fifo_and_into_a_file(gt) -> None:  # type: ignore[no-untyped-def]
    fifo = Path("tasks.json")
    os.mkfifo(fifo)
    read: list[bytes] = []
    reader = threading.Thread(target=lambda: read.append(fifo.read_bytes()))
    reader.start()
    done = gt("export", "label-studio", "gt", "--out", str(fifo))
    reader.join(timeout=30)
    assert done.exit_code == 0, done.output
    assert len(json.loads(read[0])) == 40
    assert ANSI.sub("", done.stderr).strip().splitlines()[-1] == NO_CONFIG.format(out=fifo)
    assert sorted(p.name for p in Path.cwd().iterdir()) == ["tasks.json"]
    written = gt("export", "label-studio", "gt", "--out", "file.json")  # a file: both
    assert written.exit_code == 0 and "warning" not in written.output
    assert Path("file.label-config.xml").read_text(encoding="utf-8").startswith("<View")
