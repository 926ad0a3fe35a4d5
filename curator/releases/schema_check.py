"""A fast yes/no check for the JSON Schema subset release schemas use.

``jsonschema`` explains what is wrong but costs ~250 us a record; a million records
would take minutes. :func:`compile_check` turns a schema written only with ``type``,
``enum``, ``const``, ``required``, ``properties``, ``additionalProperties``, ``items``,
``minLength`` and ``pattern`` into a plain predicate with the same verdicts; the
validator asks ``jsonschema`` for the message only when a record fails. A schema using
anything else gets no fast check (``None``) and every record goes to ``jsonschema``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

Check = Callable[[Any], bool]

_IGNORED = {"$schema", "$id", "title", "description", "contentEncoding", "$comment"}
_HANDLED = {
    "type",
    "enum",
    "const",
    "required",
    "properties",
    "additionalProperties",
    "items",
    "minLength",
    "pattern",
}
_SCALARS = (str, int, bool, type(None))


class Unsupported(Exception):
    """The schema uses a keyword (or a value) this compiler does not cover."""


def _is_type(value: Any, name: str) -> bool:
    if name == "string":
        return isinstance(value, str)
    if name == "integer":
        if isinstance(value, bool):
            return False
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if name == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    raise Unsupported(f"type {name!r}")


def _same(a: Any, b: Any) -> bool:
    """JSON equality for scalars: true and 1 differ, 1 and 1.0 do not."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, str) or isinstance(b, str) or a is None or b is None:
        return type(a) is type(b) and a == b
    return isinstance(a, int | float) and isinstance(b, int | float) and a == b


def _compile(schema: Any) -> Check:
    if schema is True:
        return lambda value: True
    if schema is False:
        return lambda value: False
    if not isinstance(schema, dict):
        raise Unsupported("a schema that is not an object")
    unknown = set(schema) - _HANDLED - _IGNORED
    if unknown:
        raise Unsupported(", ".join(sorted(unknown)))
    checks: list[Check] = []
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        for name in names:
            _is_type(None, name)  # rejects unknown names up front
        checks.append(lambda v, names=names: any(_is_type(v, n) for n in names))
    for word in ("enum", "const"):
        if word in schema:
            allowed = schema[word] if word == "enum" else [schema[word]]
            if not all(isinstance(a, _SCALARS) for a in allowed):
                raise Unsupported(f"{word} with a non-scalar value")
            checks.append(lambda v, allowed=allowed: any(_same(v, a) for a in allowed))
    if "minLength" in schema:
        least = int(schema["minLength"])
        checks.append(lambda v: not isinstance(v, str) or len(v) >= least)
    if "pattern" in schema:
        pattern = re.compile(schema["pattern"])
        checks.append(lambda v: not isinstance(v, str) or pattern.search(v) is not None)
    if "items" in schema:
        item = _compile(schema["items"])
        checks.append(lambda v: not isinstance(v, list) or all(item(x) for x in v))
    if {"required", "properties", "additionalProperties"} & set(schema):
        checks.append(_object_check(schema))
    if len(checks) == 1:
        return checks[0]
    return lambda v: all(check(v) for check in checks)


def _object_check(schema: dict[str, Any]) -> Check:
    required = list(schema.get("required", []))
    properties = {name: _compile(sub) for name, sub in schema.get("properties", {}).items()}
    extra = schema.get("additionalProperties", True)
    extra_check = _compile(extra) if extra is not True else None

    def check(value: Any) -> bool:
        if not isinstance(value, dict):
            return True
        for name in required:
            if name not in value:
                return False
        for name, item in value.items():
            sub = properties.get(name)
            if sub is not None:
                if not sub(item):
                    return False
            elif extra_check is not None and not extra_check(item):
                return False
        return True

    return check


def compile_check(schema: Any) -> Check | None:
    """A predicate with ``jsonschema``'s verdicts for this schema, or None if the schema
    goes beyond the subset."""
    try:
        return _compile(schema)
    except (Unsupported, re.error, TypeError, ValueError):
        return None
