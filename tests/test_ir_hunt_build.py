"""``curator mine ir --build`` given several source trees at once."""

from __future__ import annotations

import re
from pathlib import Path

from store import open_store
from tests import raw_sql

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _tree(root: Path, name: str, body: str) -> Path:
    root.mkdir()
    (root / f"{name}.c").write_text(body)
    return root


def test_every_build_option_is_built_not_only_the_last(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # a repeated --build kept only its last folder, silently dropping the others
    first = _tree(tmp_path / "one", "twice", "int twice(int x) { return 2 * x; }\n")
    second = _tree(tmp_path / "two", "thrice", "int thrice(int x) { return 3 * x + 1; }\n")
    result = cli("mine", "ir", "--build", str(first), "--build", str(second), "--jobs", "1")
    assert result.exit_code == 0, result.output
    assert "ir: seen 2, stored 2," in ANSI.sub("", result.stdout)
    with open_store(tmp_path / "cli.db", create=False) as store:
        paths = raw_sql.query(store, "SELECT source, path FROM ir_inputs ORDER BY path")
    assert [(Path(r[0]).name, r[1]) for r in paths] == [("two", "thrice.c"), ("one", "twice.c")]


def test_a_missing_folder_among_several_builds_is_a_usage_error(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    first = _tree(tmp_path / "one", "twice", "int twice(int x) { return 2 * x; }\n")
    result = cli("mine", "ir", "--build", str(first), "--build", str(tmp_path / "gone"))
    assert result.exit_code == 2
    assert "gone: no such folder" in " ".join(ANSI.sub("", result.output).split())


def test_a_unit_named_like_an_option_is_compiled_as_a_file(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # clang read "-fsyntax-only.c" as an (unknown) option and "-ofoo.c" as "-o foo.c":
    # a tree could choose the compiler's options by naming its files
    tree = _tree(tmp_path / "tree", "-ofoo", "int k(int x) { return x ^ 5; }\n")
    (tree / "-fsyntax-only.c").write_text("int g(int x) { return x * 3; }\n")
    result = cli("mine", "ir", "--build", str(tree), "--jobs", "1")
    assert result.exit_code == 0, result.output
    assert "ir: seen 2, stored 2," in ANSI.sub("", result.stdout)
    assert sorted(p.name for p in tree.iterdir()) == ["-fsyntax-only.c", "-ofoo.c"]
    with open_store(tmp_path / "cli.db", create=False) as store:
        commands = raw_sql.query(store, "SELECT compile_command FROM ir_inputs ORDER BY path")
    assert [c[0].rsplit(" ", 1)[1] for c in commands] == ["./-fsyntax-only.c", "./-ofoo.c"]
