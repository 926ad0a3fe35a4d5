"""Making untrusted text (commit messages, paths, git errors, annotator, set and file names)
safe to show, for the CLI and the app alike.

What is shown never holds a raw control character: terminal escape sequences, C0 and C1
controls (ESC, BEL, CR, NUL...), the invisible characters that reorder or hide text (bidi
marks, embeddings, overrides and isolates such as U+202E, which make a title read
backwards; line and paragraph separators; zero-width spaces and byte-order marks, which
hide inside a name) and lone surrogates (an undecodable byte in a
file name) are each shown as Python writes them in ``repr``: ``\\x1b``, ``\\r``,
``\\u202e``, ``\\udcff``. Removing them, as this module once did, made two different
names look the same (``a<ESC>b`` and ``ab`` both read ``ab`` in an error line or a list of
sets). The ``repr`` form was chosen over Unicode's control pictures (U+241B ``␛``) because
it covers every such character (the pictures stop at C0 and DEL: C1 controls, bidi
characters and surrogates have none), it is plain ASCII that any terminal and font shows,
and it is the form our messages already use where they quote a name with ``{name!r}`` or
``{name!a}``, so a name reads the same in every line. (Text that spells ``\\x1b`` itself
reads the same as the character; backslashes are not doubled, or every ``repr`` in a
message would show doubled.)

:func:`strip_controls` still removes them, for the long bodies (diffs, commit messages,
charts drawn by plotext) where no name is told apart and an escaped colour code in every
line of a diff would only be noise. The result of :func:`plain`, :func:`one_line`,
:func:`path_line` and :func:`labelled` is a ``rich.text.Text``, never a markup string:
Rich then shows brackets, backslashes and ``:emoji:`` codes exactly as written, and
nothing a message holds can restyle output.
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
# Every character shown escaped: the controls above (newline and tab too: the callers that
# keep or fold them take them out first), line and paragraph separators, lone surrogates,
# and the invisible characters no script needs to be read right (zero-width space, word
# joiner and invisible operators, byte-order mark, Mongolian vowel separator), with which
# ``foo.c`` and ``fo\u200bo.c`` would read the same. The joiners U+200C and U+200D stay:
# Persian, Indic scripts and emoji sequences need them.
_HIDDEN = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u061c\u180e\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064"
    r"\u2066-\u2069\ufeff\ud800-\udfff]"
)

ONE_LINE_WIDTH = 200


def strip_controls(text: str) -> str:
    return _SURROGATES.sub("\ufffd", _ESCAPES.sub("", text))


def visible(text: str, keep: str = "") -> str:
    """``text`` with each control, bidi or separator character and each lone surrogate
    written as ``repr`` writes it (``\\x1b``, ``\\r``, ``\\u202e``), except those in
    ``keep`` (newline and tab, where the layout keeps them); a Windows line end (CR LF)
    counts as a newline when newlines are kept."""
    if "\n" in keep:
        text = text.replace("\r\n", "\n")
    return _HIDDEN.sub(lambda m: m[0] if m[0] in keep else repr(m[0])[1:-1], text)


def flat(text: str) -> str:
    """Text on one line: every run of white space (newlines, tabs) folded to a space, each
    other control character shown escaped (:func:`visible`)."""
    return " ".join(visible(text, keep="\n\t").split())


def shorten(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, the last one an ellipsis when it was cut."""
    return text if len(text) <= width else text[: width - 1] + "…"


def plain(text: str) -> Text:
    """Untrusted text as a Rich ``Text``, shown literally: newlines and tabs kept, other
    control characters shown escaped (:func:`visible`)."""
    return Text(visible(text, keep="\n\t"))


def one_line(text: str, width: int = ONE_LINE_WIDTH) -> Text:
    """Untrusted text on one line, shortened to ``width`` with an ellipsis."""
    return Text(shorten(flat(text), width))


def path_line(path: str, width: int = ONE_LINE_WIDTH) -> Text:
    """An untrusted path on one line; a long one loses its start, not its file name. A
    newline or tab in it is shown escaped, not folded: a path is a name, and ``a<TAB>b``
    is not the file ``a b``."""
    text = visible(path)
    return Text(text if len(text) <= width else "…" + text[len(text) - width + 1 :])


def labelled(label: str, label_style: str, *parts: str | Text) -> Text:
    """``label: part part...`` with the label styled and the parts shown literally; a
    string part's control characters are shown escaped too (:func:`visible`), for a
    caller that puts a name straight into an f-string."""
    shown = (visible(p, keep="\n\t") if isinstance(p, str) else p for p in parts)
    return Text.assemble((f"{label}:", label_style), " ", *shown)
