"""Making untrusted text (commit messages, paths, git errors, annotator names) safe to show,
for the CLI and the app alike.

Terminal escape sequences, control characters and the invisible characters that reorder
or hide text (bidi overrides, embeddings and isolates such as U+202E, which make a title
read backwards; line and paragraph separators) are removed; a lone surrogate, which no
terminal can print, becomes U+FFFD. The result is a ``rich.text.Text``, never a markup
string: Rich then shows brackets, backslashes and ``:emoji:`` codes exactly as written,
and nothing a message holds can restyle output.
"""

from __future__ import annotations

import re

from rich.text import Text

# CSI, OSC (ended by BEL or ST), other ESC sequences (ESC, intermediates, final byte),
# then any remaining C0/C1 control except \n and \t, then bidi marks, embeddings,
# overrides and isolates (U+061C, U+200E-F, U+202A-E, U+2066-9) and U+2028/U+2029.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[ -/]*[0-~]"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]"
)
_SURROGATES = re.compile("[\ud800-\udfff]")

ONE_LINE_WIDTH = 200


def strip_controls(text: str) -> str:
    return _SURROGATES.sub("\ufffd", _ESCAPES.sub("", text))


def flat(text: str) -> str:
    """Control-free text with every run of white space (newlines too) folded to a space."""
    return " ".join(strip_controls(text).split())


def shorten(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, the last one an ellipsis when it was cut."""
    return text if len(text) <= width else text[: width - 1] + "…"


def plain(text: str) -> Text:
    """Untrusted text as a Rich ``Text``, shown literally."""
    return Text(strip_controls(text))


def one_line(text: str, width: int = ONE_LINE_WIDTH) -> Text:
    """Untrusted text on one line, shortened to ``width`` with an ellipsis."""
    return Text(shorten(flat(text), width))


def path_line(path: str, width: int = ONE_LINE_WIDTH) -> Text:
    """An untrusted path on one line; a long one loses its start, not its file name."""
    text = flat(path)
    return Text(text if len(text) <= width else "…" + text[len(text) - width + 1 :])


def labelled(label: str, label_style: str, *parts: str | Text) -> Text:
    """``label: part part...`` with the label styled and the parts shown literally."""
    return Text.assemble((f"{label}:", label_style), " ", *parts)
