"""Payloads for a kernel's arguments: CLgen's rules (section 5.1) first, then shaped ones.

Policy ``clgen``, for a global size ``S``: global and constant pointers get host buffers
of ``S`` elements filled with random values, local pointers get device-only buffers of
``S`` elements, integer scalars get ``S``, other scalars get random values, over a 1-D
range of ``S``. Real kernels whose integers are a stage, a width or a stride, or that
read a 2-D range, crash under it; the checker then tries the next policy:

- ``shaped``: the range has as many dimensions as the kernel reads (``get_global_id(1)``
  makes it 2-D: 32 x 32 for S = 1024), and each integer scalar gets a value by the role
  its name gives it: an extent (``width``, ``cols`` -> the range's x side, ``height``,
  ``rows`` -> its y side, ``n``, ``size`` -> the side of a square range, or S in 1-D), a
  stage, pass, shift or direction -> 1, an offset -> 0, anything else -> 16;
- ``shaped-padded``: as ``shaped`` with every global buffer 16 times larger, for
  kernels that read a tile or a row beyond ``S``;
- ``small-padded``: as ``shaped-padded`` with every extent 16, for kernels that walk
  an ``n`` x ``n`` matrix over a 1-D range.

Every global buffer ends in a guard region that holds the same values in every payload;
a run that changes it wrote out of bounds (its own verdict). A fifth run repeats A with
other guard values: when a kernel that repeats itself gives other outputs then, it read
past its buffers (out of bounds too). The same seed always gives
the same payload, so two payloads with one seed are equal and two seeds differ; scalars
depend on the policy only, never on the seed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engines.kernels.structs import LayoutError, StructTable, struct_value

_SCALARS: dict[str, Any] = {
    "char": np.int8,
    "uchar": np.uint8,
    "unsigned char": np.uint8,
    "short": np.int16,
    "ushort": np.uint16,
    "unsigned short": np.uint16,
    "int": np.int32,
    "uint": np.uint32,
    "unsigned int": np.uint32,
    "unsigned": np.uint32,
    "long": np.int64,
    "ulong": np.uint64,
    "unsigned long": np.uint64,
    "size_t": np.uint64,
    "ptrdiff_t": np.int64,
    "intptr_t": np.int64,
    "uintptr_t": np.uint64,
    "bool": np.int8,
    "half": np.float16,
    "float": np.float32,
    "double": np.float64,
}
_TYPE = re.compile(r"^(?:const\s+|volatile\s+|restrict\s+)*([a-z_ ]+?)(2|3|4|8|16)?\s*(\**)$")
RANDOM_INT_RANGE = 100
GUARD_MIN = 4096
GUARD_MAX_BYTES = 4 * 1024 * 1024
GUARD_SEED = 97
PROBE_GUARD_SEED = 98
PADDING = 16


@dataclass(frozen=True)
class Policy:
    """How a payload is shaped: CLgen's, or by the kernel's dimensions and names."""

    name: str
    shaped: bool
    pad: int = 1
    small: bool = False  # extents (n, width, height...) get SMALL_EXTENT, not the range's


POLICIES = {
    "clgen": Policy("clgen", shaped=False),
    "shaped": Policy("shaped", shaped=True),
    "shaped-padded": Policy("shaped-padded", shaped=True, pad=PADDING),
    "small-padded": Policy("small-padded", shaped=True, pad=PADDING, small=True),
}
DEFAULT_POLICIES = ("clgen", "shaped", "shaped-padded", "small-padded")
SMALL_EXTENT = 16
_DIMENSION = re.compile(
    r"\bget_(?:global_id|local_id|group_id|global_size|local_size|num_groups)\s*\(\s*([12])\s*\)"
)
_ROLES: list[tuple[str, re.Pattern[str]]] = [
    ("stride", re.compile(r"^(?:.*pitch|.*stride)$")),
    ("x", re.compile(r"^(?:.*width|.*cols?|ncol.*|nx|dim_?x|x_?(?:size|dim|len)|w)$")),
    ("y", re.compile(r"^(?:.*height|.*rows?|nrow.*|ny|dim_?y|y_?(?:size|dim|len)|h)$")),
    ("z", re.compile(r"^(?:.*depth|nz|dim_?z|z_?(?:size|dim|len)|d|slices?)$")),
    (
        "one",
        re.compile(
            r"^(?:.*stage.*|.*pass.*|.*shift.*|.*dir(?:ection)?|.*level|.*bit|.*iter.*|log.*|.*step|flag.*|is_?.*|use_?.*)$"
        ),
    ),
    ("zero", re.compile(r"^(?:.*offset.*|.*start.*|.*begin.*|.*base|first.*)$")),
    (
        "n",
        re.compile(
            r"^(?:n|m|k|.*size.*|.*count.*|.*len.*|num.*|.*total.*|.*elements?|.*dim.*|.*_n|n_.*|max.*|.*number.*)$"
        ),
    ),
]


def dimensions(source: str) -> int:
    """How many range dimensions a kernel reads (1, 2 or 3)."""
    found = {int(m.group(1)) for m in _DIMENSION.finditer(source)}
    return 1 + max(found, default=0)


def geometry(global_size: int, dims: int) -> tuple[int, ...]:
    """A range of about ``global_size`` work-items in ``dims`` dimensions, powers of two
    split as evenly as they go (1024 -> (32, 32) or (16, 8, 8))."""
    if dims <= 1:
        return (global_size,)
    bits = max(global_size.bit_length() - 1, dims)
    sides = [1 << (bits // dims)] * dims
    for i in range(bits % dims):
        sides[i] <<= 1
    return tuple(sides)


def role(name: str) -> str:
    """The role an integer argument's name gives it (see the module docstring)."""
    key = name.lower()
    for label, pattern in _ROLES:
        if pattern.match(key):
            return label
    return "other"


