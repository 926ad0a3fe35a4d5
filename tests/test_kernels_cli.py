"""``curator mine kernels`` and ``curator check kernels`` end to end, on real PoCL."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from engines.kernels import checker
from store import open_store
from store.commits import save_checkpoint
from store.kernels import kernel_ids_by_name, kernel_row
from store.records import Checkpoint
from tests import raw_sql

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_data" / "kernels"


def db_path() -> Path:
    return Path(os.environ["CURATOR_DB"])


def test_mine_then_check_the_samples(  # type: ignore[no-untyped-def]
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # spin never ends: its first launch waits out the compile allowance; 5 s instead of
    # 10 s is still many times what any sample's first launch takes here
    monkeypatch.setattr(checker, "FIRST_LAUNCH_ALLOWANCE_S", 5.0)
    mined = cli("mine", "kernels", str(SAMPLES))
    assert mined.exit_code == 0, mined.output
    assert "missing-function 1, too-few-instructions 1" in mined.output
    with open_store(db_path()) as store:
        assert raw_sql.scalar(store, "SELECT COUNT(*) FROM items WHERE kind = 'kernel'") == 14
        (shim_id,) = kernel_ids_by_name(store, "scale_tile")
        shim = kernel_row(store, shim_id)
        assert (
            shim is not None
            and shim["shim_needed"]
            and shim["shim_names"]
            == [
                "FLOAT_T",
                "WG_SIZE",
            ]
        )
        assert "typedef float FLOAT_T;" in str(shim["normalized_source"])
        (bad_id,) = kernel_ids_by_name(store, "broken")
        bad = kernel_row(store, bad_id)
        assert bad is not None and bad["verdict"] == "compile-error"
        assert "undeclared_helper" in str(bad["message"]) and bad["normalized_source"] is None
        (saxpy_id,) = kernel_ids_by_name(store, "saxpy")
        saxpy = kernel_row(store, saxpy_id)
        assert saxpy is not None and saxpy["verdict"] is None
        assert saxpy["features"]["mem"] == 3 and "F4" in saxpy["features"]
        assert str(saxpy["normalized_source"]).startswith("typedef float real_t;")

    unchecked = cli("stats", "--kind", "kernel")  # an empty table said nothing
    assert "no kernel checked yet" in unchecked.stdout
    assert "Checked kernels by verdict" not in unchecked.stdout

    checked = cli("check", "kernels", "--unchecked", "--timeout", "1", "--json")
    assert checked.exit_code == 0, checked.output
    records = [json.loads(line) for line in checked.stdout.splitlines() if line.startswith("{")]
    verdicts = {r["kernel_name"]: r["verdict"] for r in records}
    assert verdicts == {
        "scribble": "crash",
        "twice_plus": "useful",
        "vecadd": "useful",
        "iota": "input-insensitive",
        "clamp_negative": "no-output",
        "racy_tickets": "non-deterministic",
        "clamp_all": "useful",
        "block_sum_squares": "useful",
        "saxpy": "useful",
        "scale_tile": "useful",
        "stencil": "useful",
        "spin": "timeout",
    }
    assert {"item_id", "source_file", "kernel_name", "verdict"} <= set(records[0])
    with open_store(db_path()) as store:
        saxpy = kernel_row(store, kernel_ids_by_name(store, "saxpy")[0])
        assert saxpy is not None and saxpy["checked_at"] is not None
        assert saxpy["features"]["wgsize"] == 32 and saxpy["features"]["F1"] is not None
        assert saxpy["check_details"]["transfer_bytes"] == 2 * 2 * 1024 * 4

    again = cli("check", "kernels", "--unchecked")
    assert again.exit_code == 0 and "nothing to check" in again.output

    stats = cli("stats", "--json")
    data = json.loads(stats.stdout)
    assert data["by_kind"]["kernel"] == 14
    assert data["kernels_by_verdict"]["useful"] == 7
    assert data["kernels_by_verdict"]["too-few-instructions"] == 1
    mining = data["mining"][f"kernel:{SAMPLES}"]
    assert mining["seen"] == 14 and mining["filtered"]["missing-function"] == 1

    by_kind = json.loads(cli("stats", "--kind", "kernel", "--json").stdout)
    assert by_kind["refusals"] == {"missing-function": 1, "too-few-instructions": 1}
    assert by_kind["verdicts_by_policy"]["useful / clgen"] == 7
    assert by_kind["verdicts_by_policy"]["crash / clgen"] == 1  # every policy crashed


def test_check_a_set_of_kernels(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("mine", "kernels", str(SAMPLES / "saxpy.cl")).exit_code == 0
    with open_store(db_path()) as store, store.transaction() as conn:
        item = raw_sql.scalar(store, "SELECT id FROM items WHERE kind = 'kernel'")
        conn.execute("INSERT INTO sets (name, kind, created_at) VALUES ('k-dev', 'kernel', 'now')")
        conn.execute("INSERT INTO set_items (set_id, item_id, position) VALUES (1, ?, 0)", (item,))
    result = cli("check", "kernels", "k-dev", "--json")
    assert result.exit_code == 0
    (record,) = [json.loads(x) for x in result.stdout.splitlines() if x.startswith("{")]
    assert record["kernel_name"] == "saxpy" and record["verdict"] == "useful"


def test_check_needs_exactly_one_selection(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("check", "kernels").exit_code == 2
    assert cli("check", "kernels", "nope", "--unchecked").exit_code == 2
    no_store = cli("check", "kernels", "--unchecked")
    assert no_store.exit_code == 2 and "no such database" in no_store.output
    open_store(Path(os.environ["CURATOR_DB"])).close()
    commits = Path(os.environ["CURATOR_DB"]).parent / "c.jsonl"
    commits.write_text('{"id": "c1", "message": "Speed up the parser"}\n')
    assert cli("import", "items", str(commits), "--set", "commits").exit_code == 0
    wrong = cli("check", "kernels", "commits")
    assert wrong.exit_code == 2
    assert "set commits holds commit items; check kernels runs a set of kernels" in wrong.output
    missing = cli("check", "kernels", "no-such-set")
    assert missing.exit_code == 2 and "no such set" in missing.output


def test_duplicates_across_sources_are_linked(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    first, second = tmp_path / "one", tmp_path / "two"
    first.mkdir()
    second.mkdir()
    (first / "a.cl").write_text(
        "// original\n__kernel void add1(__global float* xs, const int n) {\n"
        "  int i = get_global_id(0);\n  if (i < n) xs[i] = xs[i] + 1.0f;\n}\n"
    )
    (second / "b.cl").write_text(
        "/* same kernel, other names and layout */\n"
        "__kernel void inc(__global float* data, const int count)\n{\n"
        "    int id = get_global_id(0);\n    if (id < count) data[id] = data[id] + 1.0f;\n}\n"
    )
    result = cli("mine", "kernels", str(first), str(second))
    assert result.exit_code == 0, result.output
    with open_store(db_path()) as store:
        assert raw_sql.scalar(store, "SELECT COUNT(*) FROM kernels") == 1
        dup = raw_sql.query(store, "SELECT kind, key, matched_on FROM duplicates")
        assert [tuple(r) for r in dup] == [("kernel", f"{second}::b.cl::inc", "normalized_hash")]
    rerun = cli("mine", "kernels", str(first))
    assert rerun.exit_code == 0
    with open_store(db_path()) as store:
        assert raw_sql.scalar(store, "SELECT COUNT(*) FROM kernels") == 1


def test_bad_inputs_are_reported_and_the_run_goes_on(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "src"
    src.mkdir()
    (src / "latin1.cl").write_bytes(
        b"// r\xe9sum\xe9\n__kernel void k(__global int* a) { a[get_global_id(0)] *= 3; }\n"
    )
    (src / "nothing.cl").write_text("float helper(float x) { return x; }\n")
    (src / "blob.cl").write_bytes(b"\x00\x01\x02__kernel")
    (src / "dangling.cl").symlink_to(src / "gone.cl")  # unreadable, even for root
    result = cli("mine", "kernels", str(src), str(tmp_path / "absent"))
    assert result.exit_code == 1
    out = " ".join(result.output.split())
    assert "latin1.cl: not valid UTF-8" in out
    assert "nothing.cl: no __kernel functions found" in out
    assert "blob.cl: skipped, binary content" in out
    assert "dangling.cl: cannot read (No such file or directory)" in out
    assert "no such file or directory" in out
    with open_store(db_path()) as store:
        assert kernel_ids_by_name(store, "k")  # the Latin-1 file's kernel was kept


def kernel(name: str, factor: str) -> str:
    return (
        f"__kernel void {name}(__global float* a) {{\n"
        f"  int i = get_global_id(0);\n  a[i] = a[i] * {factor}f + 1.0f;\n}}\n"
    )


def stored_keys() -> list[str]:
    with open_store(db_path()) as store:
        return [r[0] for r in raw_sql.query(store, "SELECT key FROM items ORDER BY key")]


@pytest.mark.timeout(300)
def test_a_brace_never_closed_is_one_warning_and_the_run_goes_on(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "src"
    src.mkdir()
    (src / "trunc.cl").write_text(kernel("ok", "3.0") + "int t[] = { 1, 2,\n")
    (src / "host.c").write_text('const char* s = "struct S { int x;\\n" "__kernel void";\n')
    (src / "z.cl").write_text(kernel("later", "5.0"))
    result = cli("mine", "kernels", str(src))
    assert result.exit_code == 0, result.output
    assert "trunc.cl:5: '{' never closed" in " ".join(result.output.split())
    assert stored_keys() == [f"{src}::trunc.cl::ok", f"{src}::z.cl::later"]


def test_a_file_name_that_is_not_utf8_is_stored_under_its_escaped_name(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "src"
    src.mkdir()
    (src / "good.cl").write_text(kernel("a", "3.0"))
    (Path(os.fsdecode(bytes(src))) / os.fsdecode(b"caf\xe9.cl")).write_text(kernel("b", "5.0"))
    result = cli("mine", "kernels", str(src))
    assert result.exit_code == 0, result.output
    assert stored_keys() == [f"{src}::caf\\xe9.cl::b", f"{src}::good.cl::a"]
    with open_store(db_path()) as store:
        assert kernel_row(store, kernel_ids_by_name(store, "b")[0])["source_file"] == "caf\\xe9.cl"  # type: ignore[index]
    again = cli("mine", "kernels", str(src), "--json")
    assert json.loads(again.stdout)["sources"][0]["known"] == 2


def test_a_rerun_takes_new_and_edited_files_before_the_last_one(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "src"
    src.mkdir()
    (src / "b.cl").write_text(kernel("kb", "3.0"))
    assert cli("mine", "kernels", str(src)).exit_code == 0
    (src / "a.cl").write_text(kernel("ka", "5.0"))
    second = cli("mine", "kernels", str(src), "--json")
    assert second.exit_code == 0, second.output
    counts = json.loads(second.stdout)["sources"][0]
    assert (counts["stored"], counts["known"]) == (1, 1)  # kb was not compiled again
    (src / "b.cl").write_text(kernel("kb", "7.0"))
    third = cli("mine", "kernels", str(src), "--json")
    assert json.loads(third.stdout)["sources"][0]["stored"] == 1
    keys = stored_keys()
    assert keys[:2] == [f"{src}::a.cl::ka", f"{src}::b.cl::kb"]
    assert len(keys) == 3 and keys[2].startswith(f"{src}::b.cl::kb@")  # the old one is kept
    with open_store(db_path()) as store:
        (checkpoint,) = raw_sql.query(store, "SELECT last_key, counters FROM checkpoints")
        assert checkpoint[0] is None and json.loads(checkpoint[1])["finished"] is True


def test_a_run_cut_short_resumes_after_its_last_file(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "src"
    src.mkdir()
    for name in ("a", "b", "c"):
        (src / f"{name}.cl").write_text(kernel(f"k{name}", f"{ord(name)}.0"))
    with open_store(db_path()) as store:
        counters = {"files": 2, "seen": 2, "stored": 2, "finished": False}
        save_checkpoint(
            store, Checkpoint("kernel", str(src), "min_instructions=3", "b.cl", counters)
        )
    resumed = cli("mine", "kernels", str(src), "--json")
    assert resumed.exit_code == 0, resumed.output
    assert json.loads(resumed.stdout)["files"] == 1  # a.cl and b.cl were not read again
    assert stored_keys() == [f"{src}::c.cl::kc"]
    whole = cli("mine", "kernels", str(src), "--json")  # the pass was finished: all again
    assert json.loads(whole.stdout)["stored"] == 2


@pytest.mark.timeout(300)
def test_includes_never_bring_in_files_outside_the_tree(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "secret.txt").write_text("SECRET_WORD\n")
    src = tmp_path / "src"
    (src / "deep").mkdir(parents=True)
    (src / "deep" / "up.cl").write_text('#include "../../secret.txt"\n' + kernel("up", "3.0"))
    (src / "abs.cl").write_text(f'#include "{tmp_path / "secret.txt"}"\n' + kernel("ab", "5.0"))
    (src / "own.cl").write_text('#include "pyproject.toml"\n' + kernel("own", "9.0"))
    result = cli("mine", "kernels", str(src))
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())
    assert 'deep/up.cl: #include "../../secret.txt" refused: outside the source tree' in out
    assert f'abs.cl: #include "{tmp_path / "secret.txt"}" refused: outside the' in out
    with open_store(db_path()) as store:
        stored = " ".join(
            str(value)
            for row in raw_sql.query(
                store,
                "SELECT k.original_source, k.normalized_source, k.message, i.provenance"
                " FROM kernels k JOIN items i ON i.id = k.item_id",
            )
            for value in row
        )
        assert "SECRET_WORD" not in stored and "[project]" not in stored
        assert "pyproject.toml" in stored  # dropped as a header not found, and recorded
        assert (
            raw_sql.scalar(store, "SELECT COUNT(*) FROM kernels WHERE filter_status = 'accepted'")
            == 3
        )


def test_a_kernel_whose_check_fails_in_curator_is_named_and_the_run_goes_on(
    cli,  # type: ignore[no-untyped-def]
    tmp_path: Path,
) -> None:
    tree = tmp_path / "kernels"
    tree.mkdir()
    for name in ("input_insensitive.cl", "saxpy.cl"):
        (tree / name).write_bytes((SAMPLES / name).read_bytes())
    assert cli("mine", "kernels", str(tree)).exit_code == 0
    with open_store(db_path()) as store:
        (broken,) = kernel_ids_by_name(store, "iota")
        # a damaged row: its features are a list, not the object the checker extends
        raw_sql.connection(store).execute(
            "UPDATE kernels SET features = '[1, 2]' WHERE item_id = ?", (broken,)
        )
    checked = cli("check", "kernels", "--unchecked", "--timeout", "1")
    assert checked.exit_code == 1, checked.output
    assert f"item #{broken} (input_insensitive.cl: iota): not checked: TypeError" in (
        checked.output
    )
    assert "1 kernel(s) not checked (named above); the others are saved" in checked.output
    with open_store(db_path()) as store:
        (saxpy,) = kernel_ids_by_name(store, "saxpy")
        assert (kernel_row(store, saxpy) or {})["verdict"] == "useful"
        assert (kernel_row(store, broken) or {})["checked_at"] is None
