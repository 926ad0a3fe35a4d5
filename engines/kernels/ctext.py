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
