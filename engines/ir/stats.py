"""Per-module statistics: functions, blocks, instructions, opcodes, sizes and tokens.

Counted on the module as LLVM prints it (see :mod:`engines.ir.lexer`): a defined
function per ``define``, a basic block per terminator (a verified block ends in exactly
one), an instruction per line that starts one. Sizes are those of the stored forms; the
token count is the lexer's count over the stored text (comments excluded), a
vocabulary-free stand-in for ComPile's BPE token counts.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from engines.ir.lexer import TERMINATORS, Entity, count_tokens, entities, opcode_of


@dataclass(frozen=True)
class ModuleStats:
    """Counts and sizes of one module."""

    functions: int
    declarations: int
    globals: int
    basic_blocks: int
    instructions: int
    text_bytes: int
    bitcode_bytes: int
    tokens: int
    opcodes: dict[str, int] = field(default_factory=dict)


def module_stats(
    printed: str, text: str, bitcode: bytes, ents: Sequence[Entity] | None = None
) -> ModuleStats:
    """Statistics of one module from LLVM's printout (or its entities, when the caller
    has split it already) and its stored text and bitcode."""
    functions = declarations = globals_ = 0
    opcodes: Counter[str] = Counter()
    for ent in entities(printed) if ents is None else ents:
        if ent.kind == "define":
            functions += 1
            for line in ent.lines[1:]:
                opcode = opcode_of(line)
                if opcode is not None:
                    opcodes[opcode] += 1
        elif ent.kind == "declare":
            declarations += 1
        elif ent.kind in ("global", "external"):
            globals_ += 1
    return ModuleStats(
        functions=functions,
        declarations=declarations,
        globals=globals_,
        basic_blocks=sum(n for op, n in opcodes.items() if op in TERMINATORS),
        instructions=sum(opcodes.values()),
        text_bytes=len(text.encode("utf-8")),
        bitcode_bytes=len(bitcode),
        tokens=count_tokens(text),
        opcodes=dict(sorted(opcodes.items())),
    )
