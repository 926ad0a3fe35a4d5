"""The shim header: inferred types and constants for identifiers that device code
isolated from its host program commonly leaves undeclared (CLgen's Listing 1 idea,
with our own list). Only the entries a kernel uses and does not define are applied,
and only when the kernel fails to compile without them."""

from __future__ import annotations

import re

from engines.kernels.ctext import blank_comments_and_strings, identifiers

_FLOAT_TYPES = [
    "FLOAT_T",
    "FLOAT_TYPE",
    "FLOATTYPE",
    "DATA_TYPE",
    "DATATYPE",
    "DTYPE",
    "REAL",
    "REAL_T",
    "real_t",
    "Real",
    "VALUE_TYPE",
    "VALTYPE",
    "T",
    "TYPE",
    "ELEM_TYPE",
    "SCALAR",
    "scalar_t",
    "FPTYPE",
    "fptype",
]
_INT_TYPES = {
    "INDEX_TYPE": "unsigned int",
    "INT_TYPE": "int",
    "IDX_T": "int",
    "index_t": "int",
    "int8_t": "char",
    "int16_t": "short",
    "int32_t": "int",
    "int64_t": "long",
    "uint8_t": "uchar",
    "uint16_t": "ushort",
    "uint32_t": "uint",
    "uint64_t": "ulong",
    "u8": "uchar",
    "u16": "ushort",
    "u32": "uint",
    "u64": "ulong",
    "byte": "uchar",
}
_VECTOR_TYPES = {"FLOAT4_T": "float4", "VECTOR_TYPE": "float4", "FLOAT2_T": "float2"}
_CONSTANTS = {
    "WG_SIZE": "128",
    "WORK_GROUP_SIZE": "128",
    "WORKGROUP_SIZE": "128",
    "GROUP_SIZE": "128",
    "LOCAL_SIZE": "128",
    "LOCAL_WORK_SIZE": "128",
    "BLOCK_SIZE": "16",
    "BLOCKSIZE": "16",
    "BLOCK_DIM": "16",
    "TILE_SIZE": "16",
    "TILE_WIDTH": "16",
    "TILE_DIM": "16",
    "THREADS": "128",
    "NUM_THREADS": "128",
    "WARP_SIZE": "32",
    "SIMD_WIDTH": "8",
    "VECTOR_SIZE": "4",
    "RADIUS": "1",
    "KERNEL_RADIUS": "1",
    "FILTER_SIZE": "3",
    "MASK_WIDTH": "3",
    "WIDTH": "1024",
    "HEIGHT": "1024",
    "ITERATIONS": "16",
    "NUM_ITERATIONS": "16",
    "EPSILON": "1e-6f",
    "EPS": "1e-6f",
    "INF": "INFINITY",
    "PI": "3.14159265358979f",
    "M_PI_F": "3.14159265358979f",
    "TRUE": "1",
    "FALSE": "0",
}


def shim_entries() -> dict[str, str]:
    """Every entry: identifier -> the line that declares it."""
    entries = {name: f"typedef float {name};" for name in _FLOAT_TYPES}
    entries.update({name: f"typedef {t} {name};" for name, t in _INT_TYPES.items()})
    entries.update({name: f"typedef {t} {name};" for name, t in _VECTOR_TYPES.items()})
    entries.update({name: f"#define {name} {v}" for name, v in _CONSTANTS.items()})
    return entries


SHIM = shim_entries()
_DEFINED = re.compile(r"#\s*define\s+(\w+)|typedef\b[^;{]*?(\w+)\s*;|\b(?:struct|enum)\s+(\w+)")


def shim_for(source: str) -> tuple[str, list[str]]:
    """The shim lines ``source`` could use: entries it names but never declares."""
    code = blank_comments_and_strings(source, keep_strings=False)
    declared = {name for m in _DEFINED.finditer(code) for name in m.groups() if name}
    names = sorted(n for n in identifiers(code) & SHIM.keys() if n not in declared)
    header = "".join(f"{SHIM[name]}\n" for name in names)
    return header, names


def apply_shim(source: str, names: list[str]) -> str:
    """``source`` prefixed with the given shim entries."""
    return "".join(f"{SHIM[name]}\n" for name in names) + source
