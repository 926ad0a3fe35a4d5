"""Reading a repository list (``--repos-file``) and choosing from it by stars and language.

A CSV file with one repository per line: its URL or path, its star count and its main
language, the knobs the papers select repositories by. A header line naming the
columns (``repo``/``url``/``path``, ``stars``, ``language``) is optional; without one the
columns are taken in that order. Relative paths are relative to the file's folder.
Blank lines and lines starting with ``#`` are ignored. A bad line is reported with its
file and line number and skipped; the rest of the list is still read.
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from engines.commits.languages import parse_languages
from engines.commits.sources import is_url, source_key

_COLUMNS = {
    "repo": "repo",
    "repository": "repo",
    "url": "repo",
    "path": "repo",
    "source": "repo",
    "stars": "stars",
    "stargazers": "stars",
    "stargazers_count": "stars",
    "language": "language",
    "lang": "language",
}


class RepoListError(Exception):
    """The list cannot be read at all (missing file, no usable column)."""


@dataclass(frozen=True)
class RepoEntry:
    spec: str  # URL, or an absolute path
    stars: int | None
    language: str | None  # as written in the file
    line: int


@dataclass
class RepoList:
    entries: list[RepoEntry] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


@dataclass
class Selection:
    """The entries a run mines, and how many each filter dropped."""

    chosen: list[RepoEntry] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)


_NOT_UTF8 = re.compile("[\udc80-\udcff]")  # the bytes surrogateescape could not decode


def read_repo_list(path: Path) -> RepoList:
    """Parse a repository list; raises :class:`RepoListError` only when nothing can be read."""
    try:
        # a byte that is not UTF-8 spoils its line only (named below), not the list
        text = path.read_bytes().decode("utf-8-sig", errors="surrogateescape")
    except FileNotFoundError:
        raise RepoListError(f"{path}: no such file") from None
    except OSError as exc:
        raise RepoListError(f"{path}: cannot read ({exc})") from None
    result = RepoList()
    rows = [
        (number, row)
        for number, row in _lines(path, text, result.problems)
        if row and any(cell.strip() for cell in row) and not row[0].lstrip().startswith("#")
    ]
    if not rows:
        return result
    columns = _header(rows[0][1])
    if columns is not None:
        if "repo" not in columns:
            raise RepoListError(f"{path}:{rows[0][0]}: the header names no repo/url/path column")
        rows = rows[1:]
    else:
        columns = {"repo": 0, "stars": 1, "language": 2}
    seen: dict[str, int] = {}
    for number, row in rows:
        where = f"{path}:{number}"
        if any(_NOT_UTF8.search(cell) for cell in row):
            result.problems.append(f"{where}: not UTF-8 text; line skipped")
            continue
        if any("\0" in cell for cell in row):
            result.problems.append(f"{where}: holds a NUL character; line skipped")
            continue
        entry = _entry(row, columns, path.parent, number, where, result.problems)
        if entry is None:
            continue
        name = source_key(entry.spec)
        if name in seen:
            result.problems.append(f"{where}: {entry.spec} is listed again (line {seen[name]})")
            continue
        seen[name] = number
        result.entries.append(entry)
    if not result.entries and result.problems:  # a binary file, say: not a list at all
        raise RepoListError(
            f"{path}: not a CSV list of repositories: no line names one"
            f" ({len(result.problems)} skipped; the first, {result.problems[0]})"
        )
    return result


def _lines(path: Path, text: str, problems: list[str]) -> Iterator[tuple[int, list[str]]]:
    """Each physical line read as one CSV row, with its line number: a stray quote spoils
    its own line (named in ``problems``), never the lines after it, as it would when the
    whole file is read as CSV (a quoted field may span lines there)."""
    for number, line in enumerate(io.StringIO(text, newline=None), start=1):  # \n, \r\n, \r
        try:
            yield number, next(csv.reader([line.rstrip("\n")], strict=True), [])
        except csv.Error as exc:
            problems.append(f"{path}:{number}: {exc} (a stray quote?); line skipped")


def _header(row: list[str]) -> dict[str, int] | None:
    names = [cell.strip().lower() for cell in row]
    if not any(name in _COLUMNS for name in names):
        return None
    return {_COLUMNS[name]: i for i, name in reversed(list(enumerate(names))) if name in _COLUMNS}


def _entry(
    row: list[str],
    columns: dict[str, int],
    base: Path,
    number: int,
    where: str,
    problems: list[str],
) -> RepoEntry | None:
    def cell(name: str) -> str:
        index = columns.get(name)
        return row[index].strip() if index is not None and index < len(row) else ""

    spec = cell("repo")
    if not spec:
        problems.append(f"{where}: no repository URL or path")
        return None
    if not is_url(spec):
        candidate = Path(spec).expanduser()
        spec = str(candidate if candidate.is_absolute() else (base / candidate).resolve())
    stars: int | None = None
    raw_stars = cell("stars").replace(",", "").replace("_", "")
    if raw_stars:
        try:
            stars = int(raw_stars)
        except ValueError:
            problems.append(f"{where}: stars {cell('stars')!r} is not a whole number")
            return None
        if stars < 0:
            problems.append(f"{where}: stars {stars} is negative")
            return None
    return RepoEntry(spec, stars, cell("language") or None, number)


def select(
    entries: Iterable[RepoEntry], min_stars: int | None, languages: frozenset[str] | None
) -> Selection:
    """Keep the entries with at least ``min_stars`` stars (an entry without a count
    fails) whose language is one of ``languages`` (an entry without one passes; a
    language the miner does not know fails)."""
    selection = Selection()
    for entry in entries:
        if min_stars is not None and (entry.stars is None or entry.stars < min_stars):
            selection.dropped["stars"] += 1
        elif languages is not None and not _language_ok(entry.language, languages):
            selection.dropped["language"] += 1
        else:
            selection.chosen.append(entry)
    return selection


def _language_ok(language: str | None, languages: frozenset[str]) -> bool:
    if language is None:
        return True
    try:
        return bool(parse_languages(language) & languages)
    except ValueError:
        return False
