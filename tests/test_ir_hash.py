"""The structural hash: what must and must not change it, on clang's IR and generated IR."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from llvmlite import ir

from engines.ir.ingest import load_module
from engines.ir.structural_hash import canonical_entities, structural_hash
from tests.ir_samples import (
    DIFFERENT,
    SAME,
    SAMPLES,
    UNITS,
    compile_bitcode,
    compile_text,
    hash_of,
)


@pytest.fixture(scope="module")
def sample_hashes() -> dict[str, str]:
    return {unit: hash_of(compile_bitcode(SAMPLES / unit)) for unit in UNITS}


@pytest.mark.parametrize(("a", "b"), SAME)
def test_modules_differing_only_in_names_or_comments_hash_alike(
    sample_hashes: dict[str, str], a: str, b: str
) -> None:
    assert sample_hashes[a] == sample_hashes[b]


@pytest.mark.parametrize(("a", "b"), DIFFERENT)
def test_modules_differing_in_one_constant_hash_apart(
    sample_hashes: dict[str, str], a: str, b: str
) -> None:
    assert sample_hashes[a] != sample_hashes[b]


def test_the_samples_hold_seven_distinct_modules(sample_hashes: dict[str, str]) -> None:
    assert len(sample_hashes) == 10
    assert len(set(sample_hashes.values())) == 7


def test_text_and_bitcode_of_one_module_hash_alike() -> None:
    source = SAMPLES / "mathlib/src/stats.c"
    # clang 14's .ll has typed pointers and an older data layout; LLVM upgrades both
    assert hash_of(compile_text(source)) == hash_of(compile_bitcode(source))


def test_debug_info_does_not_change_the_hash() -> None:
    source = SAMPLES / "geomkit/src/area.cpp"
    plain = compile_bitcode(source)
    with_debug = compile_bitcode(source, "-O0", "-g")
    assert "!dbg" in load_module(with_debug).printed
    assert hash_of(plain) == hash_of(with_debug)


def test_source_file_name_and_module_id_do_not_change_the_hash() -> None:
    text = (SAMPLES / "mathlib/prebuilt/clamp.ll").read_text()
    renamed = text.replace('"clamp.c"', '"elsewhere/other_name.c"').replace(
        "ModuleID = 'clamp.c'", "ModuleID = 'x.bc'"
    )
    assert renamed != text
    assert hash_of(renamed) == hash_of(text)


def test_optimisation_level_changes_the_module() -> None:
    source = SAMPLES / "mathlib/src/sum.c"
    # -O2 without LLVM passes still adds lifetime markers and TBAA: a different module
    assert hash_of(compile_bitcode(source, "-O0")) != hash_of(compile_bitcode(source, "-O2"))


GLOBALS = """
%struct.pair = type { i32, i64 }
@counter = internal global i32 7
@table = global [2 x i32] [i32 1, i32 2]
declare i32 @external_fn(i32)
"""
FIRST = """
define i32 @first(i32 %a) {
entry:
  %x = add nsw i32 %a, 1
  %c = icmp slt i32 %x, 10
  br i1 %c, label %small, label %big
small:
  %r = call i32 @external_fn(i32 %x)
  ret i32 %r
big:
  %g = load i32, ptr @counter
  ret i32 %g
}
"""
SECOND = """
define i64 @second(ptr %p) {
  %f = getelementptr inbounds %struct.pair, ptr %p, i32 0, i32 1
  %v = load i64, ptr %f
  %t = call i32 @first(i32 3)
  ret i64 %v
}
"""
HAND_WRITTEN = GLOBALS + FIRST + SECOND


def _variant(old: str, new: str) -> str:
    assert old in HAND_WRITTEN
    return HAND_WRITTEN.replace(old, new)


@pytest.mark.parametrize(
    "changed",
    [
        _variant("icmp slt", "icmp sgt"),  # a predicate
        _variant("add nsw", "add"),  # an instruction flag
        _variant("label %small, label %big", "label %big, label %small"),  # control flow
        _variant("i32 0, i32 1", "i32 0, i32 0"),  # a field index
        _variant("internal global i32 7", "internal global i32 8"),  # an initializer
        _variant("{ i32, i64 }", "{ i64, i64 }"),  # a struct layout
        _variant("@external_fn(i32 %x)", "@external_fn(i32 %a)"),  # an operand
        _variant("declare i32 @external_fn(i32)", "declare i32 @other_fn(i32)").replace(
            "call i32 @external_fn", "call i32 @other_fn"
        ),  # which external function is called
    ],
)
def test_semantic_changes_change_the_hash(changed: str) -> None:
    assert hash_of(changed) != hash_of(HAND_WRITTEN)


def test_renaming_everything_defined_keeps_the_hash() -> None:
    renamed = HAND_WRITTEN
    for old, new in [
        ("%struct.pair", '%"class.Other"'),
        ("@counter", "@n"),
        ("@table", "@t2"),
        ("@first", "@alpha"),
        ("@second", "@beta"),
        ("%small", "%s0"),
        ("small:", "s0:"),
        ("%big", "%b0"),
        ("big:", "b0:"),
        ("%x", "%xx"),
        ("entry:", "start:"),
    ]:
        renamed = renamed.replace(old, new)
    assert hash_of(renamed) == hash_of(HAND_WRITTEN)


def test_the_order_of_definitions_does_not_matter() -> None:
    lines = GLOBALS.strip().splitlines()
    reordered_globals = "\n".join([lines[0], lines[3], lines[2], lines[1]]) + "\n"
    swapped = reordered_globals + SECOND + FIRST
    assert hash_of(swapped) == hash_of(HAND_WRITTEN)


def test_metadata_and_attribute_groups_are_not_hashed() -> None:
    text = HAND_WRITTEN.replace(
        "%v = load i64, ptr %f", "%v = load i64, ptr %f, align 8, !note !3"
    ).replace("define i64 @second(ptr %p) {", "define i64 @second(ptr %p) #0 {")
    text += '\nattributes #0 = { noinline "frame-pointer"="all" }\n!3 = !{!"anything"}\n'
    base = HAND_WRITTEN.replace("%v = load i64, ptr %f", "%v = load i64, ptr %f, align 8")
    assert hash_of(text) == hash_of(base)


def test_canonical_text_holds_no_defined_names() -> None:
    _, rendered = canonical_entities(load_module(HAND_WRITTEN.encode()).printed)
    joined = "\n".join(rendered)
    for name in ("counter", "table", "first", "second", "small", "big", "pair"):
        assert name not in joined
    assert "@external_fn" in joined  # declarations keep their names


# --- properties on generated modules -------------------------------------------------

OPS = ("add", "sub", "mul", "xor", "and_", "or_")


@dataclass(frozen=True)
class FunctionSpec:
    params: int
    ops: tuple[tuple[str, int, int | None, int], ...]  # (op, lhs, rhs index or None, const)
    threshold: int
    returns: tuple[int, int]
    calls_external: bool
    calls_previous: bool


@dataclass(frozen=True)
class ModuleSpec:
    global_init: int
    field: int
    functions: tuple[FunctionSpec, ...]

    def constants(self) -> int:
        return 2 + sum(len(f.ops) + 3 for f in self.functions)

    def bump(self, index: int, delta: int) -> ModuleSpec:
        """The same module with the ``index``-th constant moved by ``delta``."""
        if index == 0:
            return replace(self, global_init=self.global_init + delta)
        if index == 1:
            return replace(self, field=self.field + delta)
        index -= 2
        functions = list(self.functions)
        for i, f in enumerate(functions):
            size = len(f.ops) + 3
            if index >= size:
                index -= size
                continue
            if index < len(f.ops):
                ops = list(f.ops)
                op, lhs, _, const = ops[index]
                ops[index] = (op, lhs, None, const + delta)  # the constant is now used
                functions[i] = replace(f, ops=tuple(ops))
            elif index == len(f.ops):
                functions[i] = replace(f, threshold=f.threshold + delta)
            elif index == len(f.ops) + 1:
                functions[i] = replace(f, returns=(f.returns[0] + delta, f.returns[1]))
            else:
                functions[i] = replace(f, returns=(f.returns[0], f.returns[1] + delta))
            break
        return replace(self, functions=tuple(functions))


small = st.integers(min_value=-1000, max_value=1000)
function_specs = st.builds(
    FunctionSpec,
    params=st.integers(1, 3),
    ops=st.lists(
        st.tuples(st.sampled_from(OPS), st.integers(0, 50), st.none() | st.integers(0, 50), small),
        min_size=1,
        max_size=6,
    ).map(tuple),
    threshold=small,
    returns=st.tuples(small, small),
    calls_external=st.booleans(),
    calls_previous=st.booleans(),
)
module_specs = st.builds(
    ModuleSpec,
    global_init=small,
    field=small,
    functions=st.lists(function_specs, min_size=1, max_size=3).map(tuple),
)
identifiers = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True)


def build(spec: ModuleSpec, salt: str, named_locals: bool) -> str:
    """The module ``spec`` describes, every defined thing named with ``salt``."""
    i32, i64 = ir.IntType(32), ir.IntType(64)
    context = ir.Context()
    module = ir.Module(name=f"m_{salt}", context=context)
    module.triple = "x86_64-pc-linux-gnu"
    pair = context.get_identified_type(f"struct.{salt}_pair")
    pair.set_body(i32, i64)
    counter = ir.GlobalVariable(module, pair, name=f"g_{salt}")
    counter.linkage = "internal"
    counter.initializer = ir.Constant(pair, [ir.Constant(i32, spec.global_init), i64(0)])
    external = ir.Function(module, ir.FunctionType(i32, [i32]), name="external_fn")

    def local(kind: str, index: int) -> str:
        return f"{kind}_{salt}_{index}" if named_locals else ""

    previous = None
    for n, fspec in enumerate(spec.functions):
        fn = ir.Function(module, ir.FunctionType(i32, [i32] * fspec.params), name=f"f_{salt}_{n}")
        for k, arg in enumerate(fn.args):
            arg.name = local("a", k)
        entry = fn.append_basic_block(local("entry", n))
        builder = ir.IRBuilder(entry)
        field = builder.gep(counter, [i32(0), i32(0)], inbounds=True, name=local("p", n))
        values: list[ir.Value] = [*fn.args, builder.load(field, name=local("l", n))]
        for k, (op, lhs, rhs, const) in enumerate(fspec.ops):
            left = values[lhs % len(values)]
            right = values[rhs % len(values)] if rhs is not None else i32(const)
            values.append(getattr(builder, op)(left, right, name=local("v", k)))
        if fspec.calls_external:
            values.append(builder.call(external, [values[-1]], name=local("e", n)))
        if fspec.calls_previous and previous is not None:
            args = [values[-1]] * len(previous.args)
            values.append(builder.call(previous, args, name=local("c", n)))
        builder.store(builder.add(values[-1], i32(spec.field)), field)
        cond = builder.icmp_signed("<", values[-1], i32(fspec.threshold), name=local("cmp", n))
        yes = fn.append_basic_block(local("yes", n))
        no = fn.append_basic_block(local("no", n))
        builder.cbranch(cond, yes, no)
        ir.IRBuilder(yes).ret(i32(fspec.returns[0]))
        ir.IRBuilder(no).ret(i32(fspec.returns[1]))
        previous = fn
    return str(module)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=module_specs, salt_a=identifiers, salt_b=identifiers, named=st.booleans())
def test_renaming_every_value_and_global_never_changes_the_hash(
    spec: ModuleSpec, salt_a: str, salt_b: str, named: bool
) -> None:
    original = build(spec, salt_a, named_locals=True)
    renamed = build(spec, salt_b, named_locals=named)
    assert hash_of(original) == hash_of(renamed)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    spec=module_specs,
    data=st.data(),
    delta=st.integers(1, 50) | st.integers(-50, -1),
)
def test_changing_any_constant_always_changes_the_hash(
    spec: ModuleSpec, data: st.DataObject, delta: int
) -> None:
    index = data.draw(st.integers(0, spec.constants() - 1), label="constant")
    bumped = spec.bump(index, delta)
    # the bumped constant may replace an operand that was a value: use it in both
    base = spec.bump(index, 0)
    assert hash_of(build(base, "x", True)) != hash_of(build(bumped, "x", True))


def test_structural_hash_is_64_hex_digits() -> None:
    digest = structural_hash(load_module(HAND_WRITTEN.encode()).printed)
    assert len(digest) == 64 and int(digest, 16) >= 0
