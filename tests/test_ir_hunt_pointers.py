"""One module as a typed-pointer compiler (clang 14) and an opaque-pointer one (clang 15)
write it hashes alike: no-op pointer casts and trailing zero GEP indices are gone."""

from __future__ import annotations

import pytest

from engines.ir.ingest import load_module
from engines.ir.structural_hash import structural_hash

TYPED = """\
%P = type { i16, i16 }
@t = global [4 x %P] zeroinitializer, align 16
@at = global i16* getelementptr inbounds ([4 x %P], [4 x %P]* @t, i64 0, i64 1, i32 0), align 8

define i16 @first(i8* %p, i1 %c) {
entry:
  %q = bitcast i8* %p to i16*
  %r = bitcast i16* %q to i32*
  %v = load i16, i16* %q, align 2
  %w = load i16, i16* getelementptr inbounds ([4 x %P], [4 x %P]* @t, i64 0, i64 2, i32 0), align 8
  %f = getelementptr inbounds %P, %P* bitcast ([4 x %P]* @t to %P*), i64 3, i32 0
  %x = load i16, i16* %f, align 2
  store i32 7, i32* %r, align 4
  br i1 %c, label %one, label %two
one:
  br label %two
two:
  %s = phi i16* [ %q, %entry ], [ %f, %one ]
  %y = load i16, i16* %s, align 2
  %a = add i16 %v, %w
  %b = add i16 %a, %x
  %z = add i16 %b, %y
  ret i16 %z
}
"""

OPAQUE = """\
%P = type { i16, i16 }
@t = global [4 x %P] zeroinitializer, align 16
@at = global ptr getelementptr inbounds ([4 x %P], ptr @t, i64 0, i64 1), align 8

define i16 @first(ptr %p, i1 %c) {
entry:
  %v = load i16, ptr %p, align 2
  %w = load i16, ptr getelementptr inbounds ([4 x %P], ptr @t, i64 0, i64 2), align 8
  %f = getelementptr inbounds %P, ptr @t, i64 3
  %x = load i16, ptr %f, align 2
  store i32 7, ptr %p, align 4
  br i1 %c, label %one, label %two
one:
  br label %two
two:
  %s = phi ptr [ %p, %entry ], [ %f, %one ]
  %y = load i16, ptr %s, align 2
  %a = add i16 %v, %w
  %b = add i16 %a, %x
  %z = add i16 %b, %y
  ret i16 %z
}
"""


def _hash(text: str) -> str:
    return structural_hash(load_module(text.encode()).printed)


def test_typed_and_opaque_pointer_forms_of_one_module_hash_alike() -> None:
    assert _hash(TYPED) == _hash(OPAQUE)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("i64 0, i64 2), align 8", "i64 0, i64 2, i32 1), align 8"),  # another field
        ("i64 3\n", "i64 3, i32 1\n"),  # another field, in an instruction
        ("i64 0, i64 1), align 8", "i64 0, i64 0), align 8"),  # another element
        ("store i32 7, ptr %p", "store i32 0, ptr %p"),  # a zero that is an operand
    ],
)
def test_indices_and_operands_that_move_the_address_still_count(old: str, new: str) -> None:
    assert old in OPAQUE
    assert _hash(OPAQUE.replace(old, new)) != _hash(OPAQUE)
