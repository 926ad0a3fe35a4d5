"""One presentation for the CLI and the app: the same figures, the same missing-value glyph,
and untrusted text shown escaped on one line, whichever surface draws it."""

from __future__ import annotations

import ast
import io
import re
from pathlib import Path

import pytest
from rich.console import Console
from rich.text import Text

from annotation.agreement import AgreementReport
from annotation.set_reports import agreement_for_set
from curator.presentation import eval_table, format, tables
from curator.presentation.text import ONE_LINE_WIDTH, one_line, path_line, plain
from curator.tui.app import CuratorApp
from curator.tui.render import FULL_LINE_CHARS, full_text, pairs
from curator.tui.screens.agreement import AgreementScreen
from curator.tui.screens.home import HomeScreen
from store import open_store
from store.sets import get_set
from tests.tui_helpers import text_of, until
from tests.tui_store import ROOT, build, copy_of
from tests.tui_store import curator as curator_cli

UNTRUSTED = "[bold]loud[/bold] \x1b[31mred\x1b[0m\nsecond line\r\n\tthird"
SHOWN = "[bold]loud[/bold] \\x1b[31mred\\x1b[0m second line third"  # ESC shown, not run


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("presentation") / "template.db", with_engines=False)


@pytest.fixture
def db(template: Path, tmp_path: Path) -> Path:
    return copy_of(template, tmp_path / "t.db")


def _report(db: Path) -> AgreementReport:
    with open_store(db) as s:
        set_row = get_set(s, "gt-sample")
        assert set_row is not None
        return agreement_for_set(s, set_row)


def _rows(text: str) -> list[list[str]]:
    """Each line of a drawn table as its cells: split at box lines or runs of spaces."""
    return [
        [c for c in (part.strip() for part in re.split(r"[│┃|]| {2,}", line)) if c]
        for line in text.splitlines()
    ]


def _drawn(rendered: str, row: tuple[object, ...]) -> bool:
    want = [str(c.plain if isinstance(c, Text) else c) for c in row]
    want = [c for c in want if c]
    return want in _rows(rendered)


def _plain(renderable: object, width: int = 200) -> str:
    buffer = io.StringIO()
    Console(file=buffer, width=width, color_system=None, force_terminal=False).print(renderable)
    return buffer.getvalue()


# ------------------------------------------------------------ the same figures on both


@pytest.mark.anyio
async def test_cli_and_app_draw_the_same_agreement_cells(db: Path) -> None:
    report = _report(db)
    cli_text = curator_cli(db, "agree", "gt-sample")
    app = CuratorApp(db, "dave")
    async with app.run_test(size=(140, 48)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, HomeScreen), "home")
        set_row = get_set_row(db)
        app.push_screen(AgreementScreen(set_row))
        await until(
            pilot,
            lambda: "annotators" in text_of(app.screen.query_one("#status")),  # type: ignore[arg-type]
            "report",
        )
        await pilot.pause()
        # what the app's boxes hold, drawn as they are on its screen
        screen = app.screen
        assert isinstance(screen, AgreementScreen)
        app_text = "".join(_plain(screen.box(b).content) for b in screen.boxes)
        status = text_of(app.screen.query_one("#status"))  # type: ignore[arg-type]
    expected = [*tables.agreement_rows(report), *tables.per_label_rows(report)]
    assert len(expected) >= 5
    for row in expected:
        assert _drawn(cli_text, row), (row, cli_text)
        assert _drawn(app_text, row), (row, app_text)
    # the figures are the store's, with Landis and Koch's reading beside them
    assert report.fleiss.kappa is not None
    fleiss = ("Fleiss' kappa", f"{report.fleiss.kappa:.3f}", format.reading(report.fleiss.kappa))
    assert all(cell in cli_text and cell in app_text for cell in fleiss)
    # a figure that cannot be computed (no categories were voted) is the missing glyph on both
    category = next(r for r in tables.agreement_rows(report) if r[0].startswith("category"))
    assert category[1] == format.MISSING
    counts = tables.agreement_counts(report)
    assert counts in " ".join(cli_text.split()) and counts in status


