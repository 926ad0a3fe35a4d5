"""What an export counts while it writes: records per kind, label, language, split,
license and repository; the manifest's counts and the datasheet's figures come from it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from curator.releases.splits import SplitSpec

UNLABELED = "unlabeled"
UNKNOWN = "unknown"
WHOLE = "all"


def _sorted(counter: Counter[str]) -> dict[str, int]:
    return {k: counter[k] for k in sorted(counter)}


@dataclass
class ReleaseFacts:
    version: str
    filters: dict[str, Any]
    split: SplitSpec | None = None
    by_kind: Counter[str] = field(default_factory=Counter)
    by_label: dict[str, Counter[str]] = field(default_factory=dict)
    by_language: dict[str, Counter[str]] = field(default_factory=dict)
    by_split: dict[str, Counter[str]] = field(default_factory=dict)
    by_source: dict[str, Counter[str]] = field(default_factory=dict)
    by_license: dict[str, Counter[str]] = field(default_factory=dict)
    by_label_source: dict[str, Counter[str]] = field(default_factory=dict)
    source_parts: dict[str, dict[str, str]] = field(default_factory=dict)

    def start_kind(self, kind: str) -> None:
        """Make a kind appear in every count even when it has no records."""
        self.by_kind[kind] += 0
        for table in (
            self.by_label,
            self.by_language,
            self.by_split,
            self.by_source,
            self.by_license,
            self.by_label_source,
        ):
            table.setdefault(kind, Counter())

    def count(self, record: dict[str, Any]) -> None:
        kind = record["kind"]
        self.by_kind[kind] += 1
        self.by_label[kind][record["label"] or UNLABELED] += 1
        self.by_language[kind][record["language"] or UNKNOWN] += 1
        self.by_split[kind][record["split"] or WHOLE] += 1
        self.by_source[kind][record["source"]] += 1
        self.by_label_source[kind][record["label_source"] or UNLABELED] += 1
        if "license" in record:
            self.by_license[kind][record["license"]] += 1

    @property
    def total(self) -> int:
        return sum(self.by_kind.values())

    def counts(self) -> dict[str, Any]:
        """The manifest's ``counts``: totals per kind and per kind x label/language/split."""
        return {
            "records": self.total,
            "by_kind": _sorted(self.by_kind),
            "by_label": {k: _sorted(v) for k, v in sorted(self.by_label.items())},
            "by_language": {k: _sorted(v) for k, v in sorted(self.by_language.items())},
            "by_split": {k: _sorted(v) for k, v in sorted(self.by_split.items())},
        }
