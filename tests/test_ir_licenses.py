"""License detection from LICENSE/COPYING files, and the permissive filter."""

from __future__ import annotations

from pathlib import Path

import pytest

from engines.ir.licenses import (
    UNKNOWN,
    combine,
    detect_license_text,
    detect_project_license,
    is_permissive,
    license_files,
)
from tests.ir_samples import LICENSE_TEXTS, SAMPLES

REFERENCE = sorted(LICENSE_TEXTS.glob("spdx-*.txt"))


def spdx_of(path: Path) -> str:
    return path.stem.removeprefix("spdx-")


def test_every_supported_license_has_a_reference_text() -> None:
    assert {spdx_of(p) for p in REFERENCE} == {
        "MIT",
        "Apache-2.0",
        "BSD-2-Clause",
        "BSD-3-Clause",
        "GPL-2.0",
        "GPL-3.0",
        "LGPL-2.1",
        "LGPL-3.0",
        "MPL-2.0",
        "ISC",
        "Unlicense",
    }


@pytest.mark.parametrize("path", REFERENCE, ids=spdx_of)
def test_each_license_text_is_recognised(path: Path) -> None:
    assert detect_license_text(path.read_text()) == spdx_of(path)


@pytest.mark.parametrize("path", REFERENCE, ids=spdx_of)
def test_reflowed_text_is_still_recognised(path: Path) -> None:
    # projects re-wrap lines, change quotes and indentation
    text = path.read_text().replace('"', "\u201c").replace("\n", "\n    ")
    reflowed = " ".join(text.split())
    assert detect_license_text(reflowed) == spdx_of(path)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "All rights reserved. Do not copy or redistribute.",
        "Licensed under the Foo Public License, see http://foo.example/license",
        # a GPL header that names no version: unsure, so unknown
        "GNU GENERAL PUBLIC LICENSE\nSee the full text online.",
        # BSD-style preamble with no recognisable clauses
        "Redistribution and use in source and binary forms are permitted.",
    ],
)
def test_unrecognised_texts_are_unknown(text: str) -> None:
    assert detect_license_text(text) == UNKNOWN


def test_an_spdx_identifier_line_is_taken_at_its_word() -> None:
    assert detect_license_text("SPDX-License-Identifier: BSD-2-Clause\n") == "BSD-2-Clause"


def test_bsd_clause_counts_are_told_apart() -> None:
    three = (LICENSE_TEXTS / "spdx-BSD-3-Clause.txt").read_text()
    two = (LICENSE_TEXTS / "spdx-BSD-2-Clause.txt").read_text()
    assert detect_license_text(three) != detect_license_text(two)
    four = three.replace(
        "3. Neither",
        "4. All advertising materials mentioning features or use of this software must"
        " display an acknowledgement.\n3. Neither",
    )
    assert detect_license_text(four) == "BSD-4-Clause"


def test_llvm_exception_is_recognised() -> None:
    apache = (LICENSE_TEXTS / "spdx-Apache-2.0.txt").read_text()
    text = apache + "\n---- LLVM Exceptions to the Apache 2.0 License ----\n"
    assert detect_license_text(text) == "Apache-2.0 WITH LLVM-exception"
    assert is_permissive("Apache-2.0 WITH LLVM-exception")


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, stem in files.items():
        (tmp_path / name).write_text((LICENSE_TEXTS / f"spdx-{stem}.txt").read_text())
    return tmp_path


def test_lgpl_projects_ship_the_gpl_too(tmp_path: Path) -> None:
    root = _project(tmp_path, {"COPYING": "GPL-3.0", "COPYING.LESSER": "LGPL-3.0"})
    assert detect_project_license(root) == ("LGPL-3.0", ["COPYING", "COPYING.LESSER"])


def test_several_licenses_all_apply(tmp_path: Path) -> None:
    root = _project(tmp_path, {"LICENSE-MIT": "MIT", "LICENSE-APACHE": "Apache-2.0"})
    spdx, files = detect_project_license(root)
    assert spdx == "Apache-2.0 AND MIT"
    assert files == ["LICENSE-APACHE", "LICENSE-MIT"]
    assert is_permissive(spdx)


def test_an_unrecognised_file_makes_the_project_unknown(tmp_path: Path) -> None:
    root = _project(tmp_path, {"LICENSE": "MIT"})
    (root / "COPYING.txt").write_text("Custom terms: ask us first.")
    assert detect_project_license(root)[0] == UNKNOWN


def test_no_license_file_is_unknown(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("MIT licensed, we promise")
    assert detect_project_license(tmp_path) == (UNKNOWN, [])


def test_license_file_names() -> None:
    assert [p.name for p in license_files(SAMPLES / "geomkit")] == ["COPYING"]
    assert [p.name for p in license_files(SAMPLES / "mathlib")] == ["LICENSE"]
    assert license_files(SAMPLES / "licenses") == []


@pytest.mark.parametrize(
    ("expression", "permissive"),
    [
        ("MIT", True),
        ("Apache-2.0", True),
        ("BSD-2-Clause", True),
        ("BSD-3-Clause", True),
        ("GPL-3.0", False),
        ("LGPL-2.1", False),
        ("MPL-2.0", False),
        ("ISC", False),  # ComPile kept exactly four licenses
        ("Unlicense", False),
        (UNKNOWN, False),
        ("MIT AND GPL-2.0", False),
        ("MIT OR GPL-2.0", True),
        ("(MIT OR Apache-2.0) AND BSD-3-Clause", True),
    ],
)
def test_permissive_means_compiles_four(expression: str, permissive: bool) -> None:
    assert is_permissive(expression) is permissive


def test_combine_is_order_free() -> None:
    assert combine(["MIT", "Apache-2.0"]) == combine(["Apache-2.0", "MIT"])
    assert combine([]) == UNKNOWN
    assert combine(["GPL-2.0", "LGPL-2.1"]) == "LGPL-2.1"