def get_set_row(db: Path):  # type: ignore[no-untyped-def]
    with open_store(db) as s:
        return get_set(s, "gt-sample")


@pytest.mark.anyio
async def test_home_shows_the_missing_glyph_for_a_set_without_votes(db: Path) -> None:
    app = CuratorApp(db, "dave")
    async with app.run_test() as pilot:
        await until(pilot, lambda: isinstance(app.screen, HomeScreen), "home")
        table = app.screen.query_one("#sets")
        await until(
            pilot,
            lambda: table.row_count == 4 and "…" not in str(table.get_row_at(3)),  # type: ignore[attr-defined]
            "overviews",
        )
        rows = {str(table.get_row_at(i)[0]): table.get_row_at(i) for i in range(4)}  # type: ignore[attr-defined]
    assert rows["inbox"][6] == rows["inbox"][7] == format.MISSING


def test_cli_table_and_app_table_lay_out_the_same_cells() -> None:
    rows = [("perf", 3, format.number(0.5), format.number(None))]
    boxed = _plain(tables.table("T", ("label", "votes", "a", "b"), rows))
    bare = _plain(tables.table("T", ("label", "votes", "a", "b"), rows, boxed=False))
    assert ["perf", "3", "0.500", "-"] in _rows(boxed)
    assert ["perf", "3", "0.500", "-"] in _rows(bare)
    assert "━" in boxed and "━" not in bare


# ------------------------------------------------------------ the missing-value glyph


def test_one_glyph_for_a_missing_figure() -> None:
    assert format.MISSING == "-"
    assert format.number(None) == format.percent(None) == format.count(None) == "-"
    assert format.when(None) == "-"
    assert eval_table.class_figures(None) == ["-"] * 4
    assert tables.perf_scores(None) == ["-"] * len(tables.SCORES_HEADER)
    assert format.kappa(None) == "- (undefined)"
    assert format.number(0.0) == "0.000" and format.percent(0.0) == "0.0%"  # zero is no dash
    assert format.kappa(0.7) == "0.700 (substantial)"
    assert format.when("2025-01-31T14:05:09+00:00") == "2025-01-31 14:05"


def test_no_second_missing_glyph_or_formatter_in_curator() -> None:
    """The em dash that the app once drew for a missing figure, and private copies of the
    shared formatters, stay out of curator/ (presentation is their one home)."""
    shared = {"one_line", "number", "percent", "strip_controls", "landis_koch"}
    for path in (ROOT / "curator").rglob("*.py"):
        if "presentation" in path.parts:
            continue
        source = path.read_text()
        tree = ast.parse(source)
        defined = {
            node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
        } & shared
        assert not defined, f"{path} defines {defined}; use curator.presentation"
        literals = {
            node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
        }
        assert "—" not in literals, f"{path} draws '—'; use format.MISSING"


# ------------------------------------------------------------ untrusted text, one line


def test_untrusted_text_is_escaped_on_one_line() -> None:
    shown = one_line(UNTRUSTED)
    assert isinstance(shown, Text)
    assert shown.plain == SHOWN
    assert shown.spans == []  # the [bold] is text, not a style
    printed = _plain(shown)
    assert printed == SHOWN + "\n"


@pytest.mark.parametrize("surface", ["cli", "app"])
def test_untrusted_cells_are_escaped_in_both_tables(surface: str) -> None:
    built = tables.table("T", ("who", "n"), [(UNTRUSTED, 1)], boxed=surface == "cli")
    printed = _plain(built)
    assert any(SHOWN in line for line in printed.splitlines())  # one line, brackets kept
    assert "\x1b" not in printed and "\r" not in printed and "\t" not in printed


