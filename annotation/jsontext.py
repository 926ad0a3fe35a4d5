"""Parsing one untrusted JSON text (a JSONL line, a manifest) into values the store can hold.

``json.loads`` accepts two things SQLite and the terminal cannot take: a string escape
naming half of a surrogate pair (``"\\ud800"``), which becomes a ``str`` that cannot be
encoded as UTF-8, and nesting deep enough to exhaust Python's recursion limit. Both end
here as a :class:`JsonTextError` with one line saying what is wrong, never a traceback.

Python's ``json.dumps`` writes a float NaN as the bare word ``NaN`` (not JSON, but
``json.loads`` reads it back): that is how pandas' missing cell reaches a JSONL file
written from a DataFrame's rows, so it is read as ``null``, a missing value, never as a
float that a text field would store as "nan". ``Infinity`` stays a float.
"""

from __future__ import annotations

import json
import re
from typing import Any

# A \u escape of a surrogate (D800-DFFF): the cheap test before walking the value.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_NUL = re.compile("\x00")


class JsonTextError(ValueError):
    """One line saying why a JSON text cannot be used."""


def _first(value: Any, pattern: re.Pattern[str]) -> tuple[str, str] | None:
    """(where, the character) of the first string of ``value`` (keys included) that
    ``pattern`` finds in; ``where`` is ``field 'a/b'`` or ``a string``."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            found = pattern.search(item)
            if found:
                return (f"field {where!r}" if where else "a string"), found.group()
        elif isinstance(item, dict):
            for key, sub in item.items():
                path = f"{where}/{key}" if where else str(key)
                stack.append((path, key))
                stack.append((path, sub))
        elif isinstance(item, list):
            stack.extend((f"{where}/{i}" if where else str(i), sub) for i, sub in enumerate(item))
    return None


def lone_surrogate(value: Any) -> str | None:
    """Where a string of ``value`` holds a lone surrogate (``field 'note'``), or None."""
    found = _first(value, _LONE_SURROGATE)
    if found is None:
        return None
    return f"{found[0]} holds a lone surrogate (\\u{ord(found[1]):04x}), not Unicode"


def nul_char(text: str, value: Any) -> str | None:
    """Where a string of ``value`` (parsed from ``text``) holds a NUL character, which
    SQLite's text functions stop at and git cannot hold in a message; None if none.
    ``text`` only spares the search of a value whose text has no escaped NUL."""
    if "\\u0000" not in text:
        return None
    return nul_in(value)


def nul_in(value: Any) -> str | None:
    """:func:`nul_char` for a value whose text is not at hand (one task of a file)."""
    found = _first(value, _NUL)
    return None if found is None else f"{found[0]} holds a NUL character (\\u0000)"


def _constant(name: str) -> float | None:
    """``NaN`` is a missing value (None); ``Infinity`` and ``-Infinity`` are floats."""
    return None if name == "NaN" else float(name)


def parse_json(text: str | bytes) -> Any:
    """The value of one JSON text; :class:`JsonTextError` for malformed JSON, nesting too
    deep to parse, or a lone surrogate in any string (keys included). ``NaN`` reads as
    None."""
    try:
        value = json.loads(text, parse_constant=_constant)
    except json.JSONDecodeError as exc:
        raise JsonTextError(f"malformed JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise JsonTextError("JSON nested too deeply to read") from None
    except UnicodeDecodeError:
        raise JsonTextError("not UTF-8 text") from None
    if _SURROGATE_ESCAPE.search(text if isinstance(text, str) else text.decode("utf-8", "replace")):
        problem = lone_surrogate(value)
        if problem:
            raise JsonTextError(problem)
    return value
