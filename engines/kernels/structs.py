"""Structs passed to a kernel by value: their layout, read from the kernel's source, and
values for their fields.

ArrayFire's kernels take ``const KParam out`` (``dims[4]``, ``strides[4]``, ``offset``)
by value; without a layout there is no payload for them. The layout follows OpenCL C's
rules (C's, with a vector of 3 laid out as one of 4 and each vector aligned to its
size), from the definitions in the source the device built: ``typedef struct TAG {...}
NAME;``, ``struct TAG {...};`` and ``typedef struct TAG NAME;``. A definition holding
what a payload cannot be sure of (a pointer, a bit-field, an attribute such as
``packed``, an array size that is not a number, a preprocessor line) gives no layout:
the argument stays unsupported, with the reason.

Field values: integer fields get the value their name's role gives (as integer
scalars do: :func:`engines.kernels.payload.int_value`); an integer array read as
extents (``dims``, ``shape``, ``size``...) holds the range's sides then 1s, one read as
strides (``strides``, ``pitch``...) the matching strides (1, then the running
product); other values are random, as scalars are.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from engines.kernels.ctext import blank_comments_and_strings

_SIZES = {
    "char": ("i1", 1),
    "uchar": ("u1", 1),
    "short": ("i2", 2),
    "ushort": ("u2", 2),
    "int": ("i4", 4),
    "uint": ("u4", 4),
    "long": ("i8", 8),
    "ulong": ("u8", 8),
    "half": ("f2", 2),
    "float": ("f4", 4),
    "double": ("f8", 8),
    "size_t": ("u8", 8),
    "ptrdiff_t": ("i8", 8),
    "intptr_t": ("i8", 8),
    "uintptr_t": ("u8", 8),
}
_WORDS = {
    "signed char": "char",
    "unsigned char": "uchar",
    "unsigned short": "ushort",
    "signed short": "short",
    "signed": "int",
    "signed int": "int",
    "unsigned": "uint",
    "unsigned int": "uint",
    "unsigned long": "ulong",
    "signed long": "long",
}
_VECTOR = re.compile(r"^(u?char|u?short|u?int|u?long|float|double|half)(2|3|4|8|16)$")
_AGGREGATE = re.compile(r"\b(typedef\s+)?(struct|union)\b\s*([A-Za-z_]\w*)?\s*\{")
_TAG_ALIAS = re.compile(r"\btypedef\s+(struct|union)\s+([A-Za-z_]\w*)\s+([A-Za-z_]\w*)\s*;")
_ALIAS = re.compile(r"\btypedef\s+((?:[A-Za-z_]\w*\s+)*?[A-Za-z_]\w*)\s+([A-Za-z_]\w*)\s*;")
_DECLARATOR = r"[A-Za-z_]\w*\s*(?:\[[^\]]*\]\s*)*"
_MEMBER = re.compile(rf"^(.+?)\s+({_DECLARATOR}(?:,\s*{_DECLARATOR})*)$", re.S)
_FIELD_NAME = re.compile(r"^([A-Za-z_]\w*)((?:\s*\[[^\]]*\])*)$")
_QUALIFIERS = frozenset({"const", "volatile", "__private", "private", "__global", "global"})
_EXTENT = re.compile(r"^(?:.*dims?|.*shape|.*sizes?|.*extents?|.*lens?|.*lengths?|n)$", re.I)
_STRIDE = re.compile(r"^(?:.*strides?|.*pitch(?:es)?|.*steps?)$", re.I)


class LayoutError(Exception):
    """A definition whose layout cannot be trusted; the message says why."""


@dataclass(frozen=True)
class Leaf:
    """One scalar or vector field at its byte offset: ``count`` elements of ``kind``
    (an array or a vector; a vector of 3 takes the room of 4)."""

    path: str  # "dims", "inner.x", "arr[1].y"
    name: str  # the field's own name, for its role
    kind: str  # numpy kind code: "i4", "f4"...
    offset: int
    count: int
    index: int  # which element of an array the first of ``count`` is (vectors: 0)
    is_array: bool


@dataclass(frozen=True)
class Layout:
    """A struct's size, alignment and leaves."""

    name: str
    size: int
    align: int
    leaves: tuple[Leaf, ...]

    def dtype(self) -> np.dtype[Any]:
        names, formats, offsets = [], [], []
        for leaf in self.leaves:
            names.append(leaf.path)
            formats.append((leaf.kind, (leaf.count,)) if leaf.count > 1 else leaf.kind)
            offsets.append(leaf.offset)
        return np.dtype(
            {"names": names, "formats": formats, "offsets": offsets, "itemsize": self.size}
        )


