"""Kernels written the way portable code (hashcat) writes them: the ``__kernel``
qualifier behind a macro, and headers included through a macro that builds the path."""

from __future__ import annotations

from pathlib import Path

from engines.kernels.pipeline import mine_kernels
from engines.kernels.scrape import scrape_text, tree_resolver
from engines.kernels.tree import SourceTree
from store import open_store
from tests import raw_sql

VENDOR = """\
#ifndef VENDOR_H
#define VENDOR_H
#if defined IS_CUDA
#define KERNEL_FQ extern "C" __global__
#else
#define KERNEL_FQ __kernel
#endif
#define GLOBAL_AS __global
#endif
"""
KERNELS = """\
#include M2S(INCLUDE_PATH/vendor.h)
#define KQ KERNEL_FQ
#define NOT_A_QUALIFIER(x) kernel

float twice(float v) { return 2.0f * v; }

KERNEL_FQ void scale(GLOBAL_AS float *x) {
    const int i = get_global_id(0);
    x[i] = twice(x[i]) + 1.0f;
}

KQ void shift(GLOBAL_AS float *x, const float by) {
    x[get_global_id(0)] += by;
}

NOT_A_QUALIFIER(1) void helper(GLOBAL_AS float *x) { x[0] = 0.0f; }
"""


def _tree(root: Path) -> Path:
    (root / "OpenCL").mkdir(parents=True)
    (root / "OpenCL" / "vendor.h").write_text(VENDOR)
    (root / "OpenCL" / "m0_pure.cl").write_text(KERNELS)
    return root


def test_a_header_named_through_a_macro_is_inlined_from_the_tree(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    text = (root / "OpenCL" / "m0_pure.cl").read_text()
    tree = SourceTree.from_directory(root)
    scraped = scrape_text(
        text, "OpenCL/m0_pure.cl", root / "OpenCL" / "m0_pure.cl", root, tree_resolver(tree)
    )
    assert [c.name for c in scraped.candidates] == ["scale", "shift"]
    first = scraped.candidates[0]
    assert first.includes == ("OpenCL/vendor.h",)
    assert "#define KERNEL_FQ __kernel" in first.source
    assert "M2S(" not in first.source


def test_kernels_behind_a_qualifier_macro_are_mined_and_built(tmp_path: Path) -> None:
    # before: "no __kernel functions found", nothing stored
    root = _tree(tmp_path / "src")
    with open_store(tmp_path / "k.db") as store:
        [summary] = mine_kernels(store, [str(root)])
        rows = raw_sql.query(
            store, "SELECT kernel_name, filter_status, message FROM kernels ORDER BY kernel_name"
        )
    assert summary.failed is None
    assert [(r[0], r[1]) for r in rows] == [("scale", "accepted"), ("shift", "accepted")], [
        r[2] for r in rows
    ]
