"""``mine_ir`` end to end on real clang output: dedup, provenance, licenses, rejects, stats."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from engines.ir.build import CompilerNotFound
from engines.ir.ingest import load_module
from engines.ir.pipeline import IROptions, IRRunSummary, SilentReporter, mine_ir
from engines.ir.stats import module_stats
from engines.ir.structural_hash import structural_hash
from store import Store, open_store
from store.ir import IRModuleRow, ir_corpus_table, ir_counts, ir_module, save_ir_batch
from store.stats import corpus_stats
from tests import raw_sql
from tests.gitrepo import GitRepo
from tests.ir_samples import LICENSE_TEXTS, ROOT, SAMPLES, compile_bitcode


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Store, IRRunSummary]]:
    """The sample tree built and its one .ll ingested, once for the module's tests."""
    with open_store(tmp_path_factory.mktemp("ir") / "built.db") as store:
        summary = mine_ir(store, [SAMPLES], build=SAMPLES)
        yield store, summary


def _item(store: Store, path: str) -> int:
    row = raw_sql.query(store, "SELECT item_id FROM ir_inputs WHERE path = ?", (path,))
    assert len(row) == 1, path
    return int(row[0][0])


def test_the_samples_store_eight_modules_and_link_three_duplicates(
    built: tuple[Store, IRRunSummary],
) -> None:
    store, summary = built
    assert (summary.seen, summary.stored, summary.duplicates) == (11, 8, 3)
    assert not summary.rejected and not summary.failed
    assert raw_sql.scalar(store, "SELECT COUNT(*) FROM ir_modules") == 8
    assert raw_sql.scalar(store, "SELECT COUNT(*) FROM items WHERE kind = 'ir'") == 8
    linked = raw_sql.query(
        store,
        "SELECT key, matched_on, original_item_id FROM duplicates WHERE kind = 'ir' ORDER BY key",
    )
    assert len(linked) == 3 and {r[1] for r in linked} == {"structural_hash"}


def test_names_only_pairs_are_one_module(built: tuple[Store, IRRunSummary]) -> None:
    store, _ = built
    assert _item(store, "src/sum.c") == _item(store, "src/sum_renamed.c")
    assert _item(store, "src/shapes.cpp") == _item(store, "src/shapes_reformatted.cpp")
    # across projects, under another license: linked to the first one stored
    assert _item(store, "src/accumulate.c") == _item(store, "src/sum.c")
    duplicate = raw_sql.query(
        store, "SELECT status, license FROM ir_inputs WHERE path = 'src/accumulate.c'"
    )[0]
    assert tuple(duplicate) == ("duplicate", "Apache-2.0")


def test_one_constant_apart_is_two_modules(built: tuple[Store, IRRunSummary]) -> None:
    store, _ = built
    assert _item(store, "src/scale.c") != _item(store, "src/scale_by_4.c")


def test_a_built_module_keeps_its_provenance(built: tuple[Store, IRRunSummary]) -> None:
    store, _ = built
    module = ir_module(store, _item(store, "src/stats.c"))
    assert module is not None
    prov = module["provenance"]
    assert prov["project"] == "mathlib" and prov["license"] == "MIT"
    assert prov["license_files"] == ["LICENSE"]
    assert prov["root"] == str(SAMPLES / "mathlib") == module["source"]
    assert prov["compile_command"].startswith("clang -O0 -I. -emit-llvm -c")
    assert prov["compile_command"].endswith("-o - mathlib/src/stats.c")
    assert prov["directory"] == str(SAMPLES)
    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    assert prov["git_commit"] == head
    assert module["input_format"] == "build" and module["language"] == "c"
    assert module["bitcode"][:4] == b"BC\xc0\xde"
    assert "define dso_local void @moments_push" in module["text"]
    assert module["functions"] == 3 and module["opcodes"]["switch"] == 1
    assert module["basic_blocks"] >= module["functions"]


