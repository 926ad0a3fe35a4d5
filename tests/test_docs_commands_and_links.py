"""What a new user copies out of the docs works: every ``curator ...`` line in README.md and
docs/*.md names a command that exists and options it has, and every page's links and
#anchors point at files and headings that exist."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer import _click

from curator.cli import app

ROOT = Path(__file__).resolve().parents[1]
ALL_DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"```[a-z]*\n(.*?)```", re.S)
CALL = re.compile(r"(?:^|[\s;|&(`$])(?:\.venv/bin/|\$)?curator((?:\s+[^\n;&`]*)?)")
OPTION = re.compile(r"^(--?[A-Za-z][\w-]*)")


def command_lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(line, text after 'curator')`` for each call in a code block (continuations
    joined, comments cut) or in inline code."""
    text = path.read_text(encoding="utf-8")
    for block in FENCE.finditer(text):
        first = text[: block.start()].count("\n") + 2
        pending, start = "", None
        for offset, line in enumerate(block.group(1).split("\n")):
            start = first + offset if start is None else start
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1] + " "
                continue
            joined = re.sub(r"\s#\s.*$", "", pending + line)
            for call in CALL.finditer(joined):
                yield start, call.group(1)
            pending, start = "", None
    for number, line in enumerate(text.split("\n"), 1):
        for code in re.finditer(r"`([^`]*\bcurator [^`]*)`", line):
            for call in CALL.finditer(code.group(1)):
                yield number, call.group(1)


def resolve(tokens: list[str]) -> tuple[Any, list[str], str | None]:
    """The command the tokens name, its path, and the first word that named no
    subcommand of a group (``None`` when a leaf command was reached)."""
    root = typer.main.get_command(app)
    command, path, ctx = root, [], _click.Context(root)
    index = 0
    while index < len(tokens) and hasattr(command, "get_command"):
        token = tokens[index]
        if token.startswith("-"):
            index += 2 if token in ("--db", "--annotator") else 1
            continue
        sub = command.get_command(ctx, token)
        if sub is None and getattr(command, "DEFAULT", None):
            sub, token, index = (
                command.get_command(ctx, command.DEFAULT),
                command.DEFAULT,
                index - 1,
            )
        if sub is None:
            return command, path, token
        ctx = _click.Context(sub, parent=ctx, info_name=token)
        command, index = sub, index + 1
        path.append(token)
    return command, path, None


def options_of(command: Any) -> set[str]:
    return {name for p in command.params for name in (*p.opts, *p.secondary_opts)}


def calls(paths: list[Path]) -> Iterator[tuple[str, list[str], str]]:
    for path in paths:
        for number, rest in command_lines(path):
            words = [w.strip("[]()'\",") for w in rest.split()]
            # prose ("curator is ..."), or the import arrow of architecture.md
            if words and not words[0].startswith(("is", "and", "the", "->")):
                yield f"{path.name}:{number}", [w for w in words if w], rest


def test_every_option_a_doc_gives_a_curator_command_exists() -> None:
    root_options = options_of(typer.main.get_command(app)) | {"--help"}
    missing = []
    seen = 0
    for where, words, rest in calls(ALL_DOCS):
        command, path, _ = resolve(words)
        known = options_of(command) | root_options
        for word in rest.split():
            for part in re.split(r"[\[\]|()]", word):
                option = OPTION.match(part)
                if option:
                    seen += 1
                    if option.group(1) not in known:
                        missing.append(f"{where}: curator {' '.join(path)} {option.group(1)}")
    assert seen > 300, "the extraction found too few options: the pattern broke"
    assert missing == []


def test_the_docs_name_only_commands_that_exist() -> None:
    unknown = []
    for where, words, _ in calls(ALL_DOCS):
        _, path, word = resolve(words)
        # a placeholder (VERSION, ARGS), alternatives (kernels|ir) or prose stop here
        if word is not None and re.fullmatch(r"[a-z][a-z-]*", word):
            unknown.append(f"{where}: curator {' '.join([*path, word])}")
    assert unknown == []


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.replace("`", "").strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    counts: dict[str, int] = {}
    in_code = False
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line.startswith("```"):
            in_code = not in_code
        heading = None if in_code else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading:
            name = slug(heading.group(1))
            found.add(name if name not in counts else f"{name}-{counts[name]}")
            counts[name] = counts.get(name, 0) + 1
    return found


@pytest.mark.parametrize("page", ALL_DOCS, ids=lambda p: p.name)
def test_links_of_every_page_resolve(page: Path) -> None:
    broken = []
    in_code = False
    for number, line in enumerate(page.read_text(encoding="utf-8").split("\n"), 1):
        if line.startswith("```"):
            in_code = not in_code
        if in_code:
            continue
        line = re.sub(r"`[^`]*`", "", line)
        for link in re.finditer(r"\]\(([^)\s]+)\)", line):
            target = link.group(1)
            if re.match(r"^[a-z]+:", target):
                continue
            file, _, fragment = target.partition("#")
            resolved = (page.parent / file).resolve() if file else page
            if not resolved.exists():
                broken.append(f"{page.name}:{number}: no file {target}")
            elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
                broken.append(f"{page.name}:{number}: no heading #{fragment} in {file}")
    assert broken == []