def test_untrusted_text_in_the_apps_key_value_line() -> None:
    line = pairs([("message", UNTRUSTED)], 200)
    assert line.plain == f"message {SHOWN}"
    assert "\n" not in line.plain and "\x1b" not in line.plain


def test_one_width_default_and_callers_pass_their_own() -> None:
    long = "x" * 500
    assert len(one_line(long).plain) == ONE_LINE_WIDTH == 200
    cut = one_line(long, 80).plain
    assert len(cut) == 80 and cut.endswith("…")
    assert one_line("short", 80).plain == "short"


def test_a_long_path_keeps_its_file_name() -> None:
    path = "/" + "/".join(["deep"] * 40) + "/cut.bc"
    shown = path_line(path, 30).plain
    assert len(shown) == 30 and shown.startswith("…") and shown.endswith("/deep/cut.bc")
    assert path_line("/tmp/a\x1b[31m.bc", 30).plain == "/tmp/a\\x1b[31m.bc"
    assert path_line("short.ll", 30).plain == "short.ll"


def test_a_warning_stays_one_line_in_a_log_however_long_or_multiline() -> None:
    import io

    from rich.console import Console

    from curator.presentation.cli_output import warn

    buffer = io.StringIO()
    console = Console(file=buffer, width=40, force_terminal=False)
    message = "repo@abc: cannot read commit: fatal: dubious ownership\nhint: " + "x" * 200
    warn(message, console, 300)
    lines = buffer.getvalue().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("warning: repo@abc: cannot read commit: fatal: dubious")


def test_a_long_title_over_an_empty_table_stays_on_one_line() -> None:
    title = "keyword@3: 0 predicted, 350 already predicted (skipped)"
    shown = io.StringIO()
    Console(file=shown, width=100).print(tables.table(title, ("label", "items"), []))
    lines = shown.getvalue().splitlines()
    assert lines[0].strip() == title
    assert len(lines[1]) >= len(title)  # the table under it is as wide as the title


def test_a_table_title_holding_a_name_is_shown_as_written() -> None:
    name = "h[red]set[/red] [link=file:///etc/passwd]x[/link]\x1b[2J"
    buffer = io.StringIO()
    console = Console(file=buffer, width=200, force_terminal=True, color_system="truecolor")
    console.print(tables.table(f"Evaluation on {name}", ("a",), [("1",)]))
    shown = buffer.getvalue()
    # the title wraps at the table's width; the name's ESC is shown, not sent
    assert "h[red]set[/red]" in shown and "[link=file:///etc/passwd]x[/link]\\x1b[2J" in shown
    assert "\x1b[2J" not in shown and "\x1b]8;" not in shown


def test_show_all_keeps_every_character_and_breaks_only_very_long_lines() -> None:
    blob = "+" + "z" * (2 * FULL_LINE_CHARS + 5)
    text = f"msg\x1b[2J\n\n{blob}\n-short\tline"
    shown = full_text(text)
    lines = shown.split("\n")
    assert max(len(line) for line in lines) == FULL_LINE_CHARS
    assert lines[:2] == ["msg", ""] and lines[-1] == "-short    line"
    assert "".join(lines[2:5]) == blob and len(lines) == 6
    assert full_text("a\nb") == "a\nb"


def test_invisible_characters_that_hide_in_a_name_are_shown_and_joiners_stay() -> None:
    """``fo<ZWSP>o.c`` read as ``foo.c`` beside the real one; the zero-width joiners that
    Persian, Indic scripts and emoji sequences need are left as they are."""
    assert path_line("src/fo\u200bo.c").plain == "src/fo\\u200bo.c"
    assert one_line("\ufeffgt-sample\u2060").plain == "\\ufeffgt-sample\\u2060"
    assert plain("a\u180eb").plain == "a\\u180eb"
    for kept in ("می\u200cخواهم", "क्\u200dष", "👩\u200d💻"):
        assert one_line(kept).plain == kept
