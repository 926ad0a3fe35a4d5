"""Regressions found running the IR and kernel engines on real C/C++ trees and hostile
inputs: each test builds the smallest case of what a real project or a stray file did."""

from __future__ import annotations

import contextlib
import json
import math
import os
import threading
from pathlib import Path

import pytest

from curator.presentation.ir_tables import _cell
from engines.ir.ingest import IRReadError, load_module
from engines.ir.licenses import detect_project_license
from engines.ir.pipeline import SilentReporter, mine_ir
from engines.ir.provenance import ProjectFinder
from engines.kernels.compile import clang_path, run_clang
from engines.kernels.infer import classify_refusal
from engines.kernels.payload import ArgSpec, UnsupportedArgument, make_payload
from engines.kernels.pipeline import CheckSettings, mine_kernels
from engines.reporting import SilentReporter as KernelReporter
from store import open_store
from tests import raw_sql
from tests.ir_samples import LICENSE_TEXTS, ROOT

KERNEL_SAMPLES = ROOT / "sample_data" / "kernels"

GOOD_IR = "define i32 @sq(i32 %x) {\n  %r = mul i32 %x, %x\n  ret i32 %r\n}\n"


@pytest.mark.parametrize(
    ("data", "where"),
    [
        (b"\x00\x01\x02", "line 1, column 1"),
        (GOOD_IR.encode() + b"; tail\n\x00define i32 @g() {\n  ret i32 0\n}\n", "line 6, column 1"),
        (b"; a\n; b\x00c\n", "line 2, column 4"),
    ],
)
def test_a_nul_byte_is_not_text_with_its_line(data: bytes, where: str) -> None:
    with pytest.raises(IRReadError) as info:
        load_module(data, "ll")
    assert info.value.reason == "not-text"
    assert info.value.message.startswith(where + ": a NUL byte")


def test_a_binary_file_named_ll_is_rejected_not_stored_as_an_empty_module(
    tmp_path: Path,
) -> None:
    (tmp_path / "binary.ll").write_bytes(b"\x00\x01\x02")
    (tmp_path / "good.ll").write_text(GOOD_IR)
    reporter = SilentReporter()
    with open_store(tmp_path / "c.db") as store:
        summary = mine_ir(store, [tmp_path], reporter=reporter)
        assert (summary.stored, dict(summary.rejected)) == (1, {"not-text": 1})
        assert raw_sql.scalar(store, "SELECT COUNT(*) FROM ir_modules") == 1
    assert [p for p in reporter.problems if "binary.ll: not-text: line 1, column 1" in p]


def test_a_blank_license_file_does_not_make_its_folder_a_project(tmp_path: Path) -> None:
    # facebook/zstd: LICENSE (BSD) at the top, an empty build/LICENSE below it
    (tmp_path / "LICENSE").write_text((LICENSE_TEXTS / "spdx-BSD-3-Clause.txt").read_text())
    build = tmp_path / "build" / "single_file_libs"
    build.mkdir(parents=True)
    (tmp_path / "build" / "LICENSE").write_bytes(b"")
    (tmp_path / "build" / "LICENCE.txt").write_text("  \n\n")
    unit = build / "roundtrip.c"
    unit.write_text("int f(void) { return 1; }\n")
    project = ProjectFinder().project_of(unit, tmp_path)
    assert project.root == tmp_path
    assert (project.license, project.license_files) == ("BSD-3-Clause", ("LICENSE",))
    assert detect_project_license(tmp_path / "build") == ("unknown", [])


@pytest.mark.parametrize("value", ["nan", "NaN"])
def test_check_kernels_refuses_a_timeout_that_is_not_a_number(  # type: ignore[no-untyped-def]
    cli, value: str
) -> None:
    mined = cli("mine", "kernels", str(KERNEL_SAMPLES / "saxpy.cl"))
    assert mined.exit_code == 0, mined.output
    checked = cli("check", "kernels", "--unchecked", "--timeout", value)
    assert checked.exit_code == 2
    assert "--timeout" in checked.output and "number of seconds" in checked.output
    with open_store(Path(os.environ["CURATOR_DB"])) as store:
        # NaN reached the worker: saxpy was called a timeout, its details invalid JSON
        assert raw_sql.scalar(store, "SELECT COUNT(*) FROM kernels WHERE verdict IS NOT NULL") == 0


@pytest.mark.parametrize("timeout", [math.nan, math.inf, 0.0, -1.0])
def test_check_settings_need_a_positive_finite_timeout(timeout: float) -> None:
    with pytest.raises(ValueError, match="positive number of seconds"):
        CheckSettings(timeout=timeout)


