"""Untrusted text made safe to print: no terminal escapes, no controls, no live markup.

``strip_controls`` removes control characters (for long bodies); ``plain`` and
``one_line`` show each one escaped, as ``repr`` writes it, so that two names that differ
only by one still read differently."""

from __future__ import annotations

import io

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text

from curator.presentation.text import labelled, one_line, plain, strip_controls

ESC = "\x1b"

# Characters that make escapes, markup and whitespace interesting, mixed into any text.
_TRICKY = st.sampled_from(
    [
        ESC,
        "\x07",
        "\x9b",
        "\x85",
        "\x7f",
        "\x00",
        "\r",
        "\n",
        "\t",
        "[",
        "]",
        "/",
        "\\",
        "[bold]",
        "[/]",
        "[link=http://evil]",
        "\x1b[31m",
        "\x1b]8;;http://x\x07",
        "\x1b\\",
        " ",
        "\u2028",
        "\u202e",
        "\u2067",
    ]
)
TEXT = st.lists(st.one_of(st.text(max_size=8), _TRICKY), max_size=20).map("".join)


BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def is_control(ch: str) -> bool:
    """A C0 control other than newline and tab, DEL, a C1 control, a bidi mark, embedding,
    override or isolate, a line or paragraph separator, or a lone surrogate."""
    code = ord(ch)
    return (
        (code < 0x20 and ch not in "\n\t")
        or 0x7F <= code <= 0x9F
        or ch in BIDI
        or ch in "\u2028\u2029"
        or 0xD800 <= code <= 0xDFFF
    )


def is_subsequence(small: str, big: str) -> bool:
    it = iter(big)
    return all(ch in it for ch in small)


def escaped(text: str) -> str:
    """What plain() should show: each control (as is_control says) written as repr
    writes it, newlines and tabs kept, a CR LF taken as a newline."""
    return "".join(repr(ch)[1:-1] if is_control(ch) else ch for ch in text.replace("\r\n", "\n"))


def render(shown: Text) -> str:
    """What the terminal shows for a Text: its plain characters, markup never parsed."""
    assert isinstance(shown, Text)
    return shown.plain


# --------------------------------------------------------------------------- strip_controls


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("\x1b[31mred\x1b[0m", "red"),
        ("\x1b[1;38;5;196mbold\x1b[m", "bold"),
        ("a\x1b[2J\x1b[Hb", "ab"),  # clear screen, cursor home
        ("\x1b]8;;http://evil\x07click\x1b]8;;\x07", "click"),  # OSC 8 hyperlink, BEL
        ("\x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\", "click"),  # OSC 8, ST terminator
        ("\x1b]0;window title\x07text", "text"),  # set the window title
        ("a\x1bMb\x1bDc\x1b\\", "abc"),  # two-character escapes (RI, IND, ST)
        ("bell\x07 back\x08space", "bell backspace"),
        ("car\rriage", "carriage"),
        ("del\x7fete", "delete"),
        ("nul\x00l", "null"),
        ("c1 \x9b31mcsi \x85nel", "c1 31mcsi nel"),  # C1 controls go, their text stays
        ("keeps\nnew\tlines and tabs", "keeps\nnew\tlines and tabs"),
        ("ünïcödé, 日本語 and emoji 🚀", "ünïcödé, 日本語 and emoji 🚀"),
        ("fast \u202etsaf\u202c end", "fast tsaf end"),  # RLO would print it reversed
        ("\u2066iso\u2069 \u200emark\u200f \u061carabic", "iso mark arabic"),
        ("line\u2028sep\u2029para", "linesep" + "para"),
        ("bad \udcff byte", "bad \ufffd byte"),  # a lone surrogate cannot be printed
    ],
)
def test_strip_controls_examples(raw: str, expected: str) -> None:
    assert strip_controls(raw) == expected


@given(TEXT)
def test_strip_controls_leaves_no_escape_and_no_control(text: str) -> None:
    out = strip_controls(text)
    assert ESC not in out
    assert not any(is_control(ch) for ch in out)
    assert is_subsequence(out, text)  # only removes, never adds or reorders
    assert strip_controls(out) == out


