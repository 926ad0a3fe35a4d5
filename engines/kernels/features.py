"""Kernel features: Grewe et al.'s static counts, CLgen's branch count, the dynamic
ones from a payload, and the combined features F1-F4 (CLgen Table 2).

Static counts are taken on the kernel's optimised (-O1) LLVM IR as llvmlite reads it:

- ``comp``: arithmetic and logic instructions plus calls to math built-ins;
- ``mem`` / ``localmem``: loads, stores and atomics on global / local pointers;
- ``coalesced``: global accesses indexed by ``get_global_id(0)`` (plus a constant);
- ``branches``: conditional branches and switches.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

import llvmlite.binding as llvm

COMPUTE_OPCODES = frozenset(
    [
        "add",
        "sub",
        "mul",
        "udiv",
        "sdiv",
        "urem",
        "srem",
        "fadd",
        "fsub",
        "fmul",
        "fdiv",
        "frem",
        "fneg",
        "shl",
        "lshr",
        "ashr",
        "and",
        "or",
        "xor",
        "icmp",
        "fcmp",
    ]
)
MEMORY_OPCODES = frozenset({"load", "store", "atomicrmw", "cmpxchg"})
_NOT_COMPUTE_CALLS = re.compile(
    r"get_(?:global|local|group)_(?:id|size)|get_num_groups|get_work_dim|barrier|fence"
    r"|vload|vstore|atomic|llvm\.(?:lifetime|memcpy|memset|dbg)"
)
_DEF = re.compile(r"^\s*(%[\w.]+)\s*=\s*(.*)$")
_GID0 = re.compile(r"call .*@_Z13get_global_idj\(i32 (?:noundef )?0\)")


def parse_ir(ir_text: str) -> llvm.ModuleRef:
    module = llvm.parse_assembly(ir_text)
    module.verify()
    return module


def instruction_count(module: llvm.ModuleRef) -> int:
    """Instructions in every function the module defines."""
    return sum(
        1
        for fn in module.functions
        if not fn.is_declaration
        for block in fn.blocks
        for _ in block.instructions
    )


def _address_space(type_text: str) -> int:
    m = re.search(r"addrspace\((\d+)\)", type_text)
    return int(m.group(1)) if m else 0


def _pointer_operand(ins: Any) -> Any:
    ops = list(ins.operands)
    return ops[1] if ins.opcode == "store" else ops[0]


def _definition(operand_text: str, defs: dict[str, str]) -> str:
    m = _DEF.match(operand_text)
    if m:
        return m.group(2)
    words = operand_text.strip().split()
    return defs.get(words[-1], "") if words else ""


def _is_coalesced(pointer_text: str, defs: dict[str, str]) -> bool:
    gep = _definition(pointer_text, defs)
    if not gep.startswith("getelementptr"):
        return False
    index = gep.rsplit(",", 1)[-1].split()[-1]
    for _ in range(6):
        body = defs.get(index, "")
        if not body:
            return False
        if _GID0.search(body):
            return True
        step = re.match(r"(?:sext|zext|trunc)\b.*?(%[\w.]+)", body) or re.match(
            r"(?:add|or|and)\b[^%]*(%[\w.]+),\s*-?\d+\s*$", body
        )
        if not step:
            return False
        index = step.group(1)
    return False


def static_features(module: llvm.ModuleRef) -> dict[str, int]:
    counts = {"comp": 0, "mem": 0, "localmem": 0, "coalesced": 0, "branches": 0}
    for fn in module.functions:
        if fn.is_declaration:
            continue
        defs: dict[str, str] = {}
        instructions = [ins for block in fn.blocks for ins in block.instructions]
        for ins in instructions:
            m = _DEF.match(str(ins))
            if m:
                defs[m.group(1)] = m.group(2)
        for ins in instructions:
            op = ins.opcode
            if op in COMPUTE_OPCODES:
                counts["comp"] += 1
            elif op == "call":
                callee = list(ins.operands)[-1].name
                if callee and not _NOT_COMPUTE_CALLS.search(callee):
                    counts["comp"] += 1
            elif op == "switch" or (op == "br" and len(list(ins.operands)) == 3):
                counts["branches"] += 1
            if op in MEMORY_OPCODES:
                pointer = _pointer_operand(ins)
                space = _address_space(str(pointer.type))
                if space == 1:
                    counts["mem"] += 1
                    if _is_coalesced(str(pointer), defs):
                        counts["coalesced"] += 1
                elif space == 3:
                    counts["localmem"] += 1
    return counts


def _ratio(num: float, den: float) -> float | None:
    return None if den == 0 else round(num / den, 6)


def combined(features: dict[str, Any]) -> dict[str, Any]:
    """F1-F4 from whatever raw features are present; undefined ratios are None."""
    comp, mem = features.get("comp", 0), features.get("mem", 0)
    out: dict[str, Any] = {
        "F2": _ratio(features.get("coalesced", 0), mem),
        "F4": _ratio(comp, mem),
    }
    if "transfer" in features:
        out["F1"] = _ratio(features["transfer"], comp + mem)
    if "wgsize" in features:
        local_ratio = _ratio(features.get("localmem", 0), mem)
        out["F3"] = None if local_ratio is None else round(local_ratio * features["wgsize"], 6)
    return dict(sorted(out.items()))


def with_dynamic(
    features: dict[str, Any], transfer: int, wgsize: int | Sequence[int]
) -> dict[str, Any]:
    """Stored features updated with a payload's transfer size and work-group size.

    ``wgsize`` is the work-group's shape as the checker launched it: one side for a
    1-D range, a side per dimension otherwise (``[16, 16]``); the feature is its number
    of work-items (256), the factor F3 multiplies by."""
    merged = {k: v for k, v in features.items() if not k.startswith("F")}
    items = wgsize if isinstance(wgsize, int) else math.prod(wgsize)
    merged.update(transfer=transfer, wgsize=items)
    merged.update(combined(merged))
    return merged
