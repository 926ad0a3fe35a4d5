"""The kernel benchmark's short form: it runs, and both ways of checking agree."""

from __future__ import annotations

from tests.benchmarks import bench_kernels


def test_kernel_benchmark_quick_form_agrees_with_its_baselines() -> None:
    result = bench_kernels.run(4)
    verdicts = result["verdicts"]
    assert isinstance(verdicts, dict)
    # a reused worker and a fresh process per kernel judge every kernel alike
    assert verdicts["reused-worker"] == verdicts["fresh-process"]
    assert verdicts["reused-worker"] == {"useful": 3, "no-output": 1}
    # the filter accepts exactly what the plain build loop can build
    assert result["accepted_by_filter"] == result["built_by_plain_loop"] == 4
    rates = [*result["checked_per_s"].values(), *result["filtered_per_s"].values()]  # type: ignore[union-attr]
    assert all(rate > 0 for rate in rates)
