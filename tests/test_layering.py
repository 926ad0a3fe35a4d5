"""The dependency rule of docs/architecture.md, checked on every import in the tree."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OURS = {"curator", "annotation", "engines", "store"}
ALLOWED = {
    "store": set(),
    "engines": {"store"},
    "annotation": {"store"},
    "curator": {"annotation", "engines", "store"},
}


def imported_packages(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found & OURS


def test_imports_follow_the_dependency_rule() -> None:
    violations = []
    for package, allowed in ALLOWED.items():
        for path in sorted((ROOT / package).rglob("*.py")):
            for target in imported_packages(path) - allowed - {package}:
                violations.append(f"{path.relative_to(ROOT)} imports {target}")
    assert violations == []


def test_every_module_has_a_docstring() -> None:
    missing = [
        str(path.relative_to(ROOT))
        for package in ALLOWED
        for path in sorted((ROOT / package).rglob("*.py"))
        if path.stat().st_size and ast.get_docstring(ast.parse(path.read_text())) is None
    ]
    assert missing == []


# The app's boundary: screens and widgets reach the data only through CurationService.
# From the layers below they may import plain data types (dataclass rows and reports)
# named here, and nothing else: no Store, no open_store, no query or annotation logic.
APP_UI = ("curator/tui/screens", "curator/tui/widgets")
DATA_TYPES = {
    "store.sets": {"SetRow"},
    "store.models": {"ModelRow"},
    "annotation.adjudication": {"Decision"},
    "annotation.agreement": {"AgreementReport"},
    "annotation.audit": {"AuditReport", "Precision"},
    "annotation.queue": {"QueueEntry"},
    "engines.labelers.student": {"TrainProgress"},
}
ROW_MODULES = {"store.records"}  # every name in it is a row type
NEVER = {"Store", "open_store"}


def boundary_violations(path: Path) -> list[str]:
    """What a screen or widget module imports from ``store``, ``annotation`` or
    ``engines`` beyond the data types allowed above."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [
                f"import {a.name}" for a in node.names if a.name.split(".")[0] in OURS - {"curator"}
            ]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            module = node.module
            if module.split(".")[0] not in OURS - {"curator"}:
                continue
            for alias in node.names:
                allowed = module in ROW_MODULES or alias.name in DATA_TYPES.get(module, set())
                if alias.name in NEVER or not allowed:
                    found.append(f"from {module} import {alias.name}")
    return found


def test_screens_and_widgets_import_only_data_types_from_below() -> None:
    violations = [
        f"{path.relative_to(ROOT)}: {what}"
        for folder in APP_UI
        for path in sorted((ROOT / folder).rglob("*.py"))
        for what in boundary_violations(path)
    ]
    assert violations == []


def test_the_allowed_names_are_plain_data_types() -> None:
    import dataclasses
    import importlib

    for module, names in DATA_TYPES.items():
        for name in names:
            assert dataclasses.is_dataclass(getattr(importlib.import_module(module), name)), name


def test_the_boundary_check_catches_a_planted_violation(tmp_path: Path) -> None:
    clean = tmp_path / "clean.py"
    clean.write_text(
        '"""A screen."""\n'
        "from curator.tui.service import CurationService\n"
        "from store.records import CommitRow\n"
        "from store.sets import SetRow\n"
        "from engines.labelers.student import TrainProgress\n"
    )
    assert boundary_violations(clean) == []
    planted = tmp_path / "planted.py"
    planted.write_text(
        '"""A screen that reaches past the service."""\n'
        "import store.sets\n"
        "from store import open_store\n"
        "from store.models import ModelRow, list_models\n"
        "from annotation.agreement import landis_koch\n"
        "def later():\n"
        "    from engines.kernels.checker import KernelWorker\n"
    )
    assert sorted(boundary_violations(planted)) == [
        "from annotation.agreement import landis_koch",
        "from engines.kernels.checker import KernelWorker",
        "from store import open_store",
        "from store.models import list_models",
        "import store.sets",
    ]


def test_the_cli_starts_without_heavy_libraries() -> None:
    """`curator --help` must start fast: the libraries only some commands need are
    imported inside those commands (checked in a fresh interpreter)."""
    import subprocess
    import sys

    heavy = ("pandas", "torch", "transformers", "dask", "pydriller", "httpx", "git", "cryptography")
    code = f"import sys, curator.cli; print(','.join(m for m in {heavy!r} if m in sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert done.stdout.strip() == ""
