"""The kernel engine on real PoCL, real clang and real llvmlite: scraping, the shim, the
rejection filter, the rewriter (behaviour kept), features, payloads and every verdict."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from engines.kernels import checker
from engines.kernels.checker import KernelWorker, _equal, check_kernel, judge, probe_verdict
from engines.kernels.compile import lower_to_ir, rejection_filter
from engines.kernels.features import combined, with_dynamic
from engines.kernels.payload import ArgSpec, make_payload
from engines.kernels.pipeline import SourceContext
from engines.kernels.rewrite import rewrite, source_hash
from engines.kernels.scrape import Candidate, candidate_keys, decode_source, scrape_text
from engines.kernels.shim import shim_for
from engines.kernels.tree import SourceTree

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_data" / "kernels"


@pytest.fixture(scope="module")
def worker() -> Iterator[KernelWorker]:
    with KernelWorker() as w:
        yield w


@pytest.fixture
def short_first_launch(monkeypatch: pytest.MonkeyPatch) -> None:
    """timeout.cl never ends, so its first launch waits out the compile allowance: 5 s
    instead of 10 s, still many times what any sample's first launch takes here, and the
    spinning kernel times out all the same."""
    monkeypatch.setattr(checker, "FIRST_LAUNCH_ALLOWANCE_S", 5.0)


def scrape(name: str) -> list[Candidate]:
    path = SAMPLES / name
    text, _ = decode_source(path.read_bytes())
    return scrape_text(text, name, path, SAMPLES).candidates


def only(name: str) -> Candidate:
    (cand,) = scrape(name)
    return cand


def all_samples() -> list[Candidate]:
    return [c for p in sorted(SAMPLES.iterdir()) for c in scrape(p.name)]


# --- scraping -------------------------------------------------------------------------


def test_cl_file_gives_one_item_per_kernel_with_only_what_it_needs() -> None:
    clamp, sums = scrape("reductions.cl")
    assert (clamp.name, sums.name) == ("clamp_all", "block_sum_squares")
    assert "clampf" in clamp.source and "range_t" in clamp.source
    assert "square" not in clamp.source and "block_sum_squares" not in clamp.source
    assert "square(float x)" in sums.source and "clampf" not in sums.source
    assert "unused_helper" not in clamp.source + sums.source
    assert "#pragma OPENCL EXTENSION" in clamp.source


def test_macros_and_typedefs_come_along() -> None:
    cand = only("saxpy.cl")
    assert "#define DTYPE float" in cand.source and "#define ALPHA(a)" in cand.source
    assert "typedef DTYPE real_t;" in cand.source and "inline real_t ax" in cand.source


def test_local_include_is_inlined() -> None:
    cand = only("stencil.cl")
    assert "#include" not in cand.source
    assert "#define RADIUS 1" in cand.source and "float weight(int offset)" in cand.source
    assert any(inc.endswith("common.h") for inc in cand.includes)


def test_missing_include_is_left_for_the_compiler(tmp_path: Path) -> None:
    path = tmp_path / "k.cl"
    path.write_text('#include "absent.h"\n__kernel void k(__global int* a) { a[0] = 1; }\n')
    (cand,) = scrape_text(path.read_text(), "k.cl", path, tmp_path).candidates
    assert '#include "absent.h"' in cand.source


def test_include_cycle_does_not_loop(tmp_path: Path) -> None:
    (tmp_path / "a.h").write_text('#include "b.h"\n#define A 1\n')
    (tmp_path / "b.h").write_text('#include "a.h"\n#define B 2\n')
    path = tmp_path / "k.cl"
    path.write_text('#include "a.h"\n__kernel void k(__global int* x) { x[0] = A + B; }\n')
    (cand,) = scrape_text(path.read_text(), "k.cl", path, tmp_path).candidates
    assert "#define A 1" in cand.source and "#define B 2" in cand.source


def test_kernel_string_embedded_in_a_c_host_file() -> None:
    cand = only("host_vecadd.c")
    assert cand.name == "vecadd" and cand.origin == "embedded"
    assert "c[i] = a[i] + b[i];" in cand.source and "printf" not in cand.source
    assert cand.line == 7


def test_kernel_in_a_cpp_raw_string() -> None:
    cand = only("host_raw.cpp")
    assert cand.name == "twice_plus" and cand.origin == "embedded"
    assert "#define FACTOR 2" in cand.source


def test_file_without_kernels_warns_only_for_device_code(tmp_path: Path) -> None:
    cl = tmp_path / "empty.cl"
    cl.write_text("float helper(float x) { return x; }\n")
    result = scrape_text(cl.read_text(), "empty.cl", cl, tmp_path)
    assert result.candidates == [] and result.warnings == ["empty.cl: no __kernel functions found"]
    host = tmp_path / "main.c"
    host.write_text('int main(void) { puts("hello"); return 0; }\n')
    assert scrape_text(host.read_text(), "main.c", host, tmp_path).warnings == []


def test_non_utf8_is_read_as_latin1_with_a_warning() -> None:
    text, warning = decode_source(b"// caf\xe9\n__kernel void k(__global int* a) { a[0] = 1; }\n")
    assert "café" in text and warning is not None and "UTF-8" in warning


def test_same_name_twice_in_a_file_gets_distinct_keys() -> None:
    a = Candidate("k", "x", "f.cl", "cl", 1)
    assert candidate_keys([a, a, Candidate("j", "y", "f.cl", "cl", 9)]) == [
        "f.cl::k",
        "f.cl::k#2",
        "f.cl::j",
    ]


# --- shim and rejection filter --------------------------------------------------------


def test_shim_lists_only_undeclared_names() -> None:
    header, names = shim_for("#define WG_SIZE 64\n__kernel void k(__global FLOAT_T* a) {}")
    assert names == ["FLOAT_T"] and "typedef float FLOAT_T;" in header


def test_shim_applied_only_when_needed(worker: KernelWorker) -> None:
    needed = rejection_filter(worker, only("shim_needed.cl").source)
    assert needed.accepted and needed.shim_names == ["FLOAT_T", "WG_SIZE"]
    assert needed.source.startswith("typedef float FLOAT_T;")
    plain = rejection_filter(worker, only("saxpy.cl").source)
    assert plain.accepted and plain.shim_names == []


def test_verdict_compile_error_keeps_the_compiler_message(worker: KernelWorker) -> None:
    result = rejection_filter(worker, only("compile_error.cl").source)
    assert not result.accepted and result.verdict == "compile-error"
    assert result.message is not None and "undeclared_helper" in result.message
    assert "error" in result.message


def test_verdict_too_few_instructions(worker: KernelWorker) -> None:
    result = rejection_filter(worker, only("too_few_instructions.cl").source)
    assert result.verdict == "too-few-instructions" and result.instructions is not None
    assert result.instructions < 3 and "minimum is 3" in (result.message or "")
    assert rejection_filter(worker, only("too_few_instructions.cl").source, 0).accepted


# --- the dynamic checker: one test per verdict ------------------------------------------


@pytest.mark.parametrize(
    ("sample", "verdict"),
    [
        ("saxpy.cl", "useful"),
        ("no_output.cl", "no-output"),
        ("input_insensitive.cl", "input-insensitive"),
        ("non_deterministic.cl", "non-deterministic"),
        ("crash.cl", "crash"),
        ("compile_error.cl", "compile-error"),
    ],
)
def test_checker_verdict(worker: KernelWorker, sample: str, verdict: str) -> None:
    cand = only(sample)
    outcome = check_kernel(worker, cand.source, cand.name, timeout=5)
    assert outcome.verdict == verdict, outcome.details


@pytest.mark.usefixtures("short_first_launch")
def test_checker_verdict_timeout_and_worker_recovers(worker: KernelWorker) -> None:
    cand = only("timeout.cl")
    restarts = worker.restarts
    outcome = check_kernel(worker, cand.source, cand.name, timeout=1)
    assert outcome.verdict == "timeout" and "running A1" in outcome.details["message"]
    assert worker.restarts == restarts + 1
    again = only("saxpy.cl")
    assert check_kernel(worker, again.source, again.name).verdict == "useful"


def test_an_interrupted_worker_kills_its_child_and_starts_no_other() -> None:
    with KernelWorker() as w:
        w.sandbox()  # a child is running
        child = w.proc
        assert child is not None and child.poll() is None
        w.interrupt()
        assert child.wait(timeout=10) != 0  # killed
        cand = only("saxpy.cl")
        outcome = check_kernel(w, cand.source, cand.name)
        assert outcome.verdict != "useful" and "interrupted" in str(outcome.details)
        assert w.proc is None  # the check's stages found no worker and started none


def test_crash_is_reported_with_the_signal(worker: KernelWorker) -> None:
    cand = only("crash.cl")
    outcome = check_kernel(worker, cand.source, cand.name, policies=("clgen",))
    assert outcome.verdict == "crash" and "SIGSEGV" in outcome.details["message"]


def test_judge_compares_floats_within_tolerance() -> None:
    a_in, b_in = [np.zeros(4, np.float32)], [np.ones(4, np.float32)]
    a_out = [np.full(4, 2.0, np.float32)]
    a_out2 = [a_out[0] + np.float32(1e-7)]
    b_out = [np.full(4, 3.0, np.float32)]
    verdict, _ = judge([(a_in, a_out), (b_in, b_out), (a_in, a_out2), (b_in, b_out)])
    assert verdict == "useful"
    assert not _equal([np.float32([1.0])], [np.float32([1.001])])


# --- the rewriter keeps behaviour ---------------------------------------------------------


def test_rewriter_renames_in_order_and_keeps_builtins() -> None:
    out = rewrite(only("saxpy.cl").source)
    assert "__kernel void B(__global real_t* b, __global real_t* c, const int d) {" in out.source
    assert "inline real_t A(real_t a) {" in out.source
    assert "get_global_id(0)" in out.source and "3.5f * a" in out.source
    assert "#define" not in out.source and "//" not in out.source and "/*" not in out.source
    assert out.kernel_names == {"saxpy": "B"}


def test_rewriter_leaves_struct_fields_and_macro_builtins() -> None:
    clamp, sums = scrape("reductions.cl")
    text = rewrite(clamp.source).source
    assert "float lo;" in text and ".lo" in text and ".hi" in text
    assert "CLK_LOCAL_MEM_FENCE" in rewrite(sums.source).source


def test_same_kernel_written_differently_hashes_alike() -> None:
    one = "__kernel void f(__global int* xs) { xs[get_global_id(0)] = 1; } // a\n"
    two = "/* b */ __kernel void g(__global int* ys)\n{\n  ys[get_global_id(0)]=1;\n}\n"
    assert source_hash(rewrite(one).source) == source_hash(rewrite(two).source)


@pytest.mark.usefixtures("short_first_launch")
def test_behaviour_preserved_on_every_sample_that_compiles(worker: KernelWorker) -> None:
    compared = 0
    for cand in all_samples():
        filtered = rejection_filter(worker, cand.source, 0)
        if not filtered.accepted:
            continue
        new = rewrite(filtered.source)
        # one payload policy: this is about the rewriter (policies: test_kernels_real_code)
        before = check_kernel(worker, filtered.source, cand.name, timeout=1, policies=("clgen",))
        after = check_kernel(
            worker, new.source, new.kernel_names[cand.name], timeout=1, policies=("clgen",)
        )
        assert before.verdict == after.verdict, (cand.file, cand.name)
        if before.verdict in ("useful", "input-insensitive", "no-output"):
            for (_, out_a), (_, out_b) in zip(before.runs, after.runs, strict=True):
                assert _equal(out_a, out_b), (cand.file, cand.name)
        compared += 1
    assert compared == 13


def test_a_probe_that_differs_is_a_read_past_the_end_only_when_a_repeat_agrees() -> None:
    first = [np.arange(8, dtype=np.float32)]
    moved = [first[0] + 1]
    assert probe_verdict({"outputs": [first[0].copy()], "control": moved}, first) is None
    assert probe_verdict({"outputs": moved, "control": [first[0].copy()]}, first) == (
        "out-of-bounds"
    )
    assert probe_verdict({"outputs": moved}, first) == "out-of-bounds"
    # A1 and A2 agreed by chance: a third run of A differs as much as the probe does.
    assert probe_verdict({"outputs": moved, "control": moved}, first) == "non-deterministic"


# --- payloads and features ------------------------------------------------------------------


def test_payload_follows_clgens_rules() -> None:
    specs = [
        ArgSpec("a", "global", "float*", const=True),
        ArgSpec("b", "global", "int4*"),
        ArgSpec("l", "local", "float*"),
        ArgSpec("n", "private", "int"),
        ArgSpec("x", "private", "float"),
    ]
    one, same, other = (make_payload(specs, 64, s) for s in (1, 1, 2))
    assert one.data(0).shape == (64,) and one.data(1).shape == (256,)
    assert one.values[2] == 64 * 4 and int(one.values[3]) == 64
    assert np.array_equal(one.values[0], same.values[0])
    assert not np.array_equal(one.data(0), other.data(0))
    # the guard after each buffer is the same in every payload
    assert np.array_equal(one.values[0][64:], other.values[0][64:])
    assert len(one.values[0]) - 64 >= 4096
    assert one.transfer_bytes() == 64 * 4 + 2 * 256 * 4


def test_static_features_counted_from_ir(worker: KernelWorker) -> None:
    sums = rejection_filter(worker, scrape("reductions.cl")[1].source)
    f = sums.features
    assert sums.accepted and f["localmem"] >= 3 and f["mem"] == 2
    assert f["branches"] >= 3 and f["comp"] > 0
    assert rejection_filter(worker, only("host_vecadd.c").source).features["coalesced"] == 3


def test_combined_features() -> None:
    raw = {"comp": 6, "mem": 2, "localmem": 1, "coalesced": 1, "branches": 1}
    assert combined(raw) == {"F2": 0.5, "F4": 3.0}
    full = with_dynamic(raw, transfer=800, wgsize=32)
    assert full["F1"] == 100.0 and full["F3"] == 16.0 and full["F2"] == 0.5
    assert combined({"comp": 1, "mem": 0})["F4"] is None


# --- braces never closed, and scanning that must stay linear ---------------------------


@pytest.mark.timeout(60)
def test_a_brace_never_closed_warns_and_keeps_the_kernels_before_it(tmp_path: Path) -> None:
    cl = tmp_path / "trunc.cl"
    cl.write_text(
        "__kernel void ok(__global float* a){int i=get_global_id(0); a[i]=a[i]*3.0f+1.0f;}\n"
        "int t[] = { 1, 2,\n"
    )
    result = scrape_text(cl.read_text(), "trunc.cl", cl, tmp_path)
    assert [c.name for c in result.candidates] == ["ok"]
    assert result.warnings == ["trunc.cl:2: '{' never closed; nothing after it is read as a kernel"]
    host = tmp_path / "host.c"
    host.write_text(
        'const char* a = "struct S { int x;\\n"\n'
        '    "__kernel void lost(__global float* a) { a[0] = 1.0f; }\\n";\n'
        'const char* b = "__kernel void open(__global float* a) { a[0] = 2.0f;\\n";\n'
    )
    result = scrape_text(host.read_text(), "host.c", host, tmp_path)
    assert result.candidates == []
    assert result.warnings == [
        "host.c:1: '{' never closed; nothing after it is read as a kernel",
        "host.c:3: kernel open skipped: its '{' is never closed",
    ]


@pytest.mark.timeout(60)
def test_unfinished_text_and_long_files_scan_in_linear_time(
    tmp_path: Path,
) -> None:
    host = tmp_path / "host.cpp"
    kernel = "__kernel void k(__global int* a) { a[0] = 1; }\n"
    for text in (
        'R"(' * 60_000,
        "/* a " * 60_000,
        "int t[] = " + "{" * 100_000 + ";\n",
        "".join(f"int x{i};\n" for i in range(150_000)) + kernel,
        "#define BIG \\\n" + "  1 + \\\n" * 150_000 + "  1\n" + kernel,
        "".join(f'const char* s{i} = "x";\n' for i in range(150_000)),
    ):
        started = time.monotonic()
        scrape_text(text, "host.cpp", host, tmp_path)
        scrape_text(text, "k.cl", tmp_path / "k.cl", tmp_path)
        assert time.monotonic() - started < 15, text[:20]


# --- includes stay in the scanned tree ---------------------------------------------------


def _outside_and_inside(tmp_path: Path) -> Path:
    """A tree ``src`` beside a header that is not in it, and a link in it to that header."""
    (tmp_path / "secret.h").write_text("#define SECRET_VALUE 424242\n")
    src = tmp_path / "src"
    (src / "a" / "b").mkdir(parents=True)
    (src / "a" / "inside.h").write_text("#define INSIDE 1\n")
    (src / "a" / "linked.h").symlink_to(tmp_path / "secret.h")
    return src


KERNEL_BODY = "__kernel void k(__global int* a) { a[0] = INSIDE; }\n"


def test_includes_outside_the_tree_are_refused_with_a_warning(tmp_path: Path) -> None:
    src = _outside_and_inside(tmp_path)
    cl = src / "a" / "b" / "k.cl"
    cl.write_text(
        '#include "../../../secret.h"\n'
        f'#include "{tmp_path / "secret.h"}"\n'
        '#include "../linked.h"\n'
        "#include <../../../secret.h>\n"
        '#include "../inside.h"\n' + KERNEL_BODY
    )
    text = cl.read_text()
    from_folder = scrape_text(text, "a/b/k.cl", cl, src)
    context = SourceContext(SourceTree.from_directory(src))
    resolver, _ = context.for_file("a/b/k.cl")
    from_tree = scrape_text(text, "a/b/k.cl", cl, src, resolver)
    for result in (from_folder, from_tree):
        (cand,) = result.candidates
        assert "SECRET_VALUE" not in cand.source and "#define INSIDE 1" in cand.source
        assert "#include" not in cand.source
        assert result.warnings == [
            'a/b/k.cl: #include "../../../secret.h" refused: outside the source tree',
            f'a/b/k.cl: #include "{tmp_path / "secret.h"}" refused: outside the source tree',
            'a/b/k.cl: #include "../linked.h" refused: outside the source tree',
        ]
    assert from_tree.candidates[0].includes == ("a/inside.h",)


def test_a_missing_header_named_upwards_is_never_left_for_the_compiler(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    cl = tmp_path / "a" / "k.cl"
    cl.write_text('#include "../gone.h"\n' + KERNEL_BODY)
    result = scrape_text(cl.read_text(), "a/k.cl", cl, tmp_path)
    (cand,) = result.candidates
    assert "#include" not in cand.source and result.warnings == []


def test_clang_never_looks_for_an_include_in_the_callers_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "leak.h").write_text("#define LEAKED 1\n")
    monkeypatch.chdir(tmp_path)
    ir, message = lower_to_ir(
        '#include "leak.h"\n__kernel void k(__global int* a) { a[0] = LEAKED; }\n'
    )
    assert ir is None and "'leak.h' file not found" in message


def test_the_worker_never_looks_for_an_include_among_curators_files(worker: KernelWorker) -> None:
    built = worker.build(
        '#include "pyproject.toml"\n__kernel void k(__global int* a) { a[0] = 1; }\n'
    )
    assert not built.ok and "'pyproject.toml' file not found" in built.message