def int_value(name: str, policy: Policy, shape: tuple[int, ...], global_size: int) -> int:
    """The value of an integer scalar under ``policy`` over the range ``shape``."""
    if not policy.shaped:
        return global_size
    label = role(name)
    if policy.small and label in ("x", "y", "z", "n"):
        return SMALL_EXTENT
    if label == "x":
        return shape[0] if len(shape) > 1 else global_size
    if label == "stride":
        return shape[0] if len(shape) > 1 else 1
    if label == "y":
        return shape[1] if len(shape) > 1 else 1
    if label == "z":
        return shape[2] if len(shape) > 2 else 1
    if label == "n":
        return shape[0] if len(shape) > 1 else global_size
    return {"one": 1, "zero": 0}.get(label, 16)


class UnsupportedArgument(Exception):
    """An argument whose type no payload rule covers (images, samplers, structs)."""


@dataclass(frozen=True)
class ArgSpec:
    """One kernel argument as the OpenCL runtime reports it."""

    name: str
    address: str  # "global", "local", "constant" or "private"
    type_name: str  # e.g. "float*", "float4*", "int", "uint"
    const: bool = False

    @property
    def is_pointer(self) -> bool:
        return self.type_name.rstrip().endswith("*")

    def element(self) -> tuple[Any, int]:
        """The numpy scalar type and vector width of the (pointed-to) element."""
        m = _TYPE.match(" ".join(self.type_name.split()))
        if not m or m.group(1).strip() not in _SCALARS or len(m.group(3)) > 1:
            raise UnsupportedArgument(f"argument {self.name}: unsupported type {self.type_name}")
        return _SCALARS[m.group(1).strip()], int(m.group(2) or 1)


@dataclass
class Payload:
    """Values for every argument: numpy arrays for buffers and scalars, byte counts
    for local buffers."""

    values: list[Any]
    specs: list[ArgSpec]
    data_sizes: dict[int, int] = field(default_factory=dict)  # global buffer -> payload elements
    policy: str = "clgen"
    shape: tuple[int, ...] = ()

    def global_indices(self) -> list[int]:
        return [i for i, s in enumerate(self.specs) if s.is_pointer and s.address != "local"]

    def data(self, index: int, array: np.ndarray | None = None) -> np.ndarray:
        """The payload part of a global buffer (``array``: a copy of it after a run)."""
        values = self.values[index] if array is None else array
        return values[: self.data_sizes.get(index, len(values))]

    def guard_changed(self, index: int, array: np.ndarray) -> bool:
        """Whether a run wrote into the guard region after the payload part."""
        size = self.data_sizes.get(index, len(array))
        return not np.array_equal(
            self.values[index][size:].view(np.uint8), array[size:].view(np.uint8)
        )

    def transfer_bytes(self) -> int:
        """Bytes moved: every global buffer in, and every non-const one back out (the
        payload part; guards are not counted)."""
        total = 0
        for i in self.global_indices():
            nbytes = int(self.data(i).nbytes)
            total += nbytes
            if not self.specs[i].const and self.specs[i].address != "constant":
                total += nbytes
        return total


_TYPEDEF = re.compile(r"\btypedef\s+((?:[A-Za-z_]\w*\s+)*?[A-Za-z_]\w*)\s+([A-Za-z_]\w*)\s*;")


_TYPE_MACRO = re.compile(
    r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+"
    r"((?:unsigned |signed )?[a-z]+(?:2|3|4|8|16)?)[ \t]*$",
    re.MULTILINE,
)


def typedefs(source: str) -> dict[str, str]:
    """Simple ``typedef TYPE NAME;`` and ``#define NAME TYPE`` aliases in a kernel's source."""
    found = {m.group(2): " ".join(m.group(1).split()) for m in _TYPEDEF.finditer(source)}
    found.update((m.group(1), m.group(2)) for m in _TYPE_MACRO.finditer(source))
    return found


def resolve_type(type_name: str, aliases: dict[str, str]) -> str:
    """``type_name`` with typedef names replaced by what they stand for."""
    stars = type_name.count("*")
    base = type_name.replace("*", "").strip()
    for _ in range(8):
        words = base.split()
        if not words or words[-1] not in aliases:
            break
        base = " ".join([*words[:-1], aliases[words[-1]]])
    return base + "*" * stars


