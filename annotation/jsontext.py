"""Parsing one untrusted JSON text (a JSONL line, a manifest) into values the store can hold.

``json.loads`` accepts two things SQLite and the terminal cannot take: a string escape
naming half of a surrogate pair (``"\\ud800"``), which becomes a ``str`` that cannot be
encoded as UTF-8, and nesting deep enough to exhaust Python's recursion limit. Both end
here as a :class:`JsonTextError` with one line saying what is wrong, never a traceback.
"""

from __future__ import annotations

import json
import re
from typing import Any

# A \u escape of a surrogate (D800-DFFF): the cheap test before walking the value.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class JsonTextError(ValueError):
    """One line saying why a JSON text cannot be used."""


def lone_surrogate(value: Any) -> str | None:
    """Where a string of ``value`` holds a lone surrogate (``field 'note'``), or None."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            found = _LONE_SURROGATE.search(item)
            if found:
                what = f"field {where!r}" if where else "a string"
                return f"{what} holds a lone surrogate (\\u{ord(found.group()):04x}), not Unicode"
        elif isinstance(item, dict):
            for key, sub in item.items():
                path = f"{where}/{key}" if where else str(key)
                stack.append((path, key))
                stack.append((path, sub))
        elif isinstance(item, list):
            stack.extend((f"{where}/{i}" if where else str(i), sub) for i, sub in enumerate(item))
    return None


def parse_json(text: str | bytes) -> Any:
    """The value of one JSON text; :class:`JsonTextError` for malformed JSON, nesting too
    deep to parse, or a lone surrogate in any string (keys included)."""
    try:
        value = json.loads(text)
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
