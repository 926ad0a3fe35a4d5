"""Commit rows as other tools write them, read as the rows of an items file.

An items row names a commit by ``id`` and ``message``. The tools teams dump commits with
name them otherwise, and a row in one of these shapes (with neither ``id``
nor ``message``) is read as if it had them:

- PyDriller: ``Commit.hash`` and ``Commit.msg`` (``author_date`` as ``json.dumps(...,
  default=str)`` writes it, or as the epoch milliseconds of ``DataFrame.to_json``). A
  dump of one row per ``ModifiedFile`` (``new_path``, ``old_path``, ``diff``, the hunks
  alone) repeats the commit on consecutive rows: they become one commit whose diff holds
  every file's hunks under a git file header; so does a commit's row whose
  ``modified_files`` is a list of those files' objects.
- GitHub's REST API (``gh api repos/O/R/commits/SHA``, one array item of ``.../commits``):
  ``sha``, ``commit.message``, ``commit.author.date``, ``html_url``, and ``files[]`` with
  each file's ``filename``, ``previous_filename``, ``status`` and ``patch`` (the hunks).
- GitHub's GraphQL ``Commit`` node: ``oid``, ``message``, ``authoredDate``.

Fields the row already has are kept; the tool's own fields stay in the row too. A date
that pandas' ``to_json`` wrote as epoch milliseconds (``author_date``, or ``date``
itself) becomes an ISO date in UTC.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

Numbered = Iterator[tuple[int, dict[str, Any]]]

_GITHUB_COMMIT_URL = re.compile(r"^https://github\.com/([^/\s]+/[^/\s]+)/commit/")
_EPOCH_MS = (10**11, 10**14)
"""Epoch milliseconds from 1973 to 5138: what pandas writes a datetime column as."""


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _date(value: Any) -> str | None:
    """An ISO date from a tool's date: its text, or pandas' epoch milliseconds (UTC)."""
    if isinstance(value, str):
        return value.strip() or None
    epoch = isinstance(value, int) and not isinstance(value, bool)
    if epoch and _EPOCH_MS[0] <= value < _EPOCH_MS[1]:
        return datetime.fromtimestamp(value / 1000, UTC).isoformat()
    return None


def _filled(record: dict[str, Any], found: dict[str, Any]) -> dict[str, Any]:
    """``record`` with the values of ``found`` it does not have (None values left out)."""
    extra = {k: v for k, v in found.items() if v is not None and record.get(k) in (None, "")}
    return {**record, **extra} if extra else record


def _pydriller(record: dict[str, Any]) -> dict[str, Any] | None:
    key, message = _text(record.get("hash")), record.get("msg")
    if key is None or not isinstance(message, str):
        return None
    date = _date(record.get("author_date")) or _date(record.get("committer_date"))
    found = {"id": key, "message": message, "sha": key, "date": date}
    files = record.get("modified_files")
    if isinstance(files, list) and files and all(isinstance(f, dict) for f in files):
        found["diff"], names = _files_diff(files)
        if (bad := _bad_diff(files)) is not None:
            found["diff"] = bad
        found["file"] = names[0] if names else None
    return _filled(record, found)


def _file_header(old: str | None, new: str | None) -> str:
    """git's header of one file's diff; None on one side: the file was added or deleted."""
    a = f"a/{old}" if old else "/dev/null"
    b = f"b/{new}" if new else "/dev/null"
    return f"diff --git a/{old or new} b/{new or old}\n--- {a}\n+++ {b}\n"


def _github_diff(files: list[Any]) -> tuple[str, str | None]:
    """(the diff of a GitHub commit's files that have a patch, the first file's name)."""
    parts: list[str] = []
    first: str | None = None
    for entry in files:
        if not isinstance(entry, dict) or _text(entry.get("filename")) is None:
            continue
        name = entry["filename"]
        first = first or name
        patch = entry.get("patch")
        if not isinstance(patch, str) or not patch.strip():
            continue  # a binary file, or one too big for the API to show
        status = entry.get("status")
        old = None if status == "added" else _text(entry.get("previous_filename")) or name
        new = None if status == "removed" else name
        parts.append(_file_header(old, new) + patch.rstrip("\n") + "\n")
    return "".join(parts), first


def _github(record: dict[str, Any]) -> dict[str, Any] | None:
    commit = record.get("commit")
    key = _text(record.get("sha"))
    if key is None or not isinstance(commit, dict) or not isinstance(commit.get("message"), str):
        return None
    author = commit.get("author")
    found: dict[str, Any] = {"id": key, "message": commit["message"], "sha": key}
    found["date"] = _date(author.get("date")) if isinstance(author, dict) else None
    url = record.get("html_url")
    repo = _GITHUB_COMMIT_URL.match(url) if isinstance(url, str) else None
    found["repo"] = f"https://github.com/{repo.group(1)}" if repo else None
    if isinstance(record.get("files"), list):
        diff, first = _github_diff(record["files"])
        found["diff"] = diff or None
        found["file"] = first
    return _filled(record, found)


def _graphql(record: dict[str, Any]) -> dict[str, Any] | None:
    key, message = _text(record.get("oid")), record.get("message")
    if key is None or not isinstance(message, str):
        return None
    date = _date(record.get("authoredDate")) or _date(record.get("committedDate"))
    return _filled(record, {"id": key, "sha": key, "date": date})


def as_item_row(record: dict[str, Any]) -> dict[str, Any]:
    """The row with ``id``, ``message`` (and ``sha``, ``date``, ``repo``, ``diff``,
    ``file`` when the tool has them) from a known tool's fields; as it is when it has
    an ``id`` or is in no known shape, but for a ``date`` in epoch milliseconds (pandas'
    ``to_json``), which becomes an ISO date."""
    if isinstance(record.get("date"), int) and _date(record["date"]) is not None:
        record = {**record, "date": _date(record["date"])}
    if record.get("id") not in (None, ""):
        return record
    shaped = _graphql(record) if "message" in record else _pydriller(record) or _github(record)
    return shaped if shaped is not None else record


def _file_row(record: dict[str, Any]) -> str | None:
    """The commit a PyDriller row of one ``ModifiedFile`` belongs to, or None."""
    if record.get("id") not in (None, "") or "message" in record:
        return None
    if _text(record.get("hash")) is None or not isinstance(record.get("msg"), str):
        return None
    if not any(name in record for name in ("new_path", "old_path")):
        return None
    return str(record["hash"]).strip()


def _files_diff(files: list[dict[str, Any]]) -> tuple[str, list[str]]:
    """(each ``ModifiedFile``'s hunks under its git header, the files' paths)."""
    parts: list[str] = []
    names: list[str] = []
    for row in files:
        old, new = _text(row.get("old_path")), _text(row.get("new_path"))
        if new or old:
            names.append(str(new or old))
        diff = row.get("diff")
        if isinstance(diff, str) and diff.strip():
            named = diff.startswith(("diff --git ", "--- "))
            header = _file_header(old, new) if (old or new) and not named else ""
            parts.append(header + diff.rstrip("\n") + "\n")
    return "".join(parts), names


def _bad_diff(files: list[dict[str, Any]]) -> Any:
    """The first file's ``diff`` that is neither text nor missing (a list, an object, a
    number), which the row's checks then name; None when every one is."""
    return next(
        (f["diff"] for f in files if f.get("diff") is not None and not isinstance(f["diff"], str)),
        None,
    )


