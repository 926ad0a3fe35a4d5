"""Names in error lines and lists read differently when they differ by a control character;
set names are checked by the one shared rule; NaN options name what they count.

Before: ``one_line``, ``flat`` and ``plain`` removed control characters, so a file
``it<ESC>ems.jsonl`` was reported as ``items.jsonl`` and a commit titled ``fix<ESC>[2J bug``
listed as ``fix[2J bug``; ``check_set_name`` repeated the invisible-character test of
``store.names`` and called a zero-width space a "control character".
"""

from __future__ import annotations

import ast
import io
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console
from typer.testing import CliRunner

from curator.cli import app
from curator.presentation.text import flat, labelled, one_line, path_line, plain, visible
from store.sets import SetNameError, check_set_name

ESC = "\x1b"
# every kind of character that used to be removed: C0, DEL, C1, bidi, separators, surrogate
HIDDEN = [
    "\x00",
    "\x07",
    "\x08",
    ESC,
    "\r",
    "\x0b",
    "\x7f",
    "\x85",
    "\x9b",
    "\u061c",
    "\u200e",
    "\u202e",
    "\u2066",
    "\u2028",
    "\u2029",
    "\udcff",
]


def raw_hidden(text: str) -> list[str]:
    """The raw control, bidi, separator and surrogate characters in ``text``."""
    return [c for c in text if c in HIDDEN or ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F]


