"""A module-level structural hash of LLVM IR that ignores names, metadata and debug info.

The input is the module as LLVM prints it (llvmlite's LLVM, after parsing ``.ll`` or
``.bc``), so both forms of one module, and old typed-pointer IR, reach the same text.
What the hash keeps: opcodes, instruction flags and predicates, types (named struct
types by their layout), operand structure (which value, argument, block or global each
operand is), constants, control flow, linkage, and the target triple.

What it drops:

- names of local values and blocks (renumbered in order of first appearance);
- names of defined globals and functions, and their comdats (numbered, see below);
- names of struct types (each reference becomes a digest of its element types);
- metadata and its attachments (``!dbg``, ``!tbaa``, ``!llvm.loop`` ...), debug
  records and ``llvm.dbg.*`` calls, named metadata (``!llvm.ident`` ...);
- attribute groups (``#0``: frame pointer, target CPU, optnone: build options);
- comments, ``source_filename``, the module identifier and the data layout (it follows
  from the triple, and LLVM upgrades old layouts differently in text and bitcode);
- what only typed pointers needed: no-op pointer casts (``bitcast ptr %4 to ptr``,
  each use reading the value cast) and trailing zero GEP indices (they named the
  result's pointee type; the address is the same), so clang 14's and clang 15's IR of
  one unit match.

Names of external declarations (``declare ptr @malloc(i64)``, ``@stdout = external
global ptr``) are kept: calling ``malloc`` is not calling ``free``, and the name is all
a module says about an external symbol. Intrinsics (``llvm.*``) keep their names too.

Defined globals are numbered independently of their order in the module: each entity
is first hashed with every defined-global reference anonymous; entities are ordered by
that digest (module order breaks ties) and numbered in that order; the module hash
combines the sorted digests of the entities rendered with those numbers. Moving
functions around therefore leaves the hash unchanged, except in the rare case where
two entities differ only in which defined globals they refer to.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence

from engines.ir.lexer import Entity, entities, tokens

HASHED_KINDS = frozenset({"global", "external", "define", "declare", "comdat"})
# The data layout follows from the triple, and LLVM upgrades it differently when it
# reads text and bitcode (clang 14's .ll and .bc of one module would differ).
_UNHASHED_HEADERS = ("source_filename", "target datalayout")


def _digest(text: str, size: int = 16) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=size).hexdigest()


class _Types:
    """Named struct types, each reference replaced by a digest of its layout."""

    def __init__(self, defs: dict[str, list[str]]) -> None:
        self.defs = defs
        self.memo: dict[str, str] = {}

    def ref(self, name: str, active: frozenset[str] = frozenset()) -> str:
        known = self.memo.get(name)
        if known is not None:
            return known
        if name in active:  # a cycle cannot occur with opaque pointers; stay finite anyway
            return "%T(cycle)"
        inner = active | {name}
        body = " ".join(self.ref(t, inner) if t in self.defs else t for t in self.defs[name])
        digest = "%T" + _digest(body, 8)
        self.memo[name] = digest
        return digest


def _type_definitions(ents: Iterable[Entity]) -> dict[str, list[str]]:
    defs: dict[str, list[str]] = {}
    for ent in ents:
        if ent.kind != "type" or ent.name is None:
            continue
        toks = [t for t in tokens(ent.lines[0]) if t[0] != ";"]
        # "%name = type BODY"
        defs[ent.name] = toks[3:] if len(toks) > 3 and toks[2] == "type" else toks[2:]
    return defs


_NAME = r'(?:"[^"]*"|[-\w$.\\]+)'
# Every token the canonical form rewrites. Each alternative starts with a literal
# character, so the regex engine skips straight to candidates; keywords, types,
# numbers and punctuation are copied as they are.
_ATTACHMENT = r"![A-Za-z_.][-\w.]*[ ]!(?:\d+|\{[^{}\n]*\})"
_REWRITE = re.compile(
    r'"[^"]*"'  # a string constant, kept (it may hold "%" or "@")
    r"|;[^\n]*"  # a comment
    rf"|,[ ]{_ATTACHMENT}"  # a metadata attachment: ", !dbg !12"
    rf"|{_ATTACHMENT}"  # ... and after a function header: "!dbg !10 {"
    r"|!\d+"  # a metadata reference
    r"|#\d+"  # an attribute group reference
    rf"|@{_NAME}|%{_NAME}|\${_NAME}"  # a global, a local or type, a comdat
    rf"|\n{_NAME}:"  # a block label
)
_REF, _END = "\x00", "\x01"  # around a reference to a defined global, resolved per pass


def _is_debug_line(line: str) -> bool:
    return "#dbg_" in line or "@llvm.dbg." in line


# "%5 = bitcast ptr %4 to ptr": a cast between typed pointers (i8* to i32*) that LLVM's
# upgrade of old IR keeps once every pointer is "ptr"; newer compilers never write it
_NOOP_CAST = re.compile(
    rf"^\s*(%{_NAME})\s*=\s*bitcast\s+(ptr(?:\s+addrspace\(\d+\))?)\s+([%@]{_NAME})"
    r"\s+to\s+(ptr(?:\s+addrspace\(\d+\))?)\s*(?:,.*)?$"
)


_ZERO_INDICES = re.compile(r"(?:,\s*i(?:8|16|32|64)\s+0)+\s*$")
_GEP = re.compile(r"\bgetelementptr\b")
_GEP_FLAGS = re.compile(r"(?:\s+(?:inbounds|nuw|nusw))*\s*")
_GEP_INSTRUCTION = re.compile(rf"^\s*%{_NAME}\s*=\s*getelementptr\b")


def _without_zero_indices(line: str) -> str:
    """``line`` with the trailing zero indices of its GEPs dropped: they only name the
    type of the result, which opaque pointers no longer have, so typed-pointer IR
    (``i64 0, i64 256, i32 0, i32 0`` to reach the first field's ``i16*``) and today's
    (``i64 0, i64 256``) compute the same address."""
    if "getelementptr" not in line:
        return line
    out: list[str] = []
    pos = 0
    for m in _GEP.finditer(line):
        # a constant expression: "getelementptr [inbounds ...] (TYPE, ptr @g, IDX...)"
        open_at = line.find("(", m.end())
        if open_at < 0 or not _GEP_FLAGS.fullmatch(line[m.end() : open_at]):
            continue
        depth, close = 0, -1
        for i in range(open_at, len(line)):
            if line[i] == "(":
                depth += 1
            elif line[i] == ")":
                depth -= 1
                if depth == 0:
                    close = i
                    break
        if close < 0 or close < pos:
            continue
        out.append(_ZERO_INDICES.sub("", line[pos:close]))
        pos = close
    out.append(line[pos:])
    line = "".join(out)
    if _GEP_INSTRUCTION.match(line):
        body, sep, attachments = line.partition(", !")
        line = _ZERO_INDICES.sub("", body) + sep + attachments
    return line


def _pointer_aliases(lines: list[str]) -> tuple[list[str], dict[str, str]]:
    """A body's lines without its no-op pointer casts, and what each cast's value
    stands for (the value cast, followed through casts of casts)."""
    aliases: dict[str, str] = {}
    kept: list[str] = []
    for line in lines:
        m = _NOOP_CAST.match(line)
        if m and m.group(2).split() == m.group(4).split():
            aliases[m.group(1)] = m.group(3)
        else:
            kept.append(line)
    for name in aliases:
        target = aliases[name]
        seen = {name}
        while target in aliases and target not in seen:
            seen.add(target)
            target = aliases[target]
        aliases[name] = target
    return kept, aliases


class _Canonicalizer:
    def __init__(self, ents: list[Entity]) -> None:
        self.types = _Types(_type_definitions(ents))
        self.defined = {
            e.name
            for e in ents
            if e.kind in ("global", "define")
            and e.name is not None
            and not e.name.startswith("@llvm.")
        }

    def prepare(self, ent: Entity) -> list[str]:
        """The entity's text with locals numbered, metadata dropped, whitespace folded and
        defined globals left as references: ``[text, ref, text, ref, ..., text]``."""
        locals_: dict[str, str] = {}
        in_body = ent.kind == "define"
        types = self.types
        defined = self.defined

        def local(name: str) -> str:
            found = locals_.get(name)
            if found is None:
                found = locals_[name] = f"%{len(locals_)}"
            return found

        def rewrite(match: re.Match[str]) -> str:
            tok = match.group(0)
            tok = aliases.get(tok, tok)
            first = tok[0]
            if first == "%":
                if tok in types.defs and not (in_body and tok[1:].isdigit()):
                    return types.ref(tok)
                # outside a body: a block named in a global's initializer (blockaddress)
                return local(tok) if in_body else "%?"
            if first == "@":
                return _REF + tok + _END if tok in defined else tok
            if first == '"':
                return tok
            if first == "!":
                return "!" if tok[1].isdigit() else ""
            if first == "$":
                return _REF + tok + _END  # a comdat, named after its global
            if first == "\n":
                return "\n" + local("%" + tok[1:-1]) + ":"
            return ""  # a comment, an attachment, an attribute group

        lines = ent.lines
        aliases: dict[str, str] = {}
        if in_body:
            lines, aliases = _pointer_aliases([ln for ln in lines if not _is_debug_line(ln)])
        lines = [_without_zero_indices(line) for line in lines]
        text = " ".join(_REWRITE.sub(rewrite, "\n".join(lines)).split())
        parts: list[str] = []
        for piece in text.split(_REF):
            ref, sep, rest = piece.partition(_END)
            if sep:
                parts.append(ref)
                parts.append(rest)
            else:
                parts.append(piece)
        return parts


def _render(prepared: list[str], names: dict[str, str] | None) -> str:
    if len(prepared) == 1:
        return prepared[0]
    out = [prepared[0]]
    for i in range(1, len(prepared), 2):
        ref = prepared[i]
        if ref[0] == "$":
            target = None if names is None else names.get("@" + ref[1:])
            out.append("$?" if target is None else "$" + target[1:])
        else:
            out.append("@?" if names is None else names[ref])
        out.append(prepared[i + 1])
    return "".join(out)


def canonical_entities(
    text: str, ents: Sequence[Entity] | None = None
) -> tuple[list[str], list[str]]:
    """The canonical header lines and the canonical text of every hashed entity.

    Exposed for tests and for explaining why two modules do or do not match.
    """
    if ents is None:
        ents = list(entities(text))
    canon = _Canonicalizer(ents)
    header = [
        " ".join(t for t in tokens(e.lines[0]) if t[0] != ";")
        for e in ents
        if e.kind == "header" and not e.lines[0].startswith(_UNHASHED_HEADERS)
    ]
    hashed = [
        e
        for e in ents
        if e.kind in HASHED_KINDS and not (e.kind == "declare" and _is_debug_line(e.lines[0]))
    ]
    prepared = [canon.prepare(e) for e in hashed]
    anonymous = [_digest(_render(p, None)) for p in prepared]
    order = sorted(range(len(hashed)), key=lambda i: (anonymous[i], i))
    names: dict[str, str] = {}
    for i in order:
        ent = hashed[i]
        if ent.kind in ("global", "define") and ent.name is not None and ent.name in canon.defined:
            names.setdefault(ent.name, f"@#{len(names)}")
    for name in canon.defined - names.keys():  # defined more than once: invalid, stay total
        names[name] = f"@#{len(names)}"
    return header, [_render(p, names) for p in prepared]


def structural_hash(text: str, ents: Sequence[Entity] | None = None) -> str:
    """The module's structural hash: 64 hex digits of SHA-256."""
    header, rendered = canonical_entities(text, ents)
    digests = sorted(_digest(r) for r in rendered)
    payload = "\n".join(["structural-hash/1", *header, "--", *digests])
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()