def test_the_ll_file_is_ingested_as_written(built: tuple[Store, IRRunSummary]) -> None:
    store, _ = built
    module = ir_module(store, _item(store, "prebuilt/clamp.ll"))
    assert module is not None
    assert module["input_format"] == "ll" and module["compile_command"] is None
    assert module["text"] == (SAMPLES / "mathlib/prebuilt/clamp.ll").read_text()
    assert module["language"] == "c"  # from its source_filename
    assert module["provenance"]["input"] == "ll"


def test_duplicates_are_listed_with_the_module(built: tuple[Store, IRRunSummary]) -> None:
    store, _ = built
    module = ir_module(store, _item(store, "src/sum.c"))
    assert module is not None
    assert sorted(d["path"] for d in module["duplicates"]) == [
        "src/accumulate.c",
        "src/sum_renamed.c",
    ]


def test_table_one_sizes_before_and_after_dedup(built: tuple[Store, IRRunSummary]) -> None:
    store, _ = built
    table = ir_corpus_table(store)
    total = table["total"]
    assert total["before"]["modules"] == 11 and total["after"]["modules"] == 8
    for key in ("text_bytes", "bitcode_bytes", "tokens"):
        assert total["before"][key] > total["after"][key] > 0
    assert table["by_language"]["cpp"]["before"]["modules"] == 3
    assert table["by_language"]["cpp"]["after"]["modules"] == 2
    assert table["by_license"]["GPL-3.0"]["after"]["modules"] == 2
    assert table["by_license"]["Apache-2.0"]["before"]["modules"] == 2
    assert table["by_license"]["Apache-2.0"]["after"]["modules"] == 1
    sizes = raw_sql.query(store, "SELECT SUM(text_bytes), SUM(bitcode_bytes) FROM ir_modules")[0]
    assert (total["after"]["text_bytes"], total["after"]["bitcode_bytes"]) == tuple(sizes)


def test_corpus_stats_report_ir_counts(built: tuple[Store, IRRunSummary]) -> None:
    store, _ = built
    data = corpus_stats(store)
    assert data["ir"]["stored"] == 8 and data["ir"]["duplicates"] == 3
    assert data["ir"]["rejected"] == 0 and data["by_kind"]["ir"] == 8
    assert data["duplicates"]["ir"] == 3
    json.dumps(data)  # JSON-ready


def test_a_second_run_skips_what_it_stored(tmp_path: Path, store: Store) -> None:
    project = tmp_path / "proj"
    shutil.copytree(SAMPLES / "mathlib", project)
    first = mine_ir(store, [], build=project)
    again = mine_ir(store, [], build=project)
    assert first.stored == 4 and first.duplicates == 1
    assert (again.seen, again.known, again.stored, again.duplicates) == (5, 5, 0, 0)
    # an edited file is new input: a comment-only edit is a duplicate of its old self
    (project / "src/stats.c").write_text("// edited\n" + (project / "src/stats.c").read_text())
    third = mine_ir(store, [], build=project)
    assert (third.known, third.duplicates, third.stored) == (4, 1, 0)


def test_permissive_only_filters_before_compiling(tmp_path: Path, store: Store) -> None:
    summary = mine_ir(store, [], build=SAMPLES, options=IROptions(permissive_only=True))
    assert dict(summary.filtered) == {"license:GPL-3.0": 3}
    assert (summary.stored, summary.duplicates) == (5, 2)
    assert raw_sql.scalar(store, "SELECT COUNT(*) FROM ir_modules WHERE license = 'GPL-3.0'") == 0
    assert ir_counts(store)["filtered_by_reason"] == {"license:GPL-3.0": 3}
    # filtered inputs are not done: a run without the filter takes them
    later = mine_ir(store, [], build=SAMPLES)
    assert (later.stored, later.duplicates, later.known) == (2, 1, 7)
    assert ir_counts(store)["filtered"] == 0


