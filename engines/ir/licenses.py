"""The license of a project, as an SPDX identifier read from its LICENSE/COPYING files.

Detection looks for phrases each license text holds and its relatives do not (the
GPL mentions the Affero GPL; the LGPL v3 refers to the GPL; BSD-3-Clause is BSD-2-Clause
plus the "neither the name" clause), on text lowercased with punctuation and line breaks
flattened. A file that holds an ``SPDX-License-Identifier:`` line is taken at its word.
Anything else is ``unknown``: better to drop a module than to mislabel it.

GPL and LGPL texts do not say whether a project chose "only" or "or later" (the choice
lives in source headers), so they map to ``GPL-2.0``, ``GPL-3.0``, ``LGPL-2.1`` ...,
the identifiers GitHub's license detection reports for the same files.

Several license files all apply (``AND``) unless the project declares a choice: an
``SPDX-License-Identifier`` line with ``OR`` in a license file or the README, or a
README or license file that says the project is dual-licensed, or licensed under either
of its licenses at the user's option (facebook/zstd ships LICENSE, BSD, and COPYING,
GPLv2, and its README says "dual-licensed under BSD OR GPLv2"); the licenses found are
then alternatives (``OR``). The GPL's own "(at your option) any later version" is no
such declaration.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

UNKNOWN = "unknown"
PERMISSIVE = frozenset({"MIT", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause"})
MAX_LICENSE_BYTES = 256 * 1024

_FILE_NAME = re.compile(r"^(licen[cs]e|copying|unlicense)([-._].*)?$", re.IGNORECASE)
_SPDX_LINE = re.compile(r"SPDX-License-Identifier:\s*([A-Za-z0-9.+\- ()]+)")


def _flat(text: str) -> str:
    text = text.lower().replace("\u2019", "'").replace("\u201c", '"').replace("\u201d", '"')
    text = re.sub(r"[^a-z0-9.,;:'\"()/@-]+", " ", text)
    return " ".join(text.split())


def _has(text: str, *phrases: str) -> bool:
    return all(phrase in text for phrase in phrases)


_GNU_TITLES = (
    ("gnu affero general public license version 3, 19 november 2007", "AGPL-3.0"),
    ("gnu lesser general public license version 3, 29 june 2007", "LGPL-3.0"),
    ("gnu lesser general public license version 2.1, february 1999", "LGPL-2.1"),
    ("gnu library general public license version 2, june 1991", "LGPL-2.0"),
    ("gnu general public license version 3, 29 june 2007", "GPL-3.0"),
    ("gnu general public license version 2, june 1991", "GPL-2.0"),
)


def _gnu(text: str) -> str | None:
    for title, spdx in _GNU_TITLES:
        if title in text:
            return spdx
    return None


def _bsd(text: str) -> str | None:
    if not _has(text, "redistribution and use in source and binary forms"):
        return None
    if "all advertising materials mentioning features" in text:
        return "BSD-4-Clause"
    if "neither the name" in text or "names of its contributors may not be used" in text:
        return "BSD-3-Clause"
    if "redistributions of source code must retain" in text:
        return "BSD-2-Clause"
    return UNKNOWN


def _apache(text: str) -> str | None:
    if not _has(text, "apache license", "version 2.0"):
        return None
    if "llvm exceptions to the apache 2.0 license" in text:
        return "Apache-2.0 WITH LLVM-exception"
    return "Apache-2.0"


def _simple(text: str) -> str | None:
    if _has(
        text,
        "permission is hereby granted, free of charge, to any person obtaining a copy",
        "the above copyright notice and this permission notice shall be included",
    ):
        return "MIT"
    if _has(text, "mozilla public license", "2.0") and "mozilla public license version 1.1" not in (
        text
    ):
        return "MPL-2.0"
    if _has(
        text,
        "permission to use, copy, modify, and",
        "distribute this software for any purpose with or without fee is hereby granted",
        'the software is provided "as is" and the author disclaims all warranties',
    ):
        return "ISC"
    if "this is free and unencumbered software released into the public domain" in text:
        return "Unlicense"
    if _has(text, "boost software license - version 1.0"):
        return "BSL-1.0"
    if _has(
        text,
        "this software is provided 'as-is', without any express or implied warranty",
        "permission is granted to anyone to use this software for any purpose",
    ):
        return "Zlib"
    return None


_DETECTORS: tuple[Callable[[str], str | None], ...] = (_gnu, _apache, _bsd, _simple)


def detect_license_text(text: str) -> str:
    """The SPDX identifier of one license file's text, or ``unknown``."""
    declared = _SPDX_LINE.search(text)
    if declared:
        return declared.group(1).strip()
    flat = _flat(text)
    for detector in _DETECTORS:
        found = detector(flat)
        if found is not None:
            return found
    return UNKNOWN