@given(st.text())
def test_text_without_controls_is_untouched(text: str) -> None:
    assume(not any(is_control(ch) for ch in text))
    assert strip_controls(text) == text


def test_newlines_and_tabs_survive_between_escapes() -> None:
    raw = "line 1\x1b[0m\n\tline 2\x1b]2;t\x07\n"
    assert strip_controls(raw) == "line 1\n\tline 2\n"


# --------------------------------------------------------------------------- plain


@pytest.mark.parametrize(
    "text",
    [
        "[bold red]x[/]",
        "[link=http://evil]click[/link]",
        "[/]",  # would be a MarkupError if it reached Rich unescaped
        "[/bold] closes nothing",
        "array[i] and dict[key]",
        "\\[bold] already escaped",
        "\x1b[31m[bold]both[/]\x1b[0m",
    ],
)
def test_plain_shows_markup_literally(text: str) -> None:
    assert render(plain(text)) == escaped(text)
    assert ESC not in plain(text).plain


@given(TEXT)
def test_plain_round_trips_through_a_console(text: str) -> None:
    console = Console(width=10_000, file=io.StringIO(), color_system=None, emoji=True)
    console.print(plain(text), end="", soft_wrap=True)
    shown = console.file.getvalue()  # type: ignore[attr-defined]
    # the console expands tabs to spaces; everything else comes out as written
    assert shown.replace(" ", "") == escaped(text).replace("\t", "").replace(" ", "")


@given(TEXT)
def test_labelled_never_lets_the_text_restyle_the_line(text: str) -> None:
    rendered = labelled("error", "red", plain(text), "!")
    assert rendered.plain == "error: " + escaped(text) + "!"
    red = [span for span in rendered.spans if span.style == "red"]
    assert [(s.start, s.end) for s in red] == [(0, len("error:"))]
    assert all(span.style == "red" for span in rendered.spans)


def test_plain_keeps_a_trailing_backslash() -> None:
    assert render(plain("C:\\temp\\")) == "C:\\temp\\"


def test_plain_keeps_a_backslash_before_a_literal_bracket() -> None:
    assert render(plain("regex \\[0-9]")) == "regex \\[0-9]"


def test_plain_does_not_turn_emoji_codes_into_emoji() -> None:
    text = "fix :fire: and :thumbs_up: handling"
    console = Console(file=io.StringIO(), color_system=None, emoji=True, width=200)
    console.print(plain(text), end="")
    assert console.file.getvalue() == text  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- one_line


def test_one_line_flattens_whitespace() -> None:
    assert render(one_line("  first\n\n\tsecond   third\r\n")) == "first second third"


def test_one_line_keeps_short_text_whole() -> None:
    text = "x" * 20
    assert render(one_line(text, width=20)) == text


@pytest.mark.parametrize("width", [1, 2, 10, 50])
def test_one_line_truncates_with_an_ellipsis(width: int) -> None:
    text = "word " * 40
    flat = " ".join(text.split())
    shown = render(one_line(text, width=width))
    assert len(shown) == width
    assert shown.endswith("…")
    assert shown[:-1] == flat[: width - 1]


def test_one_line_shows_markup_and_escape_sequences_literally() -> None:
    shown = one_line("\x1b[31m[bold]evil[/]\x1b[0m\nsecond line", width=200)
    assert ESC not in shown.plain
    assert render(shown) == "\\x1b[31m[bold]evil[/]\\x1b[0m second line"


@given(TEXT, st.integers(min_value=1, max_value=60))
def test_one_line_is_one_safe_line_within_the_width(text: str, width: int) -> None:
    flat = " ".join(escaped(text).split())
    expected = flat if len(flat) <= width else flat[: width - 1] + "…"
    shown = render(one_line(text, width))
    assert shown == expected
    assert "\n" not in shown and "\t" not in shown
    assert not any(is_control(ch) for ch in shown)
    assert len(shown) <= width
