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
