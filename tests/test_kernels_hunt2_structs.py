"""A struct the host defines for its kernels (ArrayFire's ``KParam``, prepended to every
kernel it builds): found in the tree rather than guessed as a float, laid out for a
payload when passed by value, and, when found nowhere, named rather than guessed."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from engines.kernels.checker import KernelWorker, check_kernel
from engines.kernels.compile import clang_path, measure
from engines.kernels.ctext import blank_comments_and_strings
from engines.kernels.payload import ArgSpec, UnsupportedArgument, make_payload
from engines.kernels.pipeline import CheckSettings, check_kernels, mine_kernels
from engines.kernels.rewrite import rewrite
from engines.kernels.structs import StructTable
from engines.kernels.typesearch import _definitions, struct_use
from engines.reporting import SilentReporter
from store import open_store
from store.kernels import unchecked_kernels
from tests import raw_sql

# The host prepends this to every kernel; its methods are for the host only.
PARAMS_HEADER = """\
#ifndef PARAMS_H
#define PARAMS_H
#ifndef __OPENCL_VERSION__
#include <host/defs.h>
#endif
// the shape of the data in a buffer
typedef struct Params_t {
    dim_t dims[4];
    dim_t strides[4];
    dim_t offset;
#ifndef __OPENCL_VERSION__
    dim_t *dims_ptr() { return dims; }
#endif
} Params;
#endif
"""
DEFS = """\
#pragma once
#ifdef WIDE
    typedef long long dim_t;
#else
    typedef long long dim_t;