def _blank(path: Path) -> bool:
    """Whether a file holds nothing but whitespace (facebook/zstd ships an empty
    ``build/LICENSE``): it names no license and must not make its folder a project."""
    try:
        if path.stat().st_size > 64:
            return False
        return not path.read_bytes().strip()
    except OSError:
        return False  # unreadable: counted, and detected as unknown


def license_files(root: Path) -> list[Path]:
    """The license files directly inside ``root`` (LICENSE*, LICENCE*, COPYING*,
    UNLICENSE), blank ones left out."""
    try:
        children = sorted(root.iterdir())
    except OSError:
        return []
    return [p for p in children if _FILE_NAME.match(p.name) and p.is_file() and not _blank(p)]


_CHOICE = re.compile(
    r"\bdual(ly)?[- ]licen[cs](ed|e)\b"  # "dual-licensed under BSD OR GPLv2"
    r"|\blicen[cs]ed under (the terms of )?either\b"  # "licensed under either of ..."
    r"|\bat (your|the user's|the licensee's) (option|choice),? (one|either) of\b"
    r"|\b(choose|select),? at your option,? (one|either)\b"
)
"""A declared choice between licenses, on flattened text. Not "at your option" alone:
every GPL says "(at your option) any later version", which is no choice of license."""

_README = re.compile(r"^readme([-._].*)?$", re.IGNORECASE)
_SPDX_CHOICE = re.compile(r"SPDX-License-Identifier:\s*[^\n]*\sOR\s", re.IGNORECASE)


def _alternatives(expression: str) -> set[str]:
    """The license identifiers of an ``A OR B`` expression, ``-only``/``-or-later``/``+``
    left off so that they compare with what the texts are detected as."""
    names = re.split(r"\s+OR\s+", expression.strip("() "))
    return {re.sub(r"(-only|-or-later|\+)$", "", n.strip("() ")) for n in names}


def _term(expression: str) -> str:
    return f"({expression})" if " OR " in expression or " AND " in expression else expression


def combine(found: list[str], choice: bool = False) -> str:
    """One SPDX expression for a project with several license files.

    The LGPL ships with the GPL it amends (COPYING + COPYING.LESSER): that is the LGPL.
    Any unrecognised file makes the whole ``unknown``. Several licenses all apply
    (``AND``) unless ``choice``: the project declared them alternatives (``OR``). A file
    whose own SPDX line offers a choice (``MIT OR Apache-2.0``) stands for the files
    holding those alternatives' texts.
    """
    unique = sorted(set(found))
    if not unique or UNKNOWN in unique:
        return UNKNOWN
    for version in ("2.1", "3.0"):
        if f"LGPL-{version}" in unique:
            unique = [x for x in unique if x != ("GPL-3.0" if version == "3.0" else "GPL-2.0")]
    offers = [x for x in unique if " OR " in x]
    covered = set().union(*(_alternatives(x) for x in offers)) if offers else set()
    unique = [x for x in unique if x in offers or x not in covered]
    if len(unique) == 1:
        return unique[0]
    return (" OR " if choice else " AND ").join(_term(x) for x in unique)


def _head(path: Path) -> str | None:
    try:
        with path.open("rb") as handle:
            return handle.read(MAX_LICENSE_BYTES).decode("utf-8", "replace")
    except OSError:
        return None


def declares_choice(licenses: Sequence[str], readmes: Sequence[str] = ()) -> bool:
    """Whether license or README texts declare the project's licenses alternatives. A
    README's ``SPDX-License-Identifier: A OR B`` line speaks for the project; a license
    file's speaks for that file only (:func:`combine` reads it)."""
    if any(_SPDX_CHOICE.search(t) for t in readmes):
        return True
    return any(_CHOICE.search(_flat(t)) for t in (*licenses, *readmes))


def _readmes(root: Path) -> list[Path]:
    try:
        return [p for p in sorted(root.iterdir()) if _README.match(p.name) and p.is_file()]
    except OSError:
        return []


def detect_project_license(root: Path) -> tuple[str, list[str]]:
    """The project's SPDX expression and the license file names it was read from."""
    files = license_files(root)
    texts = [_head(path) for path in files]
    found = [UNKNOWN if t is None else detect_license_text(t) for t in texts]
    choice = False
    if len(set(found)) > 1:
        readmes = [t for t in map(_head, _readmes(root)) if t is not None]
        choice = declares_choice([t for t in texts if t is not None], readmes)
    return combine(found, choice), [p.name for p in files]


def is_permissive(expression: str) -> bool:
    """Whether a project may be kept under ``--permissive-only``.

    Every ``AND`` term must be permissive; an ``OR`` choice needs one permissive
    alternative; ``WITH`` exceptions only add permissions.
    """
    if not expression or expression == UNKNOWN:
        return False
    for term in re.split(r"\s+AND\s+", expression.strip("() ")):
        choices = re.split(r"\s+OR\s+", term.strip("() "))
        if not any(c.split(" WITH ")[0].strip("() ") in PERMISSIVE for c in choices):
            return False
    return True
