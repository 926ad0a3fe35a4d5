"""Small lexical helpers for C-family text: comments, strings and identifiers."""

from __future__ import annotations

import re

IDENT = re.compile(r"[A-Za-z_]\w*")

# A string or char literal, a comment, or anything else one character at a time.
_LEXEME = re.compile(
    r'"(?:\\.|[^"\\\n])*"?'  # string literal (unterminated ones end at the line)
    r"|'(?:\\.|[^'\\\n])*'?"  # char literal
    r"|//[^\n]*"  # line comment
    r"|/\*.*?(?:\*/|\Z)",  # block comment
    re.DOTALL,
)


def blank_comments_and_strings(text: str, keep_strings: bool = True) -> str:
    """``text`` with comments replaced by spaces (newlines kept, so offsets and line
    numbers stay put); string and char literals are blanked too unless ``keep_strings``."""

    def repl(m: re.Match[str]) -> str:
        s = m.group(0)
        if s.startswith(("//", "/*")) or not keep_strings:
            return "".join(c if c == "\n" else " " for c in s)
        return s

    return _LEXEME.sub(repl, text)


def strip_comments(text: str) -> str:
    """Comments removed (a block comment becomes one space), literals untouched."""

    def repl(m: re.Match[str]) -> str:
        s = m.group(0)
        if s.startswith("//"):
            return ""
        if s.startswith("/*"):
            return " " + "\n" * s.count("\n")
        return s

    return _LEXEME.sub(repl, text)


def identifiers(code: str) -> set[str]:
    """Identifiers in code whose comments and literals are already blanked."""
    return set(IDENT.findall(code))


# Built-in scalar and opaque type names of OpenCL C (vector types follow a pattern).
TYPE_WORDS = frozenset(
    {
        "bool",
        "char",
        "double",
        "event_t",
        "float",
        "half",
        "image1d_t",
        "image2d_t",
        "image3d_t",
        "int",
        "intptr_t",
        "long",
        "ptrdiff_t",
        "sampler_t",
        "short",
        "signed",
        "size_t",
        "uchar",
        "uint",
        "uintptr_t",
        "ulong",
        "unsigned",
        "ushort",
        "void",
    }
)

# Words that are never user identifiers: C keywords, OpenCL types and qualifiers.
KEYWORDS = frozenset(
    {
        "__attribute__",
        "__constant",
        "__global",
        "__kernel",
        "__local",
        "__private",
        "__read_only",
        "__read_write",
        "__write_only",
        "auto",
        "bool",
        "break",
        "case",
        "char",
        "const",
        "constant",
        "continue",
        "default",
        "do",
        "double",
        "else",
        "enum",
        "event_t",
        "extern",
        "false",
        "float",
        "for",
        "global",
        "goto",
        "half",
        "if",
        "image1d_t",
        "image2d_t",
        "image3d_t",
        "inline",
        "int",
        "intptr_t",
        "kernel",
        "local",
        "long",
        "private",
        "ptrdiff_t",
        "read_only",
        "read_write",
        "register",
        "restrict",
        "return",
        "sampler_t",
        "short",
        "signed",
        "size_t",
        "sizeof",
        "static",
        "struct",
        "switch",
        "true",
        "typedef",
        "uchar",
        "uint",
        "uintptr_t",
        "ulong",
        "union",
        "unsigned",
        "ushort",
        "void",
        "volatile",
        "while",
        "write_only",
    }
)

# Directive names, so that scanning raw text does not take them for identifiers.
PREPROCESSOR_WORDS = frozenset(
    {
        "define",
        "elif",
        "endif",
        "ifdef",
        "ifndef",
        "include",
        "pragma",
        "undef",
    }
)