#endif
"""
SCALE_KERNEL = """\
kernel void scale(global float *out, const Params oInfo, global const float *in,
                  const Params iInfo, float factor) {
    const int x = get_global_id(0);
    if (x < oInfo.dims[0]) {
        out[oInfo.offset + x * oInfo.strides[0]] = factor * in[iInfo.offset + x];
    }
}
"""


@pytest.fixture(scope="module")
def worker() -> Iterator[KernelWorker]:
    with KernelWorker() as w:
        yield w


def _tree(root: Path, with_defs: bool) -> Path:
    (root / "backend" / "kernel").mkdir(parents=True)
    (root / "backend" / "kernel" / "params.hpp").write_text(PARAMS_HEADER)
    (root / "backend" / "kernel" / "scale.cl").write_text(SCALE_KERNEL)
    if with_defs:
        (root / "include" / "host").mkdir(parents=True)
        (root / "include" / "host" / "defs.h").write_text(DEFS)
    return root


@pytest.mark.parametrize(
    ("with_defs", "dim_t"),
    [(True, ("typedef long dim_t;", "tree")), (False, ("typedef int dim_t;", "guess"))],
)
def test_a_struct_the_host_prepends_is_found_in_the_tree_and_checked_by_value(
    tmp_path: Path, worker: KernelWorker, with_defs: bool, dim_t: tuple[str, str]
) -> None:
    # before: guessed 'typedef float4 Params;', refused ("illegal vector component name")
    root = _tree(tmp_path / "src", with_defs)
    with open_store(tmp_path / "k.db") as store:
        reporter = SilentReporter()
        mine_kernels(store, [str(root)], reporter=reporter, worker=worker)
        [row] = raw_sql.query(
            store,
            "SELECT k.filter_status, k.message, i.provenance FROM kernels k"
            " JOIN items i ON i.id = k.item_id",
        )
        assert row[0] == "accepted", row[1]
        assumed = json.loads(row[2])["assumed"]
        params = next(a for a in assumed if a["name"] == "Params")
        assert params["origin"] == "tree"
        assert params["file"] == "backend/kernel/params.hpp"
        assert params["line"].startswith("typedef struct Params_t {")
        found = next(a for a in assumed if a["name"] == "dim_t")
        assert (found["line"], found["origin"]) == dim_t
        # the alias comes before the struct that needs it
        assert assumed.index(found) < assumed.index(params)
        [kernel] = unchecked_kernels(store)
        [checked] = check_kernels(store, [kernel], CheckSettings(timeout=5.0), worker=worker)
    assert checked.verdict == "useful", checked.details
    scalars = checked.details["scalars"]
    struct_values = [v for v in scalars.values() if isinstance(v, dict)]
    assert (
        struct_values
        == [{"dims": [1024, 1, 1, 1], "strides": [1, 1024, 1024, 1024], "offset": 0}] * 2
    )


def test_a_struct_found_nowhere_is_not_guessed_and_one_line_names_it(
    tmp_path: Path, worker: KernelWorker
) -> None:
    (tmp_path / "scale.cl").write_text(SCALE_KERNEL)
    with open_store(tmp_path / "k.db") as store:
        reporter = SilentReporter()
        mine_kernels(store, [str(tmp_path)], reporter=reporter, worker=worker)
        [row] = raw_sql.query(
            store,
            "SELECT k.filter_status, k.message, json_extract(i.provenance, '$.refusal'),"
            " json_extract(i.provenance, '$.assumed') FROM kernels k"
            " JOIN items i ON i.id = k.item_id",
        )
    why = (
        "type Params is used as a struct (oInfo.dims) and no definition of it was found in"
        " the source tree; not guessed"
    )
    assert row[0] == "rejected"
    assert row[1].splitlines()[0] == why
    assert row[2] == "unknown-type"
    assert "Params" not in (row[3] or "")
    assert f"scale.cl::scale: {why}" in reporter.problems


def test_clang_reads_code_kept_from_the_device_as_the_device_does() -> None:
    # PoCL defines __OPENCL_VERSION__, clang alone does not: the host-only method in
    # the struct reached clang, which refused the kernel the device had built
    source = PARAMS_HEADER.replace("#include <host/defs.h>", "") + "typedef long dim_t;\n"
    source = "typedef long dim_t;\n" + source + SCALE_KERNEL
    count, _features, problem = measure(source)
    assert problem == ""
    assert count is not None and count > 3
    normalised = rewrite(source).source
    assert "dims_ptr" not in normalised
    assert re.search(r"typedef struct Params_t \{", normalised)


MIXED = """\
typedef struct Inner_t { int q; short r[3]; } Inner;
struct Tagged { uchar x; double y; };
typedef struct {
    float4 a;
    char b;
    Inner in;
    float3 c;
    long d[2];
    struct Tagged t;
    uint2 pair;
} Mixed;
kernel void k(global float *o, Mixed m) { o[0] = m.a.x + m.in.r[1] + m.t.y + m.d[1]; }
"""


def _clang_layout(source: str, record: str) -> tuple[int, set[tuple[int, str]]]:
    proc = subprocess.run(
        [
            clang_path(),
            "-x",
            "cl",
            "-cl-std=CL1.2",
            "-Xclang",
            "-finclude-default-header",
            "-target",
            "spir64",
            "-Xclang",
            "-fdump-record-layouts",
            "-S",
            "-emit-llvm",
            "-o",
            "-",
            "-",
        ],
        input=source,
        capture_output=True,
        text=True,
        check=True,
    )
    dump = proc.stdout.split("*** Dumping AST Record Layout")
    block = next(b for b in dump if re.search(rf"^\s+0 \| {re.escape(record)}\s*$", b, re.M))
    size = int(re.search(r"sizeof=(\d+)", block).group(1))  # type: ignore[union-attr]
    leaves = set()
    for offset, name in re.findall(r"^\s+(\d+) \|\s{3,}\S.* (\w+)$", block, re.M):
        leaves.add((int(offset), name))
    return size, leaves


def test_struct_layouts_match_clangs() -> None:
    size, fields = _clang_layout(MIXED, "Mixed")
    layout = StructTable(MIXED).layout("Mixed")
    assert layout is not None
    assert layout.size == size
    ours = {(leaf.offset, leaf.path.split(".")[-1]) for leaf in layout.leaves}
    # clang lists a nested struct member and its fields; we list the fields
    assert ours <= fields
    assert fields - ours == {(20, "in"), (64, "t")}


@pytest.mark.parametrize(
    ("definition", "why"),
    [
        ("typedef struct { float v[9**9**9]; } Holder;", "array size .* not a number"),
        ("typedef struct { float v[1000000 * 1000]; } Holder;", "too large"),
        ("typedef struct { int bits : 3; } Holder;", "bit-field"),
        ("typedef struct { int n; } __attribute__((packed)) Holder;", None),
    ],
)
def test_a_struct_whose_layout_is_not_sure_gets_no_payload(
    definition: str, why: str | None
) -> None:
    spec = ArgSpec("h", "private", "Holder")
    if why is None:  # an attribute after the body is not read: the struct is not known
        with pytest.raises(UnsupportedArgument, match="unsupported type Holder"):
            make_payload([spec], 64, 1, structs=StructTable(definition))
        return
    with pytest.raises(UnsupportedArgument, match=rf"argument h: struct Holder[:,] .*{why}"):
        make_payload([spec], 64, 1, structs=StructTable(definition))


def test_a_struct_with_a_pointer_gets_no_payload_and_says_why() -> None:
    source = "typedef struct { global float *p; int n; } Holder;\n"
    spec = ArgSpec("h", "private", "Holder")
    with pytest.raises(UnsupportedArgument, match=r"argument h: struct Holder: member .*pointer"):
        make_payload([spec], 64, 1, structs=StructTable(source))
    # without the table, as before: unsupported, by type
    with pytest.raises(UnsupportedArgument, match="unsupported type Holder"):
        make_payload([spec], 64, 1)


def test_struct_values_share_their_integers_and_differ_in_their_floats() -> None:
    source = "typedef struct { int width; float scale; long strides[2]; } View;"
    spec = [ArgSpec("v", "private", "View")]
    a = make_payload(spec, 64, 1, "shaped", (8, 8), structs=StructTable(source)).values[0]
    b = make_payload(spec, 64, 2, "shaped", (8, 8), structs=StructTable(source)).values[0]
    assert (int(a["width"]), list(a["strides"])) == (8, [1, 8])
    assert (int(b["width"]), list(b["strides"])) == (8, [1, 8])
    assert a["scale"] != b["scale"]
    assert a.dtype.itemsize == 24 and np.dtype(a.dtype).fields["strides"][1] == 8  # type: ignore[index]


def test_definitions_read_from_headers() -> None:
    text = """
    struct Point { float x; float y; };            // C++: used as a bare name
    struct Box { int w; };
    typedef struct Box BoxT;
    typedef unsigned long long u64_t;
    typedef std::vector<int> Ints;                 // no device type: skipped
    typedef struct { int a; } First;
    #if 0
    typedef struct { long a; } First;              // the first one of a name is kept
    #endif
    struct Holder { cl::Buffer *data; Holder &operator=(const Holder &o); };
    typedef struct Shared {
        int n;
    #ifdef __cplusplus
        int size() const { return n; }
    #endif
    } Shared;
    """
    found = _definitions(text)
    assert "Holder" not in found  # the host's own C++: a guess does better
    assert found["Shared"].startswith("typedef struct Shared {")
    assert found["Point"] == "typedef struct Point { float x; float y; } Point;"
    assert found["BoxT"] == "typedef struct Box { int w; } BoxT;"
    assert found["u64_t"] == "typedef ulong u64_t;"
    assert "Ints" not in found
    assert found["First"] == "typedef struct { int a; } First;"


def test_a_variable_declared_with_two_types_is_not_read_as_a_struct_use() -> None:
    code = blank_comments_and_strings(
        "T op(T in) { T out = {in.x, -in.y}; return out; }\n"
        "kernel void k(global T *o, const P in) { o[0] = op(o[0]) + in.x; }\n"
        "kernel void j(global float *o, Q q) { o[0] = q.weight; }\n",
        keep_strings=False,
    )
    assert struct_use(code, "T") is None  # .x, .y: vector components
    assert struct_use(code, "P") is None  # in.x is a component
    assert struct_use(code, "Q") == "q.weight"


SPHERE = """\
typedef struct { uchar tag; float3 pos; float r; int id; double w; ushort2 k; } Sphere;
kernel void shade(global float *o, const Sphere s) {
    const int i = get_global_id(0);
    o[i] = s.pos.y + s.pos.z * 2.0f + s.r + (float)s.id + (float)s.tag + (float)s.w
        + (float)s.k.y;
}
"""


def test_the_device_reads_every_field_of_a_struct_where_the_payload_put_it(
    worker: KernelWorker,
) -> None:
    outcome = check_kernel(worker, SPHERE, "shade", global_size=64, local_size=16)
    s = outcome.details["scalars"]["s"]
    expected = np.float32(
        np.float32(s["pos"][1])
        + np.float32(s["pos"][2]) * np.float32(2.0)
        + np.float32(s["r"])
        + np.float32(s["id"])
        + np.float32(s["tag"])
        + np.float32(s["w"])
        + np.float32(s["k"][1])
    )
    _inputs, outputs = outcome.runs[0]
    assert np.allclose(outputs[0], expected, rtol=1e-5)
