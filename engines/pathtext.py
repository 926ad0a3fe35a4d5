"""File names as text that can be stored and printed.

Python hands over a file name whose bytes are not UTF-8 with each such byte as a lone
surrogate (``caf\\udce9.cl``), which SQLite, JSON files and terminals refuse. Stored
keys, paths and sources use :func:`path_text` instead: a UTF-8 name is kept as it is,
each byte that is not UTF-8 is written ``\\xNN`` (``caf\\xe9.cl``), so the same file
always gets the same text and the bytes can be read back from it.
"""

from __future__ import annotations


def path_text(name: str) -> str:
    """``name`` (from ``os``, ``pathlib`` or git) with its undecodable bytes as ``\\xNN``."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raw = name.encode("utf-8", "surrogateescape" if _only_escapes(name) else "surrogatepass")
        return raw.decode("utf-8", "backslashreplace")
    return name


def _only_escapes(name: str) -> bool:
    """Every surrogate in ``name`` stands for one byte (U+DC80 to U+DCFF)."""
    return all(not 0xD800 <= ord(c) <= 0xDFFF or 0xDC80 <= ord(c) <= 0xDCFF for c in name)
