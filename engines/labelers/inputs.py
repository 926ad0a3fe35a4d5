"""What a trained labeler read while it learned, and the one check that the texts it is
given later are of the same kind.

A model records an ``input`` block in its metadata and its ``models`` row::

    {"field": "model_input", "requested": "auto", "examples_with_diff": 120,
     "examples_without_diff": 2175, "diff_dropout": 0.3, "message_copies": 0}

``field`` is the commit text it reads (``message`` or ``model_input``, message || diff);
``diff_dropout`` the probability that a diff-bearing example was shown as its message
alone in an epoch (the student); ``message_copies`` how many message-only copies of
diff-bearing examples were added to the training data (TF-IDF's equivalent). A student
that started from a perf prior which learned from message || diff also records
``prior_examples_with_diff``: it reads diffs even when its own examples had none. A
student warm-started from a model that reads message || diff records
``start_examples_with_diff`` (all the diffs that model had learned from) and keeps
reading message || diff.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

FIELDS = ("message", "model_input")
AUTO = "auto"
CHOICES = (AUTO, *FIELDS)
DEFAULT_DIFF_DROPOUT = 0.3


def resolve_field(requested: str, examples_with_diff: int, prior_with_diff: int = 0) -> str:
    """``auto`` -> ``message`` when neither a training example nor the prior the model
    starts from had a diff, else ``model_input``; an explicit field stays as it is."""
    if requested not in CHOICES:
        raise ValueError(f"input {requested!r}: use {', '.join(CHOICES)}")
    if requested != AUTO:
        return requested
    return "model_input" if examples_with_diff or prior_with_diff else "message"


def diffs_learned(record: Mapping[str, Any]) -> int:
    """How many diffs a model that reads message || diff learned from: its own examples',
    its prior's and those of the model it was warm-started from (0 when it reads
    messages)."""
    if record.get("field", "model_input") != "model_input":
        return 0
    keys = ("examples_with_diff", "prior_examples_with_diff", "start_examples_with_diff")
    return sum(v for v in (record.get(k) for k in keys) if isinstance(v, int))


def input_block(
    field: str,
    requested: str,
    with_diff: int,
    without_diff: int,
    diff_dropout: float = 0.0,
    message_copies: int = 0,
) -> dict[str, Any]:
    """The ``input`` record of a model (see the module's docstring)."""
    return {
        "field": field,
        "requested": requested,
        "examples_with_diff": with_diff,
        "examples_without_diff": without_diff,
        "diff_dropout": diff_dropout,
        "message_copies": message_copies,
    }


def recorded_input(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The ``input`` block of a model's metadata or params; models trained before it was
    recorded give only their ``input_field`` (``config.input_field`` in params)."""
    block = meta.get("input")
    if isinstance(block, Mapping) and block.get("field") in FIELDS:
        return dict(block)
    config = meta.get("config")
    field = meta.get("input_field") or (
        config.get("input_field") if isinstance(config, Mapping) else None
    )
    return {"field": field if field in FIELDS else "model_input"}


def describe(record: Mapping[str, Any]) -> str:
    """``message || diff (120 of 2295 training examples had a diff, diff dropout 0.3)``."""
    field = record.get("field", "model_input")
    text = "messages only" if field == "message" else "message || diff"
    with_diff = record.get("examples_with_diff")
    without = record.get("examples_without_diff")
    if isinstance(with_diff, int) and isinstance(without, int):
        text += f" ({with_diff} of {with_diff + without} training examples had a diff"
        dropout = record.get("diff_dropout")
        if field == "model_input" and with_diff and dropout:
            text += f", diff dropout {dropout:g}"
        if record.get("message_copies"):
            text += f", {record['message_copies']} message-only copies"
        if field == "model_input" and record.get("prior_examples_with_diff"):
            text += f"; its prior learned from {record['prior_examples_with_diff']:,} diffs"
        if field == "model_input" and record.get("start_examples_with_diff"):
            started = record["start_examples_with_diff"]
            text += f"; the model it started from learned from {started:,} diffs"
        text += ")"
    return text


def input_mismatch(
    name: str, record: Mapping[str, Any], field: str, n_items: int, n_without_diff: int
) -> str | None:
    """One warning line when ``name`` is given texts unlike those it learned from, else
    None: a field other than the recorded one; message || diff texts of which some have
    no diff, for a model that learned from diffs; or diffs for a model that read
    message || diff but never saw a diff in training."""
    learned = record.get("field", "model_input")
    if field != learned:
        was = "messages only" if learned == "message" else "message || diff"
        now = "messages only" if field == "message" else "message || diff"
        return f"{name} learned from {was}; it reads {now} here"
    if field != "model_input" or not n_items:
        return None
    with_diff = record.get("examples_with_diff")
    if not isinstance(with_diff, int):
        return None  # an older model: what it saw is not recorded
    inherited = record.get("prior_examples_with_diff") or record.get("start_examples_with_diff")
    if with_diff == 0 and n_without_diff < n_items and not inherited:
        return (
            f"{name} learned from message || diff but no training example had a diff;"
            f" {n_items - n_without_diff} of {n_items} items here have one"
        )
    if with_diff and n_without_diff:
        dropout = record.get("diff_dropout") or 0
        copies = record.get("message_copies") or 0
        seen = (
            f" (it saw messages alone in training: diff dropout {dropout:g})"
            if dropout and not copies
            else " (it also learned from message-only copies)"
            if copies
            else ""
        )
        return (
            f"{name} learned from message || diff; {n_without_diff} of {n_items} items here"
            f" have no diff{seen}"
        )
    return None
