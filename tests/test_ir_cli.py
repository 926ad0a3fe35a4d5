"""``curator mine ir`` and ``curator stats --kind ir`` as a user runs them."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from store import open_store
from tests import raw_sql
from tests.ir_samples import SAMPLES, compile_bitcode

ANSI = re.compile(r"\x1b\[[0-9;]*m")
SUMMARY = re.compile(
    r"ir: seen (\d+), stored (\d+), duplicates (\d+), known (\d+), filtered (\d+), rejected (\d+)"
)


def counts(stdout: str) -> tuple[int, ...]:
    match = SUMMARY.search(ANSI.sub("", stdout))
    assert match, stdout
    return tuple(int(g) for g in match.groups())


def test_build_the_samples_then_show_table_one(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli("mine", "ir", "--build", str(SAMPLES))
    assert result.exit_code == 0, result.output
    assert counts(result.stdout) == (10, 7, 3, 0, 0, 0)
    assert "IR summary" in result.stdout

    shown = cli("stats", "--kind", "ir")
    assert shown.exit_code == 0
    for heading in ("IR modules by language", "IR modules by license", "GPL-3.0", "dedup"):
        assert heading in shown.stdout

    data = json.loads(cli("stats", "--kind", "ir", "--json").stdout)
    assert data["total"]["before"]["modules"] == 10
    assert data["total"]["after"]["modules"] == 7
    assert data["by_license"]["MIT"]["before"]["modules"] == 5
    assert data["counts"]["duplicates"] == 3

    overview = json.loads(cli("stats", "--json").stdout)
    assert overview["ir"]["stored"] == 7 and overview["ir"]["rejected"] == 0
    assert "IR inputs" in cli("stats").stdout

    with open_store(tmp_path / "cli.db", create=False) as store:
        assert raw_sql.scalar(store, "SELECT COUNT(*) FROM ir_modules") == 7


def test_a_second_run_reports_known_inputs(cli) -> None:  # type: ignore[no-untyped-def]
    cli("mine", "ir", "--build", str(SAMPLES / "vecops"))
    again = cli("mine", "ir", "--build", str(SAMPLES / "vecops"))
    assert again.exit_code == 0
    assert counts(again.stdout) == (2, 0, 0, 2, 0, 0)


def test_rejected_inputs_exit_1_and_are_listed(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "in"
    folder.mkdir()
    good = compile_bitcode(SAMPLES / "vecops/src/dot.c")
    (folder / "good.bc").write_bytes(good)
    (folder / "cut.bc").write_bytes(good[:100])
    (folder / "junk.ll").write_text("this is not IR\n")
    result = cli("mine", "ir", str(folder))
    assert result.exit_code == 1
    assert counts(result.stdout) == (3, 1, 0, 0, 0, 2)
    out = ANSI.sub("", result.stdout)
    assert "Rejected inputs" in out and "cut.bc" in out and "junk.ll" in out
    assert "bitcode-error" in out and "parse-error" in out
    assert "warning:" in ANSI.sub("", result.stderr)

    data = json.loads(cli("stats", "--kind", "ir", "--json").stdout)
    assert data["counts"]["rejected_by_reason"] == {"bitcode-error": 1, "parse-error": 1}
    assert {r["path"] for r in data["rejections"]} == {"cut.bc", "junk.ll"}


def test_json_summary(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("mine", "ir", "--build", str(SAMPLES), "--permissive-only", "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["filtered"] == {"license:GPL-3.0": 3}
    assert (data["stored"], data["duplicates"], data["rejected"]) == (5, 2, {})


def test_flags_are_one_string(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    shutil.copytree(SAMPLES / "vecops", tmp_path / "vecops")
    result = cli("mine", "ir", "--build", str(tmp_path / "vecops"), "--flags", "-O2 -DNDEBUG")
    assert result.exit_code == 0, result.output
    with open_store(tmp_path / "cli.db", create=False) as store:
        commands = {r[0] for r in raw_sql.query(store, "SELECT compile_command FROM ir_modules")}
    assert commands and all(c.startswith("clang -O2 -DNDEBUG -I. -emit-llvm") for c in commands)


def test_a_tree_that_includes_from_its_root_and_include_folder_builds(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # as real projects do: re2/re2.cc has #include "re2/re2.h", others <proj/api.h>
    tree = tmp_path / "proj"
    (tree / "lib").mkdir(parents=True)
    (tree / "include" / "proj").mkdir(parents=True)
    (tree / "lib" / "sum.h").write_text("int sum(int a, int b);\n")
    (tree / "include" / "proj" / "api.h").write_text("#define SCALE 3\n")
    (tree / "lib" / "sum.c").write_text(
        '#include "lib/sum.h"\n#include <proj/api.h>\n'
        "int sum(int a, int b) { return SCALE * (a + b); }\n"
    )
    result = cli("mine", "ir", "--build", str(tree), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["stored"] == 1
    with open_store(tmp_path / "cli.db", create=False) as store:
        commands = [r[0] for r in raw_sql.query(store, "SELECT compile_command FROM ir_modules")]
    assert commands == [("clang -O0 -I. -Iinclude -emit-llvm -c -Xclang -disable-llvm-passes"
                         " -Xclang -disable-O0-optnone -o - lib/sum.c")]  # fmt: skip


def test_usage_errors_exit_2(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("mine", "ir").exit_code == 2
    (tmp_path / "a.c").write_text("int a;\n")
    missing_cc = cli("mine", "ir", "--build", str(tmp_path), "--cc", "no-such-compiler-x")
    assert missing_cc.exit_code == 2
    assert "no-such-compiler-x" in ANSI.sub("", missing_cc.stderr)
    assert cli("mine", "ir", "--build", str(tmp_path), "--flags", "'unbalanced").exit_code == 2
    assert cli("stats", "--kind", "nonsense").exit_code == 2


def test_a_missing_path_exits_1(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli("mine", "ir", str(tmp_path / "absent"))
    assert result.exit_code == 1
    assert "no such file or folder" in ANSI.sub("", result.stderr)


def test_hostile_file_names_are_printed_literally(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # a folder and a file whose joined path reads "[bold red]x[/] <ESC>[31mred.ll"
    (tmp_path / "[bold red]x[").mkdir()
    (tmp_path / "[bold red]x[" / "] \x1b[31mred.ll").write_text("not IR at all\n")
    result = cli("mine", "ir", str(tmp_path))
    assert result.exit_code == 1
    out = result.stdout + result.stderr
    assert "[bold red]x[/]" in out
    assert "\x1b[31m" not in out