def _joined(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One commit from its consecutive ``ModifiedFile`` rows: each file's hunks under its
    git header, ``file`` the first file, ``files`` them all. A file's diff that is no
    text stays the row's diff, for the checks to name."""
    diff, names = _files_diff(rows)
    first = {k: v for k, v in rows[0].items() if k not in ("diff", "diff_parsed")}
    bad = _bad_diff(rows)
    joined = as_item_row({**first, "diff": diff if bad is None else bad})
    return {**joined, "file": names[0] if names else None, "files": names}


def item_rows(records: Numbered) -> Numbered:
    """:func:`as_item_row` of each record; consecutive PyDriller rows of one commit's
    files become one row, numbered by its first line. Rows of one commit that are not
    consecutive stay apart (and are an id twice)."""
    group: list[dict[str, Any]] = []
    start = 0
    key: str | None = None
    for number, record in records:
        belongs = _file_row(record)
        if group and belongs is not None and belongs == key:
            group.append(record)
            continue
        if group:
            yield start, _joined(group)
            group = []
        if belongs is not None:
            group, start, key = [record], number, belongs
            continue
        yield number, as_item_row(record)
    if group:
        yield start, _joined(group)


def pandas_table(record: dict[str, Any]) -> str | None:
    """Why the first object of a JSON Lines file is a whole table pandas wrote, with how
    to write it instead; None for a row."""
    orient = pandas_orient(record)
    if orient is None:
        return None
    return (
        f"a whole table in one object, as pandas' DataFrame.to_json writes it"
        f" (orient={orient!r}); write one object per line instead:"
        " df.to_json(PATH, orient='records', lines=True)"
    )


def pandas_orient(record: dict[str, Any]) -> str | None:
    """The ``orient`` of ``DataFrame.to_json`` that wrote a whole table as this one object
    (its default, ``columns``: each column an object of its cells by row; ``index``: each
    row an object by its index; ``split``; ``table``), or None for a row of a table."""
    if record.keys() == {"columns", "index", "data"}:
        return "split"
    if record.keys() == {"schema", "data"} and isinstance(record["schema"], dict):
        return "table"
    values = list(record.values())
    if not values or not all(isinstance(v, dict) for v in values):
        return None
    inner = values[0].keys()
    if any(v.keys() != inner for v in values):
        return None
    # the row labels of a table pandas numbered (its default index) are digits
    if all(k.isdigit() for k in record):
        return "index"
    return "columns" if inner and all(k.isdigit() for k in inner) else None