def test_a_truncated_bitcode_file_is_rejected_and_the_run_goes_on(
    tmp_path: Path, store: Store
) -> None:
    folder = tmp_path / "modules"
    folder.mkdir()
    good = compile_bitcode(SAMPLES / "mathlib/src/stats.c")
    (folder / "a_good.bc").write_bytes(good)
    (folder / "b_truncated.bc").write_bytes(good[: len(good) // 2])
    shutil.copy(SAMPLES / "mathlib/prebuilt/clamp.ll", folder / "c_good.ll")
    reporter = SilentReporter()
    summary = mine_ir(store, [folder], reporter=reporter)
    assert (summary.stored, dict(summary.rejected)) == (2, {"bitcode-error": 1})
    assert summary.failed
    (rejection,) = summary.rejections
    assert rejection.path == str(folder / "b_truncated.bc")
    assert reporter.problems == [f"{folder / 'b_truncated.bc'}: bitcode-error: {rejection.message}"]
    rows = raw_sql.query(
        store, "SELECT path, status, reason, message FROM ir_inputs WHERE status != 'stored'"
    )
    assert [tuple(r)[:3] for r in rows] == [("b_truncated.bc", "rejected", "bitcode-error")]
    assert rows[0][3] == rejection.message
    # the rejection is not "done": fixed, the file is taken on the next run
    (folder / "b_truncated.bc").write_bytes(compile_bitcode(SAMPLES / "vecops/src/dot.c"))
    again = mine_ir(store, [folder])
    assert (again.stored, again.known, again.rejected) == (1, 2, {})


def test_compile_errors_are_rejected_and_the_build_goes_on(tmp_path: Path, store: Store) -> None:
    (tmp_path / "LICENSE").write_text((LICENSE_TEXTS / "spdx-BSD-3-Clause.txt").read_text())
    (tmp_path / "ok.c").write_text("int twice(int x) { return 2 * x; }\n")
    (tmp_path / "broken.c").write_text("int f(void) { return missing; }\n")
    (tmp_path / "header.h").write_text("int not_a_unit;\n")
    summary = mine_ir(store, [], build=tmp_path)
    assert (summary.seen, summary.stored, dict(summary.rejected)) == (2, 1, {"compile-error": 1})
    assert "broken.c:1" in summary.rejections[0].message
    row = raw_sql.query(
        store, "SELECT license, language, compile_command FROM ir_inputs WHERE status = 'rejected'"
    )
    assert row[0][0] == "BSD-3-Clause" and row[0][1] == "c"
    assert row[0][2].endswith("broken.c")


def test_git_provenance_of_a_project_repository(tmp_path: Path, store: Store) -> None:
    repo = GitRepo(tmp_path / "proj")
    sha = repo.commit(
        "init",
        {
            "LICENSE": (LICENSE_TEXTS / "spdx-ISC.txt").read_text(),
            "lib/code.cc": "int answer() { return 42; }\n",
        },
    )
    repo.git("remote", "add", "origin", "https://user:secret@example.org/team/proj.git")
    summary = mine_ir(store, [], build=repo.path)
    assert summary.stored == 1
    prov = json.loads(str(raw_sql.scalar(store, "SELECT provenance FROM items WHERE kind = 'ir'")))
    assert prov["git_commit"] == sha
    assert prov["url"] == "https://example.org/team/proj.git"
    assert prov["license"] == "ISC" and prov["path"] == "lib/code.cc"
    assert raw_sql.scalar(store, "SELECT language FROM items WHERE kind = 'ir'") == "cpp"


def test_flags_reach_the_compiler(tmp_path: Path, store: Store) -> None:
    (tmp_path / "v.c").write_text("int value(void) { return VALUE; }\n")
    one = mine_ir(store, [], build=tmp_path, options=IROptions(flags=("-O0", "-DVALUE=1")))
    two = mine_ir(store, [], build=tmp_path, options=IROptions(flags=("-O0", "-DVALUE=2")))
    assert (one.stored, two.stored) == (1, 1)  # another command: a new input, a new module
    commands = [
        r[0]
        for r in raw_sql.query(store, "SELECT compile_command FROM ir_modules ORDER BY item_id")
    ]
    assert "-DVALUE=1" in commands[0] and "-DVALUE=2" in commands[1]


def test_a_missing_compiler_stops_before_anything_is_stored(tmp_path: Path, store: Store) -> None:
    (tmp_path / "a.c").write_text("int a;\n")
    with pytest.raises(CompilerNotFound):
        mine_ir(store, [], build=tmp_path, options=IROptions(cc="no-such-cc-here"))
    assert raw_sql.scalar(store, "SELECT COUNT(*) FROM ir_inputs") == 0


def test_missing_paths_are_reported_and_fail_the_run(tmp_path: Path, store: Store) -> None:
    summary = mine_ir(store, [tmp_path / "nowhere.ll"])
    assert summary.missing == [str(tmp_path / "nowhere.ll")] and summary.failed


def test_small_batches_store_the_same_corpus(tmp_path: Path, store: Store) -> None:
    summary = mine_ir(store, [SAMPLES], build=SAMPLES, batch_rows=2)
    assert (summary.stored, summary.duplicates) == (8, 3)


class _StopAfter(SilentReporter):
    """Interrupts the run (as Ctrl-C would) after ``batches`` batches were saved."""

    def __init__(self, batches: int) -> None:
        super().__init__()
        self.batches = batches

    def advance(self, count: int) -> None:
        self.batches -= 1
        if self.batches == 0:
            raise KeyboardInterrupt


def test_an_interrupted_run_resumes_where_it_stopped(store: Store) -> None:
    with pytest.raises(KeyboardInterrupt):
        mine_ir(store, [SAMPLES], build=SAMPLES, reporter=_StopAfter(3), batch_rows=1)
    saved = int(raw_sql.scalar(store, "SELECT COUNT(*) FROM ir_inputs") or 0)
    assert 3 <= saved < 11  # the third input saved is a stored module (shapes.cpp)
    resumed = mine_ir(store, [SAMPLES], build=SAMPLES)
    assert resumed.known == saved and resumed.seen == 11
    counts = ir_counts(store)
    assert (counts["stored"], counts["duplicates"], counts["rejected"]) == (8, 3, 0)
    # every stored module is still recorded as stored by its own input (none written twice)
    orphans = raw_sql.scalar(
        store,
        "SELECT COUNT(*) FROM ir_modules m WHERE NOT EXISTS (SELECT 1 FROM ir_inputs i"
        " WHERE i.item_id = m.item_id AND i.status = 'stored')",
    )
    assert orphans == 0


def test_saving_the_same_input_twice_changes_nothing(store: Store) -> None:
    """Two runs racing on one input: the second save finds it stored and leaves it."""
    (row,) = _module_rows(store)
    first = save_ir_batch(store, [row])
    second = save_ir_batch(store, [row])
    assert [r.status for r in first] == ["stored"]
    assert [(r.status, r.item_id) for r in second] == [("known", first[0].item_id)]
    assert raw_sql.query(store, "SELECT status FROM ir_inputs")[0][0] == "stored"
    assert raw_sql.scalar(store, "SELECT COUNT(*) FROM duplicates") == 0


def _module_rows(store: Store) -> list[IRModuleRow]:
    """The row for the sample .ll file, built from the real parser, hash and counts."""
    data = (SAMPLES / "mathlib/prebuilt/clamp.ll").read_bytes()
    loaded = load_module(data)
    stats = module_stats(loaded.printed, loaded.text, loaded.bitcode)
    return [
        IRModuleRow(
            source=str(SAMPLES / "mathlib"),
            path="prebuilt/clamp.ll",
            language="c",
            structural_hash=structural_hash(loaded.printed),
            input_sha256=hashlib.sha256(data).hexdigest(),
            input_format="ll",
            compile_command=None,
            project="mathlib",
            license="MIT",
            text=loaded.text,
            bitcode=loaded.bitcode,
            text_bytes=stats.text_bytes,
            bitcode_bytes=stats.bitcode_bytes,
            tokens=stats.tokens,
            functions=stats.functions,
            declarations=stats.declarations,
            globals=stats.globals,
            basic_blocks=stats.basic_blocks,
            instructions=stats.instructions,
            opcodes=stats.opcodes,
        )
    ]


def _bytes_name(folder: Path, name: bytes) -> Path:
    """``folder / name`` for a name that is not UTF-8 (Python's surrogate escapes)."""
    return folder / os.fsdecode(name)


def test_file_names_that_are_not_utf8_are_stored_escaped(tmp_path: Path, store: Store) -> None:
    folder = tmp_path / "irs"
    project = _bytes_name(folder, b"proj\xe9")
    project.mkdir(parents=True)
    (project / "LICENSE").write_text((LICENSE_TEXTS / "spdx-MIT.txt").read_text())
    shutil.copy(SAMPLES / "mathlib/prebuilt/clamp.ll", _bytes_name(folder, b"caf\xe9.ll"))
    (project / "inc.ll").write_text(
        "define i32 @inc(i32 %x) {\n  %y = add i32 %x, 1\n  ret i32 %y\n}\n"
    )
    _bytes_name(folder, b"bad\xff.ll").write_text("not IR\n")
    first = mine_ir(store, [folder])
    assert (first.stored, dict(first.rejected)) == (2, {"parse-error": 1})
    inputs = raw_sql.query(store, "SELECT source, path, status FROM ir_inputs ORDER BY path")
    assert [tuple(r) for r in inputs] == [
        (str(folder), "bad\\xff.ll", "rejected"),
        (str(folder), "caf\\xe9.ll", "stored"),
        (f"{folder}/proj\\xe9", "inc.ll", "stored"),
    ]
    assert first.rejections[0].path == f"{folder}/bad\\xff.ll"
    module = ir_module(store, _item(store, "inc.ll"))
    assert module is not None and module["project"] == "proj\\xe9"
    assert module["provenance"]["root"] == f"{folder}/proj\\xe9"
    again = mine_ir(store, [folder])
    assert (again.known, again.stored) == (2, 0)


def test_a_unit_whose_name_is_not_utf8_is_built_and_stored(tmp_path: Path, store: Store) -> None:
    _bytes_name(tmp_path, b"x\xe9.c").write_text("int add(int a, int b) { return a + b; }\n")
    summary = mine_ir(store, [], build=tmp_path)
    assert summary.stored == 1, summary.rejections
    module = ir_module(store, _item(store, "x\\xe9.c"))
    assert module is not None
    assert module["provenance"]["source_file"] == "x\\xe9.c"
    assert module["compile_command"].endswith("'x\\xe9.c'")
    assert mine_ir(store, [], build=tmp_path).known == 1


def test_a_latin1_comment_is_stored_and_warned_once(tmp_path: Path, store: Store) -> None:
    folder = tmp_path / "irs"
    folder.mkdir()
    data = (
        b"; by Jos\xe9\ndefine i32 @inc(i32 %x) {\n  %y = add i32 %x, 1 ; \xb1\n  ret i32 %y\n}\n"
    )
    (folder / "a.ll").write_bytes(data)
    (folder / "b.ll").write_bytes(b'@s = constant [1 x i8] c"\xe9"\n')
    reporter = SilentReporter()
    summary = mine_ir(store, [folder], reporter=reporter)
    assert (summary.stored, dict(summary.rejected)) == (1, {"not-text": 1})
    module = ir_module(store, _item(store, "a.ll"))
    assert module is not None
    assert module["text"] == data.decode("latin-1")
    sha = raw_sql.scalar(store, "SELECT input_sha256 FROM ir_inputs WHERE path = 'a.ll'")
    assert sha == hashlib.sha256(data).hexdigest()
    plain = data.replace(b"\xe9", b"e").replace(b"\xb1", b"+-")
    assert module["structural_hash"] == structural_hash(load_module(plain).printed)
    assert reporter.problems == [
        f"{folder / 'a.ll'}: lines 1, 3: comment bytes that are not UTF-8 were read as Latin-1",
        f"{folder / 'b.ll'}: not-text: line 1, column 26: byte 0xE9 is not UTF-8"
        " (only a comment may hold such bytes; not IR?)",
    ]
    again = mine_ir(store, [folder])
    assert (again.known, again.stored) == (1, 0)
