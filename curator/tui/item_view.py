"""Everything one screen shows about one item, gathered from the store in one call.

The builders read a handful of indexed rows; nothing here knows about widgets, so the
same view feeds the label screen, the review screen and the item detail screen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from curator.presentation.format import day
from store import Store
from store.ir import ir_module
from store.item_views import commit_row, item_row, latest_item_predictions
from store.kernels import kernel_row
from store.votes import LiveVote


@dataclass(frozen=True)
class CodePane:
    """A block of source to show: its title, text and the lexer that colours it."""

    title: str
    text: str
    lexer: str


@dataclass(frozen=True)
class ItemView:
    item_id: int
    kind: str
    key: str
    source: str
    title: str
    message: str
    meta: list[tuple[str, str]]
    panes: list[CodePane]
    predictions: list[dict[str, Any]] = field(default_factory=list)
    facts: list[tuple[str, str]] = field(default_factory=list)
    histogram: dict[str, int] = field(default_factory=dict)
    votes: list[LiveVote] = field(default_factory=list)
    blind: bool = False
    """Shown under a blind set's rules: no machine predictions, others' votes hidden."""

    def keyword_spans(self) -> list[tuple[int, int]]:
        """Spans of the message that the keyword labeler matched, when it ran."""
        spans: list[tuple[int, int]] = []
        for p in self.predictions:
            if not str(p["labeler"]).startswith("keyword@"):
                continue
            for m in p["details"].get("matches", []):
                start, end = m.get("start"), m.get("end")
                if (
                    isinstance(start, int)
                    and isinstance(end, int)
                    and 0 <= start < end <= len(self.message)
                ):
                    spans.append((start, end))
        return spans


def build_item_view(store: Store, item_id: int, with_predictions: bool = True) -> ItemView | None:
    """The view of one item, or None when no such item exists."""
    item = item_row(store, item_id)
    if item is None:
        return None
    kind = item["kind"]
    predictions = latest_item_predictions(store, item_id) if with_predictions else []
    common = {
        "item_id": item_id,
        "kind": kind,
        "key": str(item["key"]),
        "source": str(item["source"] or ""),
        "predictions": predictions,
    }
    if kind == "commit":
        return _commit_view(store, item, common)
    if kind == "kernel":
        return _kernel_view(store, item, common)
    return _ir_view(store, item, common)


def _commit_view(store: Store, item: dict[str, Any], common: dict[str, Any]) -> ItemView:
    commit = commit_row(store, item["id"]) or {}
    message = str(commit.get("message") or "")
    functions = commit.get("functions") or []
    meta = [
        ("repo", str(commit.get("repo") or item["source"] or "")),
        ("sha", str(commit.get("sha") or item["key"])[:12]),
        ("date", day(commit.get("author_date"))),
        ("lang", str(item.get("language") or "")),
        ("file", str(commit.get("file") or item.get("path") or "")),
    ]
    if functions:
        meta.append(("function", ", ".join(str(f) for f in functions)))
    if commit.get("added") or commit.get("deleted"):
        meta.append(("+/-", f"+{commit.get('added', 0)} -{commit.get('deleted', 0)}"))
    stars = item["provenance"].get("stars")
    if stars is not None:
        meta.append(("stars", str(stars)))
    return ItemView(
        **common,
        title=message.splitlines()[0] if message else str(item["key"]),
        message=message,
        meta=[(k, v) for k, v in meta if v],
        panes=[CodePane("diff", str(commit.get("diff") or ""), "diff")],
    )


def _kernel_view(store: Store, item: dict[str, Any], common: dict[str, Any]) -> ItemView:
    kernel = kernel_row(store, item["id"]) or {}
    features = kernel.get("features") or {}
    panes = [CodePane("original", str(kernel.get("original_source") or ""), "c")]
    if kernel.get("normalized_source"):
        panes.append(CodePane("normalized", str(kernel["normalized_source"]), "c"))
    facts = [
        ("filter", str(kernel.get("filter_status") or "")),
        ("verdict", str(kernel.get("verdict") or "unchecked")),
        ("instructions", str(kernel.get("instructions") or "")),
        ("shim", ", ".join(kernel.get("shim_names") or []) or "not needed"),
    ]
    if kernel.get("message"):
        facts.append(("compiler", str(kernel["message"])))
    if features:
        facts.append(("features:", ""))
        facts.extend((str(k), _number(v)) for k, v in sorted(features.items()))
    return ItemView(
        **common,
        title=f"{kernel.get('kernel_name', item['key'])} ({kernel.get('source_file', '')})",
        message="",
        meta=[
            ("kernel", str(kernel.get("kernel_name") or "")),
            ("file", str(kernel.get("source_file") or item.get("path") or "")),
            ("origin", str(kernel.get("origin") or "")),
            ("verdict", str(kernel.get("verdict") or "unchecked")),
        ],
        panes=panes,
        facts=facts,
    )


def _ir_view(store: Store, item: dict[str, Any], common: dict[str, Any]) -> ItemView:
    module = ir_module(store, item["id"]) or {}
    provenance = module.get("provenance") or {}
    facts = [
        ("functions", str(module.get("functions", ""))),
        ("declarations", str(module.get("declarations", ""))),
        ("globals", str(module.get("globals", ""))),
        ("basic blocks", str(module.get("basic_blocks", ""))),
        ("instructions", str(module.get("instructions", ""))),
        ("tokens", str(module.get("tokens", ""))),
        ("text bytes", str(module.get("text_bytes", ""))),
        ("bitcode bytes", str(module.get("bitcode_bytes", ""))),
        ("hash", str(module.get("structural_hash", ""))[:16]),
        ("compile", str(module.get("compile_command") or "")),
    ]
    if provenance:
        facts.append(("provenance:", ""))
        facts.extend((str(k), _number(v)) for k, v in sorted(provenance.items()))
    duplicates = module.get("duplicates", [])
    if duplicates:
        facts.append(("duplicates:", ""))
        facts.extend(("", f"{d['source']} {d['path']}") for d in duplicates)
    return ItemView(
        **common,
        title=str(item.get("path") or item["key"]),
        message="",
        meta=[
            ("project", str(module.get("project") or "")),
            ("path", str(item.get("path") or "")),
            ("lang", str(item.get("language") or "")),
            ("license", str(module.get("license") or "")),
            ("format", str(module.get("input_format") or "")),
        ],
        panes=[CodePane("IR", str(module.get("text") or ""), "llvm")],
        facts=facts,
        histogram={str(k): int(v) for k, v in (module.get("opcodes") or {}).items()},
    )


def _number(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3g}"
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)
