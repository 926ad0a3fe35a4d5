"""The shipped record schemas, and the fast schema check agreeing with ``jsonschema``."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from curator.releases.schema import KINDS, MANIFEST_SCHEMA, record_schema
from curator.releases.schema_check import compile_check

ODD_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    1.0,
    2.5,
    -3,
    "",
    "x",
    "0" * 64,
    [],
    ["a"],
    [1],
    {},
]


def example(schema: dict[str, Any]) -> Any:
    """A valid instance of a release schema (first choice of every alternative)."""
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema["type"]
    kind = next(k for k in kind if k != "null") if isinstance(kind, list) else kind
    if kind == "object":
        return {name: example(sub) for name, sub in schema.get("properties", {}).items()}
    return {"string": "text", "integer": 3, "number": 0.5, "boolean": True, "array": []}[kind]


def verdicts_agree(schema: dict[str, Any], instance: Any) -> None:
    fast = compile_check(schema)
    assert fast is not None
    slow = Draft202012Validator(schema).is_valid(instance)
    assert fast(instance) == slow, instance


@pytest.mark.parametrize("kind", KINDS)
def test_every_schema_is_valid_and_its_example_passes(kind: str) -> None:
    schema = record_schema(kind)
    Draft202012Validator.check_schema(schema)
    record = example(schema)
    assert Draft202012Validator(schema).is_valid(record)
    verdicts_agree(schema, record)


@pytest.mark.parametrize("kind", KINDS)
def test_the_fast_check_judges_every_mutation_as_jsonschema_does(kind: str) -> None:
    schema = record_schema(kind)
    record = example(schema)
    for name in record:
        missing = {k: v for k, v in record.items() if k != name}
        verdicts_agree(schema, missing)
        for value in ODD_VALUES:
            verdicts_agree(schema, {**record, name: value})
    verdicts_agree(schema, {**record, "extra": 1})
    votes = copy.deepcopy(record)
    votes["votes"] = [{"annotator": "a", "role": "judge", "label": "x", "category": None}]
    verdicts_agree(schema, votes)
    votes["votes"][0]["role"] = "annotator"
    verdicts_agree(schema, votes)
    verdicts_agree(schema, [record])


def test_the_manifest_schema_compiles_and_unknown_keywords_fall_back() -> None:
    assert compile_check(MANIFEST_SCHEMA) is not None
    assert compile_check({"type": "object", "oneOf": [{"type": "string"}]}) is None
    assert compile_check({"type": "decimal"}) is None
    assert compile_check({"enum": [{"a": 1}]}) is None
