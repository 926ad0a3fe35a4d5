"""The IR benchmark's short form: it runs, and what it computes cross-checks the engine.

Full run: ``python tests/benchmarks/bench_ir.py`` (``make bench``). No timing is asserted.
"""

from __future__ import annotations

from tests.benchmarks import bench_ir


def test_ir_benchmark_quick_form() -> None:
    result = bench_ir.run(quick=True)
    rates = result["modules_per_s"]
    assert set(rates) == {"parse", "sha256", "structural", "ingest", "mine_ir"}
    assert all(rate > 0 for rate in rates.values())
    assert result["structural_vs_parse"] > 0
    # -O0 and -O0 -g of every file are one module to the structural hash, two to sha256
    assert result["debug_variants_matching"] == result["debug_variants"] == 11
    assert result["distinct_exact"] == result["modules"] == 22
    # 10 samples hold 7 distinct modules, plus the generated file
    assert result["distinct_structural"] == 8
    # the pipeline agrees with the hash: one stored module per distinct hash
    assert result["stored_by_mine_ir"] == 8
    assert result["duplicates_by_mine_ir"] == 14
