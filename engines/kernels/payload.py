"""Payloads for a kernel's arguments, by CLgen's rules (section 5.1).

For a global size ``S``: global and constant pointers get host buffers of ``S`` elements
filled with random values, local pointers get device-only buffers of ``S`` elements,
integer scalars get ``S``, other scalars get random values. The same seed always gives
the same payload, so two payloads with one seed are equal and two seeds differ.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

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

    def global_indices(self) -> list[int]:
        return [i for i, s in enumerate(self.specs) if s.is_pointer and s.address != "local"]

    def transfer_bytes(self) -> int:
        """Bytes moved: every global buffer in, and every non-const one back out."""
        total = 0
        for i in self.global_indices():
            nbytes = int(self.values[i].nbytes)
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


def make_payload(specs: list[ArgSpec], global_size: int, seed: int) -> Payload:
    """A payload for ``specs``; raises :class:`UnsupportedArgument` when none applies."""
    rng = np.random.default_rng(seed)
    values: list[Any] = []
    for spec in specs:
        dtype, width = spec.element()
        if spec.is_pointer:
            if spec.address == "private":
                raise UnsupportedArgument(f"argument {spec.name}: private pointer")
            count = global_size * width
            if spec.address == "local":
                values.append(int(np.dtype(dtype).itemsize * count))
            else:
                values.append(_random(rng, dtype, count))
        elif width > 1:
            values.append(_random(rng, dtype, width))
        elif np.issubdtype(dtype, np.integer):
            values.append(np.array(min(global_size, np.iinfo(dtype).max), dtype=dtype))
        else:
            values.append(_random(rng, dtype, 1).reshape(()))
    return Payload(values, list(specs))