def cli(tmp_path: Path, *args: str):  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(
        app, ["--db", str(tmp_path / "c.db"), *args], env={"COLUMNS": "200"}
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    return result


# --------------------------------------------------------------------------- one_line & co


@pytest.mark.parametrize("char", HIDDEN)
def test_a_name_with_a_control_character_reads_differently_from_one_without(
    char: str,
) -> None:
    shown = one_line(f"a{char}b").plain
    assert shown != one_line("ab").plain
    assert shown == "a" + repr(char)[1:-1] + "b"  # as {name!r} writes it in our messages
    assert raw_hidden(shown) == []
    assert path_line(f"a{char}b").plain == shown


@given(st.text(alphabet=st.characters(exclude_characters='\\"'), max_size=30))
def test_every_control_is_shown_in_a_form_that_reads_back(text: str) -> None:
    shown = visible(text)
    assert raw_hidden(shown) == []
    assert ast.literal_eval(f'"{shown}"') == text  # nothing lost: two names stay two


@given(st.lists(st.sampled_from(["a", "b", *HIDDEN]), max_size=8).map("".join))
def test_distinct_names_stay_distinct_on_one_line(name: str) -> None:
    other = name + "\x1b"
    assert one_line(name, 500).plain != one_line(other, 500).plain


def test_layout_whitespace_is_folded_on_one_line_and_kept_in_plain() -> None:
    assert flat("first\r\n\n\tsecond   third") == "first second third"  # CR LF: a line end
    assert flat("over\rwritten") == "over\\rwritten"  # a lone CR would overwrite the line
    assert plain("l1\r\nl2\t\x07").plain == "l1\nl2\t\\x07"


def test_a_path_keeps_its_tabs_and_newlines_visible() -> None:
    assert path_line("dir/a\tb\nc.ll").plain == "dir/a\\tb\\nc.ll"
    assert path_line("dir/a\tb").plain != path_line("dir/a b").plain
    assert path_line("/" + "d/" * 50 + "x\x1b.ll", 20).plain.endswith("d/x\\x1b.ll")


def test_markup_stays_literal_and_no_escape_reaches_the_terminal() -> None:
    shown = one_line("[bold red]x[/] \x1b[2J\x1b]8;;http://evil\x07link")
    assert shown.spans == []
    console = Console(file=io.StringIO(), width=200, force_terminal=True, color_system=None)
    console.print(shown, end="")
    printed = console.file.getvalue()  # type: ignore[attr-defined]
    assert printed == "[bold red]x[/] \\x1b[2J\\x1b]8;;http://evil\\x07link"
    assert ESC not in printed and "\x07" not in printed


def test_a_name_put_straight_into_a_labelled_line_is_shown_escaped() -> None:
    line = labelled("warning", "yellow", "repos\x1b]0;t\x07.csv: 3 listed ", one_line("x\x1b"))
    assert line.plain == "warning: repos\\x1b]0;t\\x07.csv: 3 listed x\\x1b"


# --------------------------------------------------------------------------- the CLI


def test_two_missing_files_differing_by_an_escape_are_named_apart(tmp_path: Path) -> None:
    lines = []
    for name in ("it\x1bems.jsonl", "items.jsonl"):
        result = cli(tmp_path, "import", "items", str(tmp_path / name), "--set", "gt")
        assert result.exit_code != 0
        (line,) = [x for x in result.stderr.splitlines() if x.startswith("error:")]
        assert raw_hidden(line) == []
        lines.append(line)
    assert lines[0] == f"error: {tmp_path}/it\\x1bems.jsonl: no such file"
    assert lines[1] == f"error: {tmp_path}/items.jsonl: no such file"


def test_titles_in_a_list_differing_by_an_escape_are_listed_apart(tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    items.write_text('{"id":"x1","message":"fix\\u001b[2J bug"}\n{"id":"x2","message":"fix bug"}\n')
    assert cli(tmp_path, "import", "items", str(items), "--set", "gt").exit_code == 0
    found = cli(tmp_path, "search", "fix")
    assert found.exit_code == 0
    assert "fix\\x1b[2J bug" in found.stdout and "fix bug" in found.stdout
    assert raw_hidden(found.stdout.replace("\n", "")) == []


# --------------------------------------------------------------------------- set names


@pytest.mark.parametrize(
    ("name", "kind", "code"),
    [
        ("a\x1bb", "control", "U+001B"),
        ("zo\u202ee", "control", "U+202E"),
        ("a\u200bb", "invisible", "U+200B"),  # was called a control character
        ("a\u00adb", "invisible", "U+00AD"),
        ("\ufeffgt", "invisible", "U+FEFF"),
        ("a\u200db", "invisible", "U+200D"),  # a joiner between letters hides
    ],
)
def test_a_set_name_is_refused_naming_the_kind_of_character(
    tmp_path: Path, name: str, kind: str, code: str
) -> None:
    with pytest.raises(SetNameError, match=re.escape(f"holds the {kind} character {code}:")):
        check_set_name(name)
    items = tmp_path / "items.jsonl"
    items.write_text('{"id":"x1","message":"m"}\n')
    result = cli(tmp_path, "import", "items", str(items), "--set", name)
    assert result.exit_code == 2
    assert f"error: set name {name!a} holds the {kind} character {code}:" in result.stderr


def test_an_emoji_joined_set_name_is_allowed_like_an_annotator_name(tmp_path: Path) -> None:
    name = "👩\u200d💻 perf"
    check_set_name(name)  # the joiner is part of the emoji seen, as for annotators
    items = tmp_path / "items.jsonl"
    items.write_text('{"id":"x1","message":"m"}\n')
    assert cli(tmp_path, "import", "items", str(items), "--set", name).exit_code == 0
    assert name in cli(tmp_path, "set", "list").stdout


# --------------------------------------------------------------------------- NaN options


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ("check", "kernels", "--unchecked", "--timeout", "nan"),
            "Invalid value for '--timeout': nan: give a number of seconds",
        ),
        (
            ("mine", "ir", "{tmp}", "--max-mb", "nan"),
            "Invalid value for '--max-mb': nan: give a number of megabytes",
        ),
        (
            ("mine", "commits", "{tmp}", "--max-diff-mb", "nan"),
            "Invalid value for '--max-diff-mb': nan is not a finite number",
        ),
    ],
)
def test_a_nan_option_is_refused_naming_what_it_counts(
    tmp_path: Path, args: tuple[str, ...], line: str
) -> None:
    result = cli(tmp_path, *(a.replace("{tmp}", str(tmp_path)) for a in args))
    assert result.exit_code == 2
    assert line in result.stderr
    assert not (tmp_path / "c.db").exists()  # refused before anything was opened
