"""Making untrusted text (commit messages, paths, git errors) safe to print.

Terminal escape sequences and control characters are removed and Rich markup is
escaped, so a message can neither restyle the terminal nor inject markup.
"""

from __future__ import annotations

import re

from rich.markup import escape

# CSI / OSC / other ESC sequences, then any remaining C0/C1 control except \n and \t.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC ... BEL or ST
    r"|\x1b[@-Z\\-_]"  # two-character escapes
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"
)


def strip_controls(text: str) -> str:
    return _ESCAPES.sub("", text)


def plain(text: str) -> str:
    """Untrusted text made safe to embed in Rich markup."""
    return escape(strip_controls(text))


def one_line(text: str, width: int = 200) -> str:
    """Untrusted text on one line, shortened, safe to embed in Rich markup."""
    flat = " ".join(strip_controls(text).split())
    if len(flat) > width:
        flat = flat[: width - 1] + "…"
    return escape(flat)