def test_ir_stats_fit_80_columns_without_cutting_a_figure(  # type: ignore[no-untyped-def]
    cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cli("mine", "ir", "--build", str(ROOT / "sample_data" / "ir")).exit_code == 0
    data = json.loads(cli("stats", "--kind", "ir", "--json").stdout)
    monkeypatch.setenv("COLUMNS", "80")
    shown = cli("stats", "--kind", "ir").stdout
    assert max(len(line) for line in shown.splitlines()) <= 80
    assert "…" not in shown.split("IR inputs")[0]  # eight columns once cut "8,449…"
    for table in ("by_language", "by_license"):
        for sides in [*data[table].values(), data["total"]]:
            for side in ("before", "after"):
                for key in ("modules", "text_bytes", "bitcode_bytes", "tokens"):
                    assert _cell(key, sides[side][key]) in shown


def test_a_clang_that_runs_out_of_time_is_a_refusal_not_an_exception() -> None:
    # subprocess.TimeoutExpired used to escape run_clang and end `mine kernels` for
    # every source with "unexpected error"
    source = (KERNEL_SAMPLES / "saxpy.cl").read_text()
    argv = [clang_path(), "-x", "cl", "-cl-std=CL1.2", "-O1", "-S", "-emit-llvm", "-o", "-", "-"]
    proc = run_clang(argv, source, timeout=0.001)
    assert proc.returncode != 0 and proc.stdout == ""
    assert "compiler timeout: clang gave no result within 0.001 s" in proc.stderr
    assert classify_refusal("compile-error", "clang: " + proc.stderr, source) == (
        "compiler-failure"
    )
    assert run_clang(argv, source).returncode == 0


def test_a_fifo_named_like_ir_or_source_is_refused_not_waited_on(tmp_path: Path) -> None:
    ir, src = tmp_path / "ir", tmp_path / "src"
    ir.mkdir()
    src.mkdir()
    (ir / "good.ll").write_text(GOOD_IR)
    (src / "good.c").write_text("int f(int x) { return x * 2; }\n")
    fifos = [ir / "pipe.ll", src / "pipe.c"]
    for fifo in fifos:
        os.mkfifo(fifo)
    done = threading.Event()

    def unblock() -> None:  # before the fix the run waited for a writer: give it one
        while not done.wait(0.5):
            for fifo in fifos:
                with contextlib.suppress(OSError):
                    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))

    threading.Thread(target=unblock, daemon=True).start()
    reporter = SilentReporter()
    try:
        with open_store(tmp_path / "f.db") as store:
            summary = mine_ir(store, [ir], build=src, reporter=reporter)
    finally:
        done.set()
    assert (summary.stored, dict(summary.rejected)) == (2, {"unreadable": 2})
    assert sorted(p.rsplit("/", 1)[-1] for p in reporter.problems) == [
        "pipe.c: unreadable: not a regular file",
        "pipe.ll: unreadable: not a regular file",
    ]


def test_an_argument_without_a_payload_rule_is_named_as_written_too() -> None:
    # the normalised kernel runs, so the runtime reports `a`; the user wrote `pts`
    specs = [ArgSpec("a", "global", "Pt*"), ArgSpec("b", "global", "float*")]
    with pytest.raises(UnsupportedArgument, match=r"^argument a \(pts as written\): unsupported"):
        make_payload(specs, 64, 1, role_names=["pts", "d"])
    with pytest.raises(UnsupportedArgument, match=r"^argument a: unsupported type Pt\*$"):
        make_payload(specs, 64, 1)


def test_mining_kernels_in_a_folder_with_nothing_to_read_says_so(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "README.md").write_text("__kernel void k() {}\n")
    reporter = KernelReporter()
    with open_store(tmp_path / "k.db") as store:
        summaries = mine_kernels(
            store, [str(tmp_path / "empty"), str(tmp_path / "docs")], 3, reporter
        )
    assert [s.files for s in summaries] == [0, 0]
    assert [p.split(": ", 1)[1] for p in reporter.problems] == [
        "no OpenCL (.cl .ocl .clh .opencl) or C/C++ file to read"
    ] * 2


def test_a_byte_order_mark_is_named_in_the_parse_error() -> None:
    with pytest.raises(IRReadError) as info:
        load_module(b"\xef\xbb\xbf" + GOOD_IR.encode(), "ll")
    assert info.value.reason == "parse-error"
    assert info.value.message.startswith("line 1, column 1: ")
    assert info.value.message.endswith("byte-order mark, which LLVM does not read)")


VARIANTS = """#ifdef USE_DOUBLE
__kernel void axpy(__global double* y, __global const double* x, const double a) {
    int i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}
#else
__kernel void axpy(__global float* y, __global const float* x, const float a) {
    int i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}
#endif
"""


def test_a_kernel_left_out_by_ifdef_is_refused_saying_so(tmp_path: Path) -> None:
    (tmp_path / "variants.cl").write_text(VARIANTS)
    with open_store(tmp_path / "k.db") as store:
        mine_kernels(store, [str(tmp_path / "variants.cl")], 3, KernelReporter())
        rows = raw_sql.query(
            store, "SELECT filter_status, verdict, message FROM kernels ORDER BY item_id"
        )
    assert [(r[0], r[1]) for r in rows] == [
        ("rejected", "too-few-instructions"),
        ("accepted", None),
    ]
    assert rows[0][2] == (
        "0 instructions in the optimised IR; the minimum is 3"
        " (no function in the build: an #if or #ifdef leaves the kernel out)"
    )


@pytest.mark.parametrize(
    ("option", "value"), [("--max-mb", "nan"), ("--max-mb", "inf"), ("--jobs", "1000")]
)
def test_mine_ir_refuses_sizes_and_jobs_out_of_range(cli, option: str, value: str) -> None:  # type: ignore[no-untyped-def]
    folder = ROOT / "sample_data" / "ir" / "mathlib" / "prebuilt"
    result = cli("mine", "ir", str(folder), option, value)
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error:") and option in result.output
    assert len(result.output.strip().splitlines()) == 1
