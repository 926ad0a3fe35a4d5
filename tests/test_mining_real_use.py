"""Problems found by mining real repositories as a user would, each kept as a test: the
commands are run end to end (real git, real PoCL, real clang and llvmlite)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from store import open_store
from store.kernels import kernel_ids_by_name, kernel_row
from tests.gitrepo import GitRepo, py_module

MATMUL = """
__kernel void matmul(__global const float* A, __global const float* B,
                     __global float* C, int N) {
    int row = get_global_id(1);
    int col = get_global_id(0);
    float acc = 0.0f;
    for (int k = 0; k < N; k++) acc += A[row * N + k] * B[k * N + col];
    C[row * N + col] = acc;
}
"""


@pytest.mark.timeout(300)
def test_checking_a_2d_kernel_records_its_work_group_size(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A 2-D kernel is checked on a 2-D work-group ([16, 16]); F3 multiplied that list by
    a float and the whole ``check kernels`` run stopped on a TypeError."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "mm.cl").write_text(MATMUL)
    assert cli("mine", "kernels", str(src)).exit_code == 0
    checked = cli("check", "kernels", "--unchecked", "--timeout", "2", "--json")
    assert checked.exit_code == 0, checked.output
    (record,) = [json.loads(x) for x in checked.stdout.splitlines() if x.startswith("{")]
    assert record["verdict"] == "useful" and record["payload_policy"] == "shaped"
    with open_store(Path(os.environ["CURATOR_DB"])) as store:
        row = kernel_row(store, kernel_ids_by_name(store, "matmul")[0])
        assert row is not None
        assert row["check_details"]["local_size"] == [16, 16]
        assert row["features"]["wgsize"] == 256 and row["features"]["F3"] == 0.0


def test_a_rewalk_under_other_filters_counts_what_was_already_stored(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``--max-files 2`` walks the history again: the commit the first run stored is
    counted as already stored, in the summary line and in ``--json``'s totals (the line
    said "seen 3, filtered 1, duplicates 0, stored 1", which does not add up)."""
    repo = GitRepo(tmp_path / "repo")
    repo.commit("init", {"m.py": py_module("y += 1"), "n.py": py_module("y -= 1")})
    repo.commit("Shift instead of multiply", {"m.py": py_module("y <<= 1")})
    repo.commit("Two files at once", {"m.py": py_module("y <<= 2"), "n.py": py_module("y >>= 1")})
    first = cli("mine", "commits", str(repo.path), "--max-functions", "2")
    assert first.exit_code == 0, first.output
    assert "seen 3, filtered 2, duplicates 0, stored 1 " in " ".join(first.stdout.split())
    second = cli("mine", "commits", str(repo.path), "--max-files", "2", "--max-functions", "2")
    assert second.exit_code == 0, second.output
    line = " ".join(second.stdout.split())
    assert "seen 3, filtered 0, duplicates 0, already stored 1, stored 2 " in line
    third = cli(
        "mine", "commits", str(repo.path), "--max-files", "3", "--max-functions", "2", "--json"
    )
    totals = json.loads(third.stdout)
    assert (totals["seen"], totals["known"], totals["stored"]) == (3, 3, 0)


def test_a_folder_inside_a_repository_is_refused_naming_the_repository(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """git finds the repository from any folder inside it: ``mine commits repo/lib``
    mined the whole history under the source ``repo/lib``, and mining ``repo`` next
    took every commit for a fork's duplicate (stored 0, duplicates N)."""
    repo = GitRepo(tmp_path / "repo")
    repo.commit("init", {"lib/m.py": py_module("y += 1")})
    repo.commit("Shift instead of multiply", {"lib/m.py": py_module("y <<= 1")})
    inside = cli("mine", "commits", str(repo.path / "lib"), str(repo.path / ".git" / "objects"))
    assert inside.exit_code == 1
    out = " ".join(inside.output.split())
    for folder in ("lib", ".git/objects"):
        assert (
            f"error: {repo.path / folder}: a folder inside the repository {repo.path}:"
            " name the repository itself"
        ) in out
    whole = cli("mine", "commits", str(repo.path))
    assert whole.exit_code == 0, whole.output
    assert "duplicates 0, stored 2 " in " ".join(whole.stdout.split())


VADD = """
__kernel void vadd(__global const float* a, __global const float* b, __global float* c) {
    int i = get_global_id(0);
    c[i] = a[i] + b[i];
}
"""


@pytest.mark.timeout(300)
def test_kernels_are_read_from_a_bare_repository_path(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A bare repository (a mirror, ``git clone --bare``) named by its path was walked as
    a folder of git objects: 0 files, 0 kernels, exit status 0 and no word of why."""
    repo = GitRepo(tmp_path / "work")
    repo.commit("kernels", {"src/vadd.cl": VADD, "README.md": "kernels\n"})
    bare = tmp_path / "mirror.git"
    repo.git("clone", "-q", "--bare", str(repo.path), str(bare))
    empty = tmp_path / "empty.git"
    GitRepo(tmp_path / "unused").git("init", "-q", "--bare", str(empty))
    result = cli("mine", "kernels", str(bare), str(empty), "--json")
    assert result.exit_code == 1, result.output
    (mirror, nothing) = json.loads(result.stdout)["sources"]
    assert (mirror["files"], mirror["kernels"], mirror["stored"]) == (1, 1, 1)
    assert nothing["failed"]
    assert f"{empty}: a repository without commits" in " ".join(result.output.split())
    with open_store(Path(os.environ["CURATOR_DB"])) as store:
        assert kernel_ids_by_name(store, "vadd")


def test_a_folder_with_nothing_to_mine_as_ir_is_named(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``mine ir`` on a bare repository (or any folder without IR or sources) said only
    "seen 0, stored 0": nothing told the user the folder held nothing it reads."""
    repo = GitRepo(tmp_path / "work")
    repo.commit("add", {"src/add.c": "int add(int a, int b) { return a + b; }\n"})
    bare = tmp_path / "mirror.git"
    repo.git("clone", "-q", "--bare", str(repo.path), str(bare))
    empty = tmp_path / "empty"
    empty.mkdir()
    result = cli("mine", "ir", str(bare), str(empty), "--build", str(bare))
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())
    hint = "(a bare git repository holds no files: clone it and name the clone)"
    assert f"{bare}: no .ll or .bc file in this folder {hint}" in out
    assert f"{empty}: no .ll or .bc file in this folder" in out
    assert f"{bare}: no C or C++ source file to build in this folder {hint}" in out
    built = cli("mine", "ir", "--build", str(repo.path), str(repo.path / "src"))
    assert built.exit_code == 0, built.output
    out = " ".join(built.output.split())
    assert "no C or C++ source file" not in out and "no .ll or .bc file in" in out


def test_a_kernel_cut_off_is_not_also_reported_as_no_kernel(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A ``.cl`` file whose only kernel never closes its ``{`` got two warnings, the
    second one false: "kernel cut skipped: its '{' is never closed", then "no __kernel
    functions found"."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "cut.cl").write_text("__kernel void cut(__global float* x) {\n    x[0] = 1.0f;\n")
    (src / "table.cl").write_text("int t[] = { 1, 2,\n")
    result = cli("mine", "kernels", str(src))
    out = " ".join(result.output.split())
    assert "cut.cl:1: kernel cut skipped: its '{' is never closed" in out
    assert "cut.cl: no __kernel functions found" not in out
    assert "table.cl: no __kernel functions found" in out  # no kernel there at all
