"""The tables of ``curator stats --kind ir``: the IR corpus in ComPile's Table 1 shape.

Modules, text size, bitcode size and tokens, before and after structural-hash dedup,
by language and by license; then the input counts and the latest rejections.
"""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from curator.console import out
from curator.presentation.text import one_line, path_line

_COLUMNS = ("modules", "text_bytes", "bitcode_bytes", "tokens")


def human_bytes(count: int) -> str:
    """1,234 B / 12.3 KB / 4.5 MB / 6.7 GB (powers of 1000, like the paper's table)."""
    value = float(count)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{int(value):,} {unit}" if unit == "B" else f"{value:,.1f} {unit}"
        value /= 1000
    return f"{count} B"


def _cell(key: str, value: int) -> str:
    return human_bytes(value) if key.endswith("_bytes") else f"{value:,}"


def _size_table(title: str, group: str, rows: dict[str, dict[str, Any]], total: Any) -> Table:
    """One row before dedup and one after for each group: four number columns, not
    eight, so that no figure is cut to ``8,449…`` in an 80-column terminal."""
    table = Table(title=title, title_justify="left")
    table.add_column(group, overflow="fold")
    table.add_column("dedup")
    for key in _COLUMNS:
        table.add_column(key.replace("_bytes", "").replace("_", " "), justify="right", no_wrap=True)
    named = [(one_line(name, 60), sides) for name, sides in rows.items()]
    for index, (name, sides) in enumerate([*named, (Text("total", "bold"), total)]):
        table.add_row(name, "before", *(_cell(k, sides["before"][k]) for k in _COLUMNS))
        table.add_row(
            "",
            "after",
            *(_cell(k, sides["after"][k]) for k in _COLUMNS),
            end_section=index < len(named),
        )
    return table


def counts_table(counts: dict[str, Any]) -> Table:
    """Stored, duplicate, rejected and filtered inputs, with their reasons."""
    table = Table(title="IR inputs", title_justify="left")
    table.add_column("outcome")
    table.add_column("inputs", justify="right")
    for name in ("stored", "duplicates", "rejected", "filtered"):
        table.add_row(name, f"{counts.get(name, 0):,}")
        for reason, n in counts.get(f"{name}_by_reason", {}).items():
            table.add_row(Text.assemble(f"  {name}: ", one_line(reason, 60)), f"{n:,}")
    return table


def print_ir_stats(data: dict[str, Any]) -> None:
    """Print ``store.ir.ir_corpus_table``'s figures as tables."""
    total = data["total"]
    out.print(
        _size_table(
            "IR modules by language (before / after dedup)", "language", data["by_language"], total
        )
    )
    out.print(
        _size_table(
            "IR modules by license (before / after dedup)", "license", data["by_license"], total
        )
    )
    out.print(counts_table(data["counts"]))
    if data["rejections"]:
        table = Table(title="Latest rejections", title_justify="left")
        for name in ("source", "path", "reason", "message"):
            table.add_column(name, overflow="fold")
        for r in data["rejections"]:
            table.add_row(
                path_line(str(r["source"] or ""), 80),
                path_line(str(r["path"] or ""), 80),
                one_line(str(r["reason"] or ""), 80),
                one_line(str(r["message"] or ""), 80),
            )
        out.print(table)
