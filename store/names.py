"""Which characters a name (an annotator's, a set's) may not hold: the ones that hide or
garble it wherever it is printed, so that no one could read it in a list or type it back."""

from __future__ import annotations

import re

# C0 and C1 controls (newlines and tabs too), DEL, and the invisible characters that
# reorder or break text: bidi marks, embeddings, overrides and isolates, U+2028/U+2029
UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def unprintable_char(name: str) -> str | None:
    """The first character of ``name`` that no one could see or type, as ``U+XXXX``."""
    found = UNPRINTABLE.search(name)
    return None if found is None else f"U+{ord(found.group()):04X}"
