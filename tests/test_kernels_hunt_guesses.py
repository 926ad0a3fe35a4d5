"""Kernels as mined from real trees on real PoCL: a guessed type used as a vector on a
``__global`` pointer, and a kernel an ``#if`` leaves out next to a helper that builds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engines.kernels.checker import KernelWorker
from engines.kernels.compile import rejection_filter
from engines.kernels.pipeline import mine_kernels
from engines.kernels.scrape import is_candidate_file, scrape_text
from store import open_store
from tests import raw_sql


@pytest.fixture(scope="module")
def worker() -> Iterator[KernelWorker]:
    with KernelWorker() as w:
        yield w


def test_a_guessed_type_read_as_a_vector_through_a_pointer_widens(worker: KernelWorker) -> None:
    # clang writes the type with its address space ('const __global Pix'); two errors
    # name it in one round, which must move the guess one width, not two (float2 has no .z)
    source = (
        "__kernel void mix(__global float* o, __global const Pix* in) {\n"
        "    int i = get_global_id(0);\n"
        "    o[i] = in[i].x * in[i].y;\n"
        "    o[i] += in[i].z;\n"
        "}\n"
    )
    result = rejection_filter(worker, source)
    assert result.accepted, result.message
    assert [(a.name, a.line, a.origin) for a in result.assumptions] == [
        ("Pix", "typedef float4 Pix;", "guess")
    ]


HELPER_AND_VARIANT = """\
int flat(int i, int j, int stride) {
    return i + j * stride;
}

#if RANK == 3
__kernel void fill(__global float* out, int stride) {
    int i = get_global_id(0);
    out[flat(i, 1, stride)] = 2.0f * out[i];
}
#endif
"""


@pytest.mark.parametrize("minimum", [3, 0])
def test_a_kernel_left_out_by_if_is_refused_though_a_helper_builds(
    tmp_path: Path, minimum: int
) -> None:
    # accepted with the helper's 5 instructions, it was then checked as a "crash": "no
    # payload rule: expected one kernel, the program has 0"
    (tmp_path / "conv.cl").write_text(HELPER_AND_VARIANT)
    with open_store(tmp_path / "k.db") as store:
        mine_kernels(store, [str(tmp_path / "conv.cl")], minimum)
        rows = raw_sql.query(
            store, "SELECT filter_status, verdict, instructions, message FROM kernels"
        )
    assert [tuple(r) for r in rows] == [
        (
            "rejected",
            "too-few-instructions",
            0,
            f"0 instructions in the optimised IR; the minimum is {minimum}"
            " (no function in the build: an #if or #ifdef leaves the kernel out)",
        )
    ]


def test_a_kernel_whose_brace_never_closes_is_skipped_even_when_the_file_ends_in_brace(
    tmp_path: Path,
) -> None:
    # the warning said "skipped", yet a file ending in the '}' of an inner block stored
    # the cut kernel (refused, "syntax") with the rest of the file as its body
    cl = tmp_path / "cut.cl"
    cl.write_text(
        "__kernel void cut(__global float* a) {\n"
        "    if (a[0] > 0.0f) {\n"
        "        a[0] = 1.0f;\n"
        "    }\n"
        "__kernel void next(__global float* b) { b[get_global_id(0)] *= 2.0f; }\n"
    )
    result = scrape_text(cl.read_text(), "cut.cl", cl, tmp_path)
    assert result.candidates == []
    assert result.warnings == ["cut.cl:1: kernel cut skipped: its '{' is never closed"]


TWO_HEADS = """\
#if RELAX == 1
  __kernel
#else
  __kernel __attribute__((reqd_work_group_size(16, 1, 1)))
#endif
void first(__global float* a) {
    a[get_global_id(0)] *= 3.0f;
}

#ifdef WIDE
#if RELAX == 1
  __kernel
#else
  __kernel __attribute__((reqd_work_group_size(16, 1, 1)))
#endif
void second(__global float* b) {
    b[get_global_id(0)] += 1.0f;
}
#endif
"""


def _directives(source: str) -> list[str]:
    return [line.strip() for line in source.splitlines() if line.lstrip().startswith("#")]


def test_a_kernel_head_under_if_else_keeps_its_conditionals_balanced(
    tmp_path: Path, worker: KernelWorker
) -> None:
    # each kernel took the other's '#if' line without its '#else'/'#endif' (they sit in
    # the other kernel's head): "unterminated conditional directive" for every kernel
    cl = tmp_path / "heads.cl"
    cl.write_text(TWO_HEADS)
    result = scrape_text(cl.read_text(), "heads.cl", cl, tmp_path)
    by_name = {c.name: c.source for c in result.candidates}
    assert _directives(by_name["first"]) == [
        "#if RELAX == 1",
        "#else",
        "#endif",
        "#ifdef WIDE",
        "#endif",
    ]
    assert _directives(by_name["second"]) == [
        "#ifdef WIDE",
        "#if RELAX == 1",
        "#else",
        "#endif",
        "#endif",
    ]
    assert rejection_filter(worker, by_name["first"]).accepted


def test_a_dot_opencl_file_wrapped_in_a_raw_string_is_device_code(tmp_path: Path) -> None:
    # such files (for a host to #include into a string) were not read at all: no kernel,
    # no warning
    wrapped = tmp_path / "scale.opencl"
    wrapped.write_text(
        "// for #include into a C++ string\n"
        'R"(\n'
        "__kernel void scale(__global float* a) {\n"
        "    a[get_global_id(0)] *= 2.0f;\n"
        "}\n"
        ')"\n'
    )
    plain = tmp_path / "plain.opencl"
    plain.write_text("__kernel void twice(__global int* a) { a[get_global_id(0)] <<= 1; }\n")
    assert is_candidate_file(wrapped)
    got = scrape_text(wrapped.read_text(), "scale.opencl", wrapped, tmp_path)
    assert [(c.name, c.line, c.origin) for c in got.candidates] == [("scale", 3, "cl")]
    assert 'R"' not in got.candidates[0].source and ')"' not in got.candidates[0].source
    got = scrape_text(plain.read_text(), "plain.opencl", plain, tmp_path)
    assert [c.name for c in got.candidates] == ["twice"]


@pytest.mark.timeout(60)
def test_looking_for_a_raw_string_does_not_backtrack_over_long_blanks(tmp_path: Path) -> None:
    cl = tmp_path / "indented.cl"
    cl.write_text(
        " " * 4000 + "\n" + " " * 64 + "__kernel void k(__global float* a) { a[0] *= 2.0f; }\n"
    )
    got = scrape_text(cl.read_text(), "indented.cl", cl, tmp_path)
    assert [c.name for c in got.candidates] == ["k"]
