"""Key bindings as data: which key votes which label, and the keys every screen shares."""

from __future__ import annotations

from dataclasses import dataclass

from annotation.labels import SKIP

# The only letters the label screen leaves free: a label starting with one gets it as a
# shortcut. Every other key (the other letters, digits, ``?``, ``/``) does something else.
FREE_LETTERS = frozenset("pkx")

# The keys that leave the label and review screens (their ``leave`` binding), handled
# in the order they were typed with the label keys (``LabelKeysScreen.on_key``).
LEAVE_KEYS = ("escape", "q")

# Modifiers that make a key something other than the character it carries: a legacy
# terminal sends Alt+s (or esc then s typed within Textual's ESCDELAY) as ``\x1bs``,
# which Textual reports as key ``alt+s`` with character ``s``.
MODIFIERS = frozenset({"alt", "ctrl", "super", "hyper", "meta"})


@dataclass(frozen=True)
class LabelKey:
    key: str
    label: str


def label_keys(labels: list[str]) -> list[LabelKey]:
    """Digits 1..9 for the labels in order, ``s`` (and 0) for skip, plus the first
    letter of a label when that letter is free (``p`` for perf, ``k`` for keep)."""
    keys: list[LabelKey] = []
    used: set[str] = set()
    real = [label for label in labels if label != SKIP]
    for i, label in enumerate(real[:9], start=1):
        keys.append(LabelKey(str(i), label))
        first = label[:1].lower()
        if first in FREE_LETTERS and first not in used:
            keys.append(LabelKey(first, label))
            used.add(first)
    keys.append(LabelKey("s", SKIP))
    keys.append(LabelKey("0", SKIP))
    return keys


def settling_keys(keys: list[LabelKey]) -> list[LabelKey]:
    """The keys that settle an item (an adjudication): every label key but skip's."""
    return [k for k in keys if k.label != SKIP]


def key_for(keys: list[LabelKey], key: str) -> str | None:
    return next((k.label for k in keys if k.key == key), None)


def is_modified(key: str) -> bool:
    """Whether a Textual key name holds Alt, Ctrl, Super, Hyper or Meta (``alt+1``,
    ``ctrl+s``): such a key never votes, whatever character it carries."""
    *modifiers, _ = key.split("+")
    return bool(MODIFIERS.intersection(modifiers))


def describe(keys: list[LabelKey]) -> list[tuple[str, str]]:
    """(keys, label) for the help screen, e.g. ``("1 p", "perf")``."""
    grouped: dict[str, list[str]] = {}
    for k in keys:
        grouped.setdefault(k.label, []).append(k.key)
    return [(" ".join(v), f"vote {label}") for label, v in grouped.items()]
