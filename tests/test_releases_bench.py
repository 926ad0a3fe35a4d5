"""The release benchmark's short form: it runs, reports rates and a ratio, and what it
exported validates and counts every record (no timing is asserted)."""

from __future__ import annotations

from tests.benchmarks import bench_release


def test_release_benchmark_quick_form_reports_a_ratio() -> None:
    result = bench_release.run(1_500)
    assert result["records"] == 1_500
    rates = result["records_per_s"]
    assert set(rates) == {"curator", "naive", "validate"} and all(r > 0 for r in rates.values())
    assert result["ratio_vs_naive"] > 0 and result["release_bytes"] > 1_500 * 100
