"""Kernels as real code holds them, on real PoCL: headers in other folders, ``-D`` options
the host passes, names only the build system defines, named refusal reasons, and
payloads shaped for kernels whose integers are a stride or whose range is 2-D."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from engines.kernels.checker import KernelWorker, _equal, check_kernel
from engines.kernels.compile import rejection_filter
from engines.kernels.hostflags import scan_text
from engines.kernels.infer import _declared, classify_refusal
from engines.kernels.payload import (
    POLICIES,
    ArgSpec,
    geometry,
    int_value,
    make_payload,
    parameter_names,
    role,
)
from engines.kernels.pipeline import SourceContext
from engines.kernels.rewrite import rewrite
from engines.kernels.scrape import Candidate, decode_source, scrape_text
from engines.kernels.tree import SourceTree
from store import open_store
from store.kernel_records import KernelCheck
from store.kernels import get_kernel, kernel_reason_counts, save_checks
from store.migrations import MIGRATIONS


@pytest.fixture(scope="module")
def worker() -> Iterator[KernelWorker]:
    with KernelWorker() as w:
        yield w


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def scrape_in_tree(root: Path, rel: str) -> tuple[list[Candidate], SourceContext]:
    context = SourceContext(SourceTree.from_directory(root))
    resolver, _ = context.for_file(rel)
    text, _ = decode_source((root / rel).read_bytes())
    return scrape_text(text, rel, root / rel, root, resolver).candidates, context


# --- headers anywhere in the tree -----------------------------------------------------


def test_header_in_a_sibling_folder_is_found_and_the_kernel_accepted(
    tmp_path: Path, worker: KernelWorker
) -> None:
    root = write(
        tmp_path,
        {
            "app/kernels/scale.cl": '#include "scale_defs.h"\n'
            "__kernel void scale(__global REAL* a) {\n"
            "    int i = get_global_id(0);\n    a[i] = a[i] * FACTOR + 1.0f;\n}\n",
            "app/common/scale_defs.h": "#define FACTOR 3.0f\ntypedef float REAL;\n",
        },
    )
    # where it was: only the file's folder and the root are searched
    plain = scrape_text(
        (root / "app/kernels/scale.cl").read_text(), "scale.cl", root / "app/kernels/scale.cl", root
    ).candidates[0]
    assert '#include "scale_defs.h"' in plain.source
    (cand,), _ = scrape_in_tree(root, "app/kernels/scale.cl")
    assert "#define FACTOR 3.0f" in cand.source and cand.includes == ("app/common/scale_defs.h",)
    result = rejection_filter(worker, cand.source)
    assert result.accepted and result.assumptions == []


# --- the host's build options ---------------------------------------------------------


HOST = """
#include <CL/cl.h>
static const char* options = "-D FPTYPE=float -DN_GP=4 -DUSE_FMA";
void build(cl_program p, cl_device_id d, int block) {
    char more[64];
    sprintf(more, "-DBLOCK=%d", block);
    clBuildProgram(p, 1, &d, options, NULL, NULL);
}
"""


def test_host_defines_are_read_from_string_literals() -> None:
    defines, dirs = scan_text(HOST + '"-I ../include"', "src/main.c", build_file=False)
    found = {d.name: d.value for d in defines}
    assert found == {"FPTYPE": "float", "N_GP": "4", "USE_FMA": "1", "BLOCK": None}
    assert dirs == ["include"]
    make, _ = scan_text("CFLAGS += -DTILE=8 -O2\n", "src/Makefile", build_file=True)
    assert [(d.name, d.value) for d in make] == [("TILE", "8")]


def test_a_define_in_host_code_lets_the_kernel_build(tmp_path: Path, worker: KernelWorker) -> None:
    root = write(
        tmp_path,
        {
            "bench/main.c": HOST,
            "bench/kernel.cl": "__kernel void sum_gp(__global FPTYPE* out,\n"
            "                     __global const FPTYPE* in) {\n"
            "    int i = get_global_id(0);\n    FPTYPE s = 0;\n"
            "    for (int k = 0; k < N_GP; k++) s += in[i * N_GP + k];\n    out[i] = s;\n}\n",
        },
    )
    (cand,), context = scrape_in_tree(root, "bench/kernel.cl")
    _, flags = context.for_file("bench/kernel.cl")
    assert flags.files == ["bench/main.c"]
    result = rejection_filter(worker, cand.source, host=flags.defines)
    assert result.accepted
    assumed = {a.name: (a.line, a.origin) for a in result.assumptions}
    assert assumed == {
        "FPTYPE": ("#define FPTYPE float", "host"),
        "N_GP": ("#define N_GP 4", "host"),
    }
    # without the host's options: the shim's type and a guessed constant, each recorded
    blind = rejection_filter(worker, cand.source)
    assert blind.accepted
    assert {a.name: a.origin for a in blind.assumptions} == {"FPTYPE": "shim", "N_GP": "guess"}


# --- guesses for what is still missing --------------------------------------------------


def test_unknown_type_and_constant_are_guessed_and_recorded(worker: KernelWorker) -> None:
    source = (
        "__kernel void rot(__global T2* v, __global float* out) {\n"
        "    __local float tile[LSIZE];\n"
        "    int i = get_global_id(0);\n"
        "    tile[get_local_id(0) % LSIZE] = v[i].x;\n"
        "    barrier(CLK_LOCAL_MEM_FENCE);\n"
        "    out[i] = tile[get_local_id(0) % LSIZE] * v[i].y;\n}\n"
    )
    result = rejection_filter(worker, source)
    assert result.accepted, result.message
    assumed = {a.name: a.line for a in result.assumptions}
    assert assumed == {"T2": "typedef float2 T2;", "LSIZE": "#define LSIZE 16"}
    assert all(a.origin == "guess" for a in result.assumptions)
    assert result.source.startswith("typedef float2 T2;\n#define LSIZE 16\n")
    # the guessed kernel keeps its behaviour through the rewriter
    new = rewrite(result.source)
    before = check_kernel(worker, result.source, "rot", global_size=64, local_size=16)
    after = check_kernel(worker, new.source, new.kernel_names["rot"], global_size=64, local_size=16)
    assert before.verdict == after.verdict == "useful"
    assert all(_equal(a[1], b[1]) for a, b in zip(before.runs, after.runs, strict=True))


def test_a_called_function_or_a_field_is_never_guessed(worker: KernelWorker) -> None:
    called = rejection_filter(
        worker, "__kernel void k(__global float* a) { a[0] = mystery(a[1]); }\n"
    )
    assert not called.accepted and called.refusal == "missing-function"
    assert called.assumptions == []
    typo = rejection_filter(worker, "__kernel void k(__global float* a) { a[0] = 1.0f }\n")
    assert typo.refusal == "syntax"


def test_a_header_nowhere_in_the_tree_is_dropped_and_what_it_gave_guessed(
    tmp_path: Path, worker: KernelWorker
) -> None:
    root = write(
        tmp_path,
        {
            "only.cl": '#include "gone.h"\n__kernel void k(__global float* a) {\n'
            "    a[get_global_id(0)] *= WEIGHT;\n}\n"
        },
    )
    (cand,), _ = scrape_in_tree(root, "only.cl")
    result = rejection_filter(worker, cand.source)
    assert result.accepted
    assert [(a.name, a.origin) for a in result.assumptions] == [
        ("WEIGHT", "guess"),
        ("gone.h", "no-header"),
    ]


def test_refusals_fall_in_named_classes() -> None:
    cases = {
        "kernel.cl:1:10: fatal error: 'x.h' file not found": "missing-header",
        "kernel.cl:3:5: error: implicit declaration of function 'f' is invalid": "missing-function",
        "kernel.cl:2:1: error: unknown type name 'T'": "unknown-type",
        "kernel.cl:4:9: error: use of undeclared identifier 'N'": "undeclared-identifier",
        "kernel.cl:4:9: error: expected ';' after expression": "syntax",
        "kernel.cl:4:9: error: assigning to 'int' from incompatible type": "semantic",
        "compiler crash: runtime died while compiling (SIGSEGV)": "compiler-failure",
        "clang: kernel.cl:1:1: error: bad": "lowering",
    }
    for message, expected in cases.items():
        assert classify_refusal("compile-error", message) == expected, message
    called = "error: kernel.cl:2:9: use of undeclared identifier 'mystery'"
    assert classify_refusal("compile-error", called, "a[0] = mystery(a[1]);") == "missing-function"
    assert classify_refusal("too-few-instructions", "2 instructions") == "too-few-instructions"


# --- payloads for kernels whose integers are a stride or whose range is 2-D ---------------


STAGE = """
__kernel void compare_exchange(__global float* data, const int stride) {
    int i = get_global_id(0);
    if ((i / stride) % 2 == 0) {
        float a = data[i];
        float b = data[i + stride];
        data[i] = fmin(a, b);
        data[i + stride] = fmax(a, b);
    }
}
"""

TRANSPOSE = """
__kernel void transpose(__global float* out, __global const float* in,
                        const int width, const int height) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    out[x * height + y] = in[y * width + x] * 2.0f;
}
"""


def test_roles_and_ranges() -> None:
    shaped = POLICIES["shaped"]
    assert geometry(1024, 2) == (32, 32) and geometry(1024, 3) == (16, 8, 8)
    assert [role(n) for n in ("stride", "passOfStage", "width", "rows", "n", "offset")] == [
        "stride",
        "one",
        "x",
        "y",
        "n",
        "zero",
    ]
    assert int_value("width", shaped, (32, 32), 1024) == 32
    assert int_value("stride", shaped, (1024,), 1024) == 1
    assert int_value("width", POLICIES["clgen"], (1024,), 1024) == 1024
    assert int_value("n", POLICIES["small-padded"], (1024,), 1024) == 16


def test_roles_come_from_the_names_as_written_not_the_rewriters() -> None:
    written = "__kernel void k(__global float* a, const int width, int rows[2]) { }"
    assert parameter_names(written, "k") == ["a", "width", "rows"]
    specs = [ArgSpec("a", "global", "float*"), ArgSpec("h", "private", "int")]
    renamed = make_payload(specs, 64, 1, "shaped")  # "h" reads as a height: 1 in 1-D
    kept = make_payload(specs, 64, 1, "shaped", role_names=["a", "width"])
    assert int(renamed.values[1]) == 1 and int(kept.values[1]) == 64


ROWS = """
__kernel void row_sums(__global float* out, __global const float* in, const int n) {
    int i = get_global_id(0);
    float s = 0.0f;
    for (int k = 0; k < 4; k++) {
        s += in[i * n + k];
    }
    out[i] = s;
}
"""


@pytest.mark.parametrize(
    ("source", "name", "policy"),
    [
        (STAGE, "compare_exchange", "shaped"),
        (TRANSPOSE, "transpose", "shaped"),
        (ROWS, "row_sums", "small-padded"),
    ],
    ids=["stride-argument", "2-d-range", "reads-past-s"],
)
def test_clgens_payload_goes_out_of_bounds_and_a_shaped_one_is_useful(
    worker: KernelWorker, source: str, name: str, policy: str
) -> None:
    outcome = check_kernel(worker, source, name, global_size=64, local_size=8)
    assert outcome.verdict == "useful", outcome.details
    assert outcome.details["payload_policy"] == policy
    assert outcome.details["policies_tried"][0] == {"policy": "clgen", "verdict": "out-of-bounds"}
    # A and B share their scalars, their buffers differ, and the verdict is CLgen's own
    (a_in, a_out), (b_in, b_out), (a2_in, a2_out), _ = outcome.runs
    assert _equal(a_in, a2_in) and not _equal(a_in, b_in)
    assert _equal(a_out, a2_out) and not _equal(a_out, b_out)


# --- the out-of-bounds verdict in an older store ---------------------------------------------


def test_a_store_from_before_the_verdict_keeps_its_kernels(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    (at,) = [
        i for i, m in enumerate(MIGRATIONS) if isinstance(m[2], str) and "out-of-bounds" in m[2]
    ]
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name TEXT, applied_at TEXT)"
    )
    for version, name, sql in MIGRATIONS[:at]:
        conn.executescript(sql)
        conn.execute("INSERT INTO schema_version VALUES (?, ?, 'then')", (version, name))
    conn.execute(
        "INSERT INTO items (id, kind, key, source, language, dedup_hash, provenance, created_at)"
        " VALUES (1, 'kernel', 'k', 's', 'opencl', 'h', '{}', 'then')"
    )
    conn.execute(
        "INSERT INTO kernels (item_id, source_file, kernel_name, origin, original_source,"
        " normalized_hash, filter_status, verdict) VALUES (1, 'f.cl', 'k', 'cl', 'src', 'h',"
        " 'accepted', 'crash')"
    )
    conn.commit()
    conn.close()
    with open_store(path) as store:
        kernel = get_kernel(store, 1)
        assert kernel is not None and kernel.verdict == "crash" and kernel.prelude == ""
        save_checks(store, [KernelCheck(1, "out-of-bounds", {"payload_policy": "clgen"}, {})])
        assert kernel_reason_counts(store)["verdicts_by_policy"] == {"out-of-bounds / clgen": 1}


def test_the_rewriter_keeps_hex_literals_whole() -> None:
    out = rewrite("__kernel void k(__global int* a) { a[0] = (a[1] & 0x1) + 0x10u; }\n")
    assert "& 0x1)" in out.source and "0x10u" in out.source


def test_a_product_is_not_taken_for_a_declaration() -> None:
    assert not _declared("tile[LOCAL_X * LOCAL_Y];", "LOCAL_Y")
    assert _declared("void f(float * y) {}", "y") and _declared("int count;", "count")
    assert _declared("s.width = 1;", "width") and _declared("x = helper(1);", "helper")