def _random(rng: np.random.Generator, dtype: Any, count: int) -> np.ndarray:
    if np.issubdtype(dtype, np.floating):
        return rng.random(count).astype(dtype)
    return rng.integers(0, RANDOM_INT_RANGE, count).astype(dtype)


def make_payload(
    specs: list[ArgSpec],
    global_size: int,
    seed: int,
    policy: Policy | str = "clgen",
    shape: tuple[int, ...] | None = None,
    guard_seed: int = GUARD_SEED,
    role_names: list[str] | None = None,
    structs: StructTable | None = None,
) -> Payload:
    """A payload for ``specs`` under ``policy`` over the range ``shape`` (1-D ``S`` when
    None); raises :class:`UnsupportedArgument` when no rule applies to an argument.

    Each global buffer's guard holds ``S`` times its payload part (at most 4 MiB, at
    least 4096 elements), so a kernel that indexes a row of ``S`` by a size of ``S``
    still lands in it; ``guard_seed`` fills it (the probe run changes only that).
    ``role_names`` are the argument names roles are read from (the kernel's names as
    written, when ``specs`` come from a renamed, normalised kernel). ``structs``: the
    kernel source's struct definitions, for structs passed by value
    (:mod:`engines.kernels.structs`); without them a struct is unsupported."""
    if role_names is None or len(role_names) != len(specs):
        role_names = [spec.name for spec in specs]
    rule = POLICIES[policy] if isinstance(policy, str) else policy
    shape = shape or (global_size,)
    rng = np.random.default_rng(seed)
    guard_rng = np.random.default_rng(guard_seed)
    # a struct's fields are read by their names' roles under every policy (CLgen's has
    # no rule for structs): the sides of the range, strides, an offset of 0
    field_rule = rule if rule.shaped else POLICIES["shaped"]
    values: list[Any] = []
    sizes: dict[int, int] = {}
    for index, spec in enumerate(specs):
        written = role_names[index]
        label = spec.name if written == spec.name else f"{spec.name} ({written} as written)"
        layout = None
        if structs is not None and not spec.is_pointer:
            try:
                layout = structs.layout(spec.type_name)
            except LayoutError as exc:
                raise UnsupportedArgument(f"argument {label}: {exc}") from None
        if layout is not None:
            values.append(
                struct_value(
                    layout,
                    rng,
                    _extents(rule, shape),
                    lambda name: int_value(name, field_rule, shape, global_size),
                    RANDOM_INT_RANGE,
                )
            )
            continue
        try:
            dtype, width = spec.element()
        except UnsupportedArgument:
            raise UnsupportedArgument(
                f"argument {label}: unsupported type {spec.type_name}"
            ) from None
        if spec.is_pointer:
            if spec.address == "private":
                raise UnsupportedArgument(f"argument {label}: private pointer")
            count = global_size * width * rule.pad
            if spec.address == "local":
                values.append(int(np.dtype(dtype).itemsize * global_size * width))
            else:
                most = GUARD_MAX_BYTES // np.dtype(dtype).itemsize
                guard = _random(guard_rng, dtype, max(GUARD_MIN, min(count * global_size, most)))
                values.append(np.concatenate([_random(rng, dtype, count), guard]))
                sizes[index] = count
        elif width > 1:
            values.append(_random(rng, dtype, width))
        elif np.issubdtype(dtype, np.integer):
            wanted = int_value(role_names[index], rule, shape, global_size)
            info = np.iinfo(dtype)
            values.append(np.array(max(min(wanted, info.max), info.min), dtype=dtype))
        else:
            values.append(_random(rng, dtype, 1).reshape(()))
    return Payload(values, list(specs), sizes, rule.name, tuple(shape))


def _extents(rule: Policy, shape: tuple[int, ...]) -> list[int]:
    """What an array of extents in a struct holds: the range's sides (16 each under a
    small policy)."""
    return [SMALL_EXTENT] * len(shape) if rule.small else list(shape)


_PARAM_NAME = re.compile(r"([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)*$")


def parameter_names(source: str, kernel: str) -> list[str] | None:
    """The parameter names of ``__kernel ... kernel(...)`` as written in ``source``."""
    m = re.search(rf"\b{re.escape(kernel)}\s*\(", source)
    if m is None:
        return None
    depth, start = 1, m.end()
    for end in range(start, len(source)):
        depth += {"(": 1, ")": -1}.get(source[end], 0)
        if depth == 0:
            break
    else:
        return None
    params, depth, piece = [], 0, ""
    for ch in source[start:end] + ",":
        if ch == "," and depth == 0:
            found = _PARAM_NAME.search(piece.strip())
            if piece.strip() and piece.strip() != "void":
                params.append(found.group(1) if found else "")
            piece = ""
            continue
        depth += {"(": 1, ")": -1, "[": 1, "]": -1}.get(ch, 0)
        piece += ch
    return params
