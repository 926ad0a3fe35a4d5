"""Making untrusted text (commit messages, paths, git errors) safe to show.

Terminal escape sequences and control characters are removed, and the result is a
``rich.text.Text``, never a markup string: Rich then shows brackets, backslashes and
``:emoji:`` codes exactly as written, and nothing a message holds can restyle output.
"""

from __future__ import annotations

import re

from rich.text import Text

# CSI, OSC (ended by BEL or ST), other ESC sequences (ESC, intermediates, final byte),
# then any remaining C0/C1 control except \n and \t.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[ -/]*[0-~]"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"
)


def strip_controls(text: str) -> str:
    return _ESCAPES.sub("", text)


def plain(text: str) -> Text:
    """Untrusted text as a Rich ``Text``, shown literally."""
    return Text(strip_controls(text))


def one_line(text: str, width: int = 200) -> Text:
    """Untrusted text on one line, shortened to ``width`` with an ellipsis."""
    flat = " ".join(strip_controls(text).split())
    if len(flat) > width:
        flat = flat[: width - 1] + "…"
    return Text(flat)


def labelled(label: str, label_style: str, *parts: str | Text) -> Text:
    """``label: part part...`` with the label styled and the parts shown literally."""
    return Text.assemble((f"{label}:", label_style), " ", *parts)