def _split_top(text: str, sep: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "{([":
            depth += 1
        elif ch in "})]":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _close(code: str, start: int) -> int | None:
    depth = 0
    for i in range(start, len(code)):
        if code[i] == "{":
            depth += 1
        elif code[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    return None


_MAX_ELEMENTS = 1 << 20
_MAX_BYTES = 1 << 20  # a struct passed by value: the device allows far less anyway
_MAX_LEAVES = 4096


def _evaluate(node: ast.AST) -> int:
    """An integer expression of literals, ``+ - * /`` and parentheses, nothing else."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _evaluate(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and isinstance(
        node.op, ast.Add | ast.Sub | ast.Mult | ast.Div | ast.FloorDiv
    ):
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Div | ast.FloorDiv):
            if right == 0:
                raise ValueError("division by zero")
            value = int(left / right)  # C truncates toward zero
        else:
            value = {ast.Add: left + right, ast.Sub: left - right}.get(type(node.op), left * right)
        if abs(value) > _MAX_ELEMENTS:
            raise ValueError("too large")
        return value
    raise ValueError("not a number")


def _array_size(text: str, where: str) -> int:
    inner = text.strip()
    if not re.fullmatch(r"[\d\s()+*/-]+", inner) or len(inner) > 64:
        raise LayoutError(f"{where}: array size {inner!r} is not a number")
    try:
        value = _evaluate(ast.parse(inner, mode="eval").body)
    except (SyntaxError, ValueError, RecursionError) as exc:
        raise LayoutError(f"{where}: array size {inner!r}: {exc}") from None
    if value <= 0:
        raise LayoutError(f"{where}: array size {inner!r} is not a positive integer")
    return value


class StructTable:
    """The struct, union and alias definitions of one kernel source."""

    def __init__(self, source: str) -> None:
        code = blank_comments_and_strings(source, keep_strings=False)
        self.bodies: dict[str, tuple[str, str]] = {}  # "struct TAG" or alias -> (kind, body)
        self.aliases: dict[str, str] = {}
        self.cache: dict[str, Layout] = {}
        anonymous = 0
        pairs: dict[int, int] = {}
        stack: list[int] = []
        for brace in re.finditer(r"[{}]", code):
            if brace.group() == "{":
                stack.append(brace.start())
            elif stack:
                pairs[stack.pop()] = brace.start()
        for m in _AGGREGATE.finditer(code):
            if not m.group(1) and not m.group(3):
                continue  # a nested anonymous member: laid out with its parent
            close = pairs.get(m.end() - 1)
            if close is None:
                continue
            kind, tag = m.group(2), m.group(3)
            body = code[m.end() : close]
            key = f"{kind} {tag}" if tag else f"{kind} <anonymous {anonymous}>"
            anonymous += not tag
            self.bodies.setdefault(key, (kind, body))
            if m.group(1):
                end = code.find(";", close)
                for declarator in code[close + 1 : end if end >= 0 else close + 1].split(","):
                    if re.fullmatch(r"\s*[A-Za-z_]\w*\s*", declarator):
                        self.aliases.setdefault(declarator.strip(), key)
        for m in _TAG_ALIAS.finditer(code):
            self.aliases.setdefault(m.group(3), f"{m.group(1)} {m.group(2)}")
        for m in _ALIAS.finditer(code):
            words = " ".join(w for w in m.group(1).split() if w not in _QUALIFIERS)
            if words.split()[0] not in ("struct", "union"):
                self.aliases.setdefault(m.group(2), words)

    def _resolve(self, type_name: str) -> str:
        words = " ".join(w for w in type_name.split() if w not in _QUALIFIERS)
        for _ in range(8):
            target = self.aliases.get(words)
            if target is None:
                break
            words = target
        return _WORDS.get(words, words)

    def layout(self, type_name: str) -> Layout | None:
        """The layout of ``type_name`` (``KParam``, ``struct KParam_t``), None when it
        is no struct or union this source defines; raises :class:`LayoutError` when the
        definition cannot be laid out safely."""
        key = self._resolve(type_name)
        if key not in self.bodies:
            return None
        if key not in self.cache:
            kind, body = self.bodies[key]
            self.cache[key] = self._lay_out(type_name, kind, body, 0)
        return self.cache[key]

    def _lay_out(self, name: str, kind: str, body: str, depth: int) -> Layout:
        if depth > 8:
            raise LayoutError(f"struct {name}: nested too deep")
        if "#" in body:
            raise LayoutError(f"struct {name}: a preprocessor line inside its definition")
        if "__attribute__" in body:
            raise LayoutError(f"struct {name}: an attribute inside its definition")
        leaves: list[Leaf] = []
        offset = size = 0
        align = 1
        for statement in _split_top(body, ";"):
            statement = statement.strip()
            if not statement:
                continue
            nested = re.match(r"^(struct|union)\s*([A-Za-z_]\w*)?\s*\{", statement)
            if nested:
                close = _close(statement, nested.end() - 1)
                if close is None:
                    raise LayoutError(f"struct {name}: a member's braces do not match")
                inner = self._lay_out(
                    f"{name}.<member>",
                    nested.group(1),
                    statement[nested.end() : close],
                    depth + 1,
                )
                type_layout: Layout | tuple[str, int, int] = inner
                declarators = statement[close + 1 :]
            else:
                outside = re.sub(r"\[[^\]]*\]", "[]", statement)
                if "*" in outside or "(" in outside or ":" in outside:
                    raise LayoutError(
                        f"struct {name}: member {statement!r} is a pointer, a function"
                        " or a bit-field"
                    )
                m = _MEMBER.match(statement)
                if m is None:
                    raise LayoutError(f"struct {name}: cannot read member {statement!r}")
                type_layout = self._member_type(name, m.group(1))
                declarators = m.group(2)
            for declarator in _split_top(declarators, ","):
                declarator = declarator.strip()
                outside = re.sub(r"\[[^\]]*\]", "[]", declarator)
                if "*" in outside or ":" in outside or "(" in outside:
                    raise LayoutError(
                        f"struct {name}: member {declarator!r} is a pointer, a function"
                        " or a bit-field"
                    )
                field = _FIELD_NAME.match(declarator)
                if field is None:
                    raise LayoutError(f"struct {name}: cannot read member {declarator!r}")
                count = 1
                for dim in re.findall(r"\[([^\]]*)\]", field.group(2)):
                    count *= _array_size(dim, f"struct {name}, member {field.group(1)}")
                member_size, member_align = (
                    (type_layout.size, type_layout.align)
                    if isinstance(type_layout, Layout)
                    else (type_layout[1], type_layout[2])
                )
                at = 0 if kind == "union" else -(-offset // member_align) * member_align
                offset = at + member_size * count
                fields = count * len(type_layout.leaves) if isinstance(type_layout, Layout) else 1
                if offset > _MAX_BYTES or len(leaves) + fields > _MAX_LEAVES:
                    raise LayoutError(f"struct {name}: too large for a payload")
                if kind != "union" or not leaves:  # a union's payload is its first member
                    leaves += _leaves(field.group(1), type_layout, at, count, bool(field.group(2)))
                size = max(size, offset)
                align = max(align, member_align)
        size = -(-size // align) * align
        return Layout(name, size or align, align, tuple(leaves))

    def _member_type(self, name: str, type_text: str) -> Layout | tuple[str, int, int]:
        resolved = self._resolve(type_text)
        if resolved.startswith(("struct ", "union ")) or resolved in self.bodies:
            if resolved not in self.bodies:
                raise LayoutError(f"struct {name}: member type {type_text!r} is not defined")
            kind, body = self.bodies[resolved]
            return self._lay_out(resolved, kind, body, 1)
        if resolved in _SIZES:
            code, size = _SIZES[resolved]
            return (code, size, size)
        vector = _VECTOR.match(resolved)
        if vector:
            code, size = _SIZES[vector.group(1)]
            width = int(vector.group(2))
            room = 4 if width == 3 else width
            return (f"{code}:{room}", size * room, size * room)
        raise LayoutError(f"struct {name}: member type {type_text!r} has no known layout")


def _leaves(
    name: str, member: Layout | tuple[str, int, int], at: int, count: int, is_array: bool
) -> list[Leaf]:
    if isinstance(member, Layout):
        out = []
        for i in range(count):
            prefix = f"{name}[{i}]" if is_array else name
            base = at + i * member.size
            out += [
                Leaf(
                    f"{prefix}.{leaf.path}",
                    leaf.name,
                    leaf.kind,
                    base + leaf.offset,
                    leaf.count,
                    leaf.index,
                    leaf.is_array,
                )
                for leaf in member.leaves
            ]
        return out
    code, size, _align = member
    if ":" in code:  # a vector, laid out with the room of its padded width
        kind, room = code.split(":")
        if count == 1:
            return [Leaf(name, name, kind, at, int(room), 0, False)]
        return [
            Leaf(f"{name}[{i}]", name, kind, at + i * size, int(room), 0, True)
            for i in range(count)
        ]
    return [Leaf(name, name, code, at, count, 0, is_array)]


def struct_value(
    layout: Layout,
    rng: np.random.Generator,
    extents: list[int],
    int_value: Callable[[str], int],
    random_int_range: int,
) -> np.ndarray:
    """A 0-d array of the struct's dtype with every field filled (see the module
    docstring): ``extents`` are the sides an array of extents holds (1 past them),
    ``int_value(name)`` the value an integer named ``name`` gets."""
    value = np.zeros((), dtype=layout.dtype())
    sides = [*extents, *([1] * 16)]
    for leaf in layout.leaves:
        kind = np.dtype(leaf.kind)
        if np.issubdtype(kind, np.floating):
            numbers: list[Any] = list(rng.random(leaf.count).astype(kind))
        elif leaf.is_array and _EXTENT.match(leaf.name):
            numbers = sides[leaf.index : leaf.index + leaf.count]
        elif leaf.is_array and _STRIDE.match(leaf.name):
            running = [1]
            for side in sides[: leaf.index + leaf.count]:
                running.append(running[-1] * side)
            numbers = running[leaf.index : leaf.index + leaf.count]
        elif not leaf.is_array:
            numbers = [int_value(leaf.name)] * leaf.count
        else:
            numbers = list(rng.integers(0, random_int_range, leaf.count))
        if np.issubdtype(kind, np.integer):
            info = np.iinfo(kind)
            numbers = [max(min(int(n), info.max), info.min) for n in numbers]
        value[leaf.path] = numbers if leaf.count > 1 else numbers[0]
    return value
