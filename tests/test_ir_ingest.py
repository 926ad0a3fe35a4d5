"""Reading modules with llvmlite: both formats, clear errors for bad IR, and the counts."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import llvmlite.binding as llvm
import pytest

from engines.ir.build import CompileError, compile_command, compile_unit, language_of_unit
from engines.ir.ingest import (
    IRReadError,
    expand_paths,
    language_of_source,
    load_module,
    read_input,
)
from engines.ir.lexer import count_tokens, tokens
from engines.ir.stats import module_stats
from tests.ir_samples import CLANG, SAMPLES, UNITS, compile_bitcode


@pytest.fixture(scope="module")
def bitcode() -> bytes:
    return compile_bitcode(SAMPLES / "mathlib/src/stats.c")


def test_bitcode_is_stored_as_given_and_text_is_printed(bitcode: bytes) -> None:
    loaded = load_module(bitcode)
    assert loaded.input_format == "bc"
    assert loaded.bitcode == bitcode
    assert "define dso_local void @moments_push" in loaded.text
    assert loaded.source_file == "stats.c"
    assert language_of_source(loaded.source_file) == "c"


def test_text_is_stored_as_given_and_bitcode_is_written() -> None:
    text = (SAMPLES / "mathlib/prebuilt/clamp.ll").read_text()
    loaded = load_module(text.encode())
    assert loaded.input_format == "ll"
    assert loaded.text == text  # typed pointers as clang 14 wrote them
    assert "i32*" not in loaded.printed  # LLVM's printout has opaque pointers
    assert llvm.parse_bitcode(loaded.bitcode).get_function("clamp") is not None


def test_truncated_bitcode_is_rejected_with_a_reason(bitcode: bytes) -> None:
    for cut in (len(bitcode) // 2, len(bitcode) - 3, 6):
        with pytest.raises(IRReadError) as info:
            load_module(bitcode[:cut])
        assert info.value.reason == "bitcode-error"
        assert info.value.message


def test_a_cut_that_leaves_partial_words_says_truncated(bitcode: bytes) -> None:
    with pytest.raises(IRReadError, match="truncated bitcode"):
        load_module(bitcode[: len(bitcode) - 3])


def test_text_parse_errors_give_line_and_column() -> None:
    bad = b"define i32 @f() {\n  ret i64 0\n}\n"
    with pytest.raises(IRReadError) as info:
        load_module(bad)
    assert info.value.reason == "parse-error"
    assert info.value.message.startswith("line 2, column")
    assert "<string>" not in info.value.message


def test_ir_from_a_newer_llvm_is_reported_not_crashed() -> None:
    future = b"define i32 @f() {\n  %x = fancy_new_opcode i32 1\n  ret i32 %x\n}\n"
    with pytest.raises(IRReadError) as info:
        load_module(future, "ll")
    assert info.value.reason == "parse-error"


def test_verifier_failures_are_rejected() -> None:
    bad = (
        b"define i32 @f(i1 %c) {\nentry:\n  br i1 %c, label %a, label %b\na:\n"
        b"  %x = add i32 1, 2\n  br label %b\nb:\n  ret i32 %x\n}\n"
    )
    with pytest.raises(IRReadError) as info:
        load_module(bad)
    assert info.value.reason == "invalid"
    assert "dominate" in info.value.message


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "empty"),
        (b"\xff\xfe\x00garbage", "not-text"),
        (b"BC\xc0\xde\x00\x00", "bitcode-error"),
    ],
)
def test_other_unreadable_inputs(data: bytes, reason: str) -> None:
    with pytest.raises(IRReadError) as info:
        load_module(data)
    assert info.value.reason == reason


def test_a_bc_file_that_is_not_bitcode_is_rejected() -> None:
    with pytest.raises(IRReadError, match="no BC signature"):
        load_module(b"; text\n", "bc")


def test_oversized_and_missing_files_are_refused(tmp_path: Path) -> None:
    big = tmp_path / "big.ll"
    big.write_bytes(b" " * 2048)
    with pytest.raises(IRReadError) as info:
        read_input(big, max_bytes=1024)
    assert info.value.reason == "too-large"
    with pytest.raises(IRReadError) as info:
        read_input(tmp_path / "absent.ll")
    assert info.value.reason == "unreadable"


def test_folders_are_walked_for_ir_files(tmp_path: Path) -> None:
    (tmp_path / "a" / ".hidden").mkdir(parents=True)
    for name in ("a/x.ll", "a/y.bc", "a/z.txt", "a/.hidden/h.ll", "top.ll"):
        (tmp_path / name).write_text("")
    found, missing = expand_paths([tmp_path / "a", tmp_path / "top.ll", tmp_path / "nope"])
    assert [f.name for f, _ in found] == ["x.ll", "y.bc", "top.ll"]
    assert found[0][1] == tmp_path / "a" and found[2][1] == tmp_path
    assert missing == [tmp_path / "nope"]


@pytest.mark.parametrize("unit", UNITS)
def test_counts_from_the_text_match_llvmlites_own_walk(unit: str) -> None:
    data = compile_bitcode(SAMPLES / unit)
    loaded = load_module(data)
    stats = module_stats(loaded.printed, loaded.text, loaded.bitcode)
    module = llvm.parse_bitcode(data)
    defined = [f for f in module.functions if not f.is_declaration]
    opcodes = Counter(i.opcode for f in defined for b in f.blocks for i in b.instructions)
    assert stats.functions == len(defined)
    assert stats.declarations == sum(1 for f in module.functions if f.is_declaration)
    assert stats.globals == len(list(module.global_variables))
    assert stats.basic_blocks == sum(len(list(f.blocks)) for f in defined)
    assert stats.instructions == sum(opcodes.values())
    assert stats.opcodes == dict(opcodes)
    assert stats.bitcode_bytes == len(data)
    assert stats.text_bytes == len(loaded.text.encode())
    # the counting regex agrees with the plain lexer
    lexed = sum(1 for token in tokens(loaded.text) if token[0] != ";")
    assert stats.tokens == lexed > stats.instructions


def test_token_count_ignores_comments() -> None:
    assert count_tokens("  %x = add i32 %a, 1 ; a comment with words\n") == 7


def test_translation_units_by_suffix() -> None:
    assert language_of_unit(Path("a.c")) == "c"
    assert language_of_unit(Path("a.C")) == "cpp"
    assert language_of_unit(Path("a.cc")) == "cpp"
    assert language_of_unit(Path("a.h")) is None


def test_a_compile_error_names_the_first_error(tmp_path: Path) -> None:
    (tmp_path / "bad.c").write_text("int f(void) { return undeclared_name; }\n")
    with pytest.raises(CompileError) as info:
        compile_unit(compile_command(CLANG, ("-O0",), "bad.c"), tmp_path)
    assert info.value.reason == "compile-error"
    assert "bad.c:1" in info.value.message and "undeclared_name" in info.value.message


def test_the_compile_command_stops_before_llvm_passes() -> None:
    argv = compile_command("clang", ("-O2",), "src/x.c")
    assert argv[:2] == ["clang", "-O2"]
    assert "-disable-llvm-passes" in argv and "-disable-O0-optnone" in argv
    assert argv[-3:] == ["-o", "-", "src/x.c"]


LATIN1_COMMENTS = (
    b"; ModuleID = 'caf\xe9.c'\n"
    b'@msg = constant [4 x i8] c"a;b\\00" ; \xa9 Jos\xe9 M\xfcller, 2024\n'
    b"define i32 @f(i32 %x) {\n"
    b"  ret i32 %x ; na\xefve but \xc3\xa9 (UTF-8) beside it\r\n"
    b"}\n"
)


def test_latin1_bytes_in_comments_are_read_as_latin1_not_rejected() -> None:
    loaded = load_module(LATIN1_COMMENTS)
    assert loaded.latin1_lines == (1, 2, 4)
    second = loaded.text.splitlines()[1]
    assert second == '@msg = constant [4 x i8] c"a;b\\00" ; © José Müller, 2024'
    assert "; naïve but é (UTF-8) beside it\r\n}" in loaded.text
    assert loaded.text.encode("utf-8").decode("utf-8") == loaded.text  # no surrogates
    # the same module as with the comments in plain ASCII: one printout, one hash
    plain = LATIN1_COMMENTS.replace(b"\xe9", b"e").replace(b"\xa9", b"c").replace(b"\xfc", b"u")
    plain = plain.replace(b"\xef", b"i")
    assert load_module(plain).printed.splitlines()[1:] == loaded.printed.splitlines()[1:]
    assert load_module(LATIN1_COMMENTS).text == loaded.text  # the same text every time


@pytest.mark.parametrize(
    ("data", "where"),
    [
        (b'@s = constant [2 x i8] c"\xe9\\00"\n', "line 1, column 26: byte 0xE9"),
        (b'; ok\n@"caf\xe9" = global i32 0 ; \xe9\n', "line 2, column 6: byte 0xE9"),
        (b'@"a;\xe9" = global i32 0\n', "line 1, column 5: byte 0xE9"),
    ],
)
def test_other_bytes_that_are_not_utf8_are_one_line_naming_line_and_column(
    data: bytes, where: str
) -> None:
    with pytest.raises(IRReadError) as info:
        load_module(data)
    assert info.value.reason == "not-text"
    assert info.value.message.startswith(where) and "\n" not in info.value.message
