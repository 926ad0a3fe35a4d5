# The two commands a new user needs: `make demo` and `make test`.
.PHONY: setup demo test lint bench

setup:
	@bash scripts/setup.sh

demo: setup
	@bash scripts/demo.sh

test: setup
	.venv/bin/python -m pytest -q -n auto --maxprocesses 4

lint: setup
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .

bench: setup
	.venv/bin/python tests/benchmarks/bench_mining.py
	.venv/bin/python tests/benchmarks/bench_cluster.py
	.venv/bin/python tests/benchmarks/bench_keyword.py
	.venv/bin/python tests/benchmarks/bench_kernels.py
	.venv/bin/python tests/benchmarks/bench_ir.py
	.venv/bin/python tests/benchmarks/bench_tui.py
	.venv/bin/python tests/benchmarks/bench_search.py
	.venv/bin/python tests/benchmarks/bench_predict_store.py
	.venv/bin/python tests/benchmarks/bench_active_learning.py
	.venv/bin/python tests/benchmarks/bench_teacher.py
	.venv/bin/python tests/benchmarks/bench_heuristics.py
	CURATOR_HOSTILE_EXAMPLES=500 .venv/bin/python -m pytest -q tests/test_hostile_input.py tests/test_releases_tamper.py
	.venv/bin/python tests/benchmarks/bench_release.py
	.venv/bin/python tests/benchmarks/bench_store_scale.py
	.venv/bin/python tests/benchmarks/bench_student.py
	.venv/bin/python tests/benchmarks/accuracy_perf_messages.py
