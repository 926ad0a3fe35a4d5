"""Which characters a name (an annotator's, a set's) may not hold: the ones that hide or
garble it wherever it is printed, so that no one could read it in a list or type it back."""

from __future__ import annotations

import re
import unicodedata

# C0 and C1 controls (newlines and tabs too), DEL, and the invisible characters that
# reorder or break text: bidi marks, embeddings, overrides and isolates, U+2028/U+2029
UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")

_ZWJ = "\u200d"
_EMOJI_PRESENTATION = "\ufe0f"


def _joins_emoji(name: str, at: int) -> bool:
    """Whether the zero-width joiner at ``at`` joins two symbols into one emoji (as in
    ``👩‍💻``, ``👩🏽‍💻``, ``🏳️‍🌈``), where it is seen, rather than two letters."""
    before = name[at - 1] if at > 0 else ""
    after = name[at + 1] if at + 1 < len(name) else ""
    return (
        bool(before)
        and bool(after)
        and (before == _EMOJI_PRESENTATION or unicodedata.category(before) in ("So", "Sk"))
        and unicodedata.category(after) == "So"
    )


def unprintable(name: str) -> str | None:
    """The first character of ``name`` that no one could see or type: a control
    character (:data:`UNPRINTABLE`, which :func:`is_control` tells apart), or one of
    Unicode's invisible format characters (category Cf: zero-width spaces and joiners,
    soft hyphens, byte-order marks), with which ``a\\u200bb`` would list as ``ab`` beside a
    different ``ab``. A joiner inside an emoji sequence is part of what is seen and is
    allowed."""
    for at, char in enumerate(name):
        if UNPRINTABLE.match(char):
            return char
        if unicodedata.category(char) == "Cf" and not (char == _ZWJ and _joins_emoji(name, at)):
            return char
    return None


def is_control(char: str) -> bool:
    """Whether a character :func:`unprintable` found is a control character (C0, C1, DEL,
    a bidi mark, embedding, override or isolate, a line or paragraph separator) rather
    than an invisible one."""
    return UNPRINTABLE.match(char) is not None


def unprintable_char(name: str) -> str | None:
    """The first character of ``name`` that no one could see or type
    (:func:`unprintable`), as ``U+XXXX``."""
    found = unprintable(name)
    return None if found is None else f"U+{ord(found):04X}"
