"""Reading the records of an import file: JSON Lines or CSV/TSV, as a stream, with one
error line per bad line naming the file and the line.

Files are UTF-8 or UTF-16 with a byte-order mark, plain or gzip-compressed; a CSV file's
delimiter is a comma, or a semicolon or tab when its header says so (or Excel's ``sep=``
line before it). A line (or a CSV row) is in memory at a time. What the records mean
(items, votes, labeled rows) is the importers' business (:mod:`annotation.importing`,
:mod:`annotation.labeled_import`).
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from annotation.compressed import BROKEN_GZIP, broken_gzip, data_suffix, open_bytes
from annotation.jsontext import JsonTextError, nul_char, parse_json
from annotation.tool_records import pandas_table

CSV_FIELD_LIMIT = 2**31 - 1
"""The csv module's default limit, 128 KiB a field, is less than a big diff."""


UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
BOM = "\ufeff"


def _utf8_problem(path: Path, raw: bytes, exc: UnicodeDecodeError, first: bool) -> str:
    """Why a line is no UTF-8 text: the first bad byte and where; the first such line of
    a file also says how to convert it (a spreadsheet's Latin-1 or Windows-1252 export)."""
    problem = f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})"
    if first:
        # Windows-1252 is Latin-1 but for 0x80-0x9f, where it has what Excel writes
        # (curly quotes, the euro sign), which Latin-1 would turn into control characters
        problem += f"; save the file as UTF-8, e.g. iconv -f cp1252 -t utf-8 {path} > NEW"
    return problem


def _utf16_without_bom(line: bytes) -> bool:
    """Whether a first line reads as UTF-16 without its byte-order mark: ASCII text with
    a NUL byte beside every character."""
    body = line.rstrip(b"\r\x00")
    return len(body) >= 4 and body.count(0) * 2 >= len(body) - 1


def _lines(path: Path) -> Iterator[tuple[int, str, str]]:
    """(line number, text, problem) for every line, read as a stream (one line in memory
    at a time); the problem is "" unless the line cannot be read (its text then has
    U+FFFD for the bytes that are no text). UTF-8 (a byte-order mark is dropped) and
    UTF-16 with its byte-order mark (Excel's "Unicode text") are read, plain or
    gzip-compressed. As ``split("\\n")`` would, a file ending in a newline ends with one
    empty line."""
    number = 0
    try:
        with open_bytes(path) as fh:
            for number, text, problem in _decoded_lines(path, fh):
                yield number, text, problem
    except BROKEN_GZIP as exc:
        yield number + 1, "", broken_gzip(exc)


def _decoded_lines(path: Path, fh: IO[bytes]) -> Iterator[tuple[int, str, str]]:
    """:func:`_lines` of a file's bytes (uncompressed)."""
    start = fh.read(3)
    if start.startswith(UTF16_BOMS):
        fh.seek(0)
        yield from _utf16_lines(fh)
        return
    if start != b"\xef\xbb\xbf":
        fh.seek(0)
    first = True
    number = 0
    newline_last = False
    for raw in fh:
        number += 1
        newline_last = raw.endswith(b"\n")
        raw = raw.removesuffix(b"\n")
        if number == 1 and _utf16_without_bom(raw):
            yield 1, "", "UTF-16 text without a byte-order mark; save the file as UTF-8"
            return
        try:
            # a byte-order mark inside: files that had one each were joined (cat a b > c)
            yield number, raw.decode("utf-8").rstrip("\r").removeprefix(BOM), ""
        except UnicodeDecodeError as exc:
            text = raw.decode("utf-8", "replace").rstrip("\r")
            yield number, text, _utf8_problem(path, raw, exc, first)
            first = False
    if number == 0 or newline_last:
        yield number + 1, "", ""


def _utf16_lines(fh: IO[bytes]) -> Iterator[tuple[int, str, str]]:
    """:func:`_lines` of a file starting with UTF-16's byte-order mark."""
    number = 0
    text = io.TextIOWrapper(fh, encoding="utf-16", newline="\n")
    line = ""
    try:
        for line in text:
            number += 1
            yield number, line.removesuffix("\n").rstrip("\r").removeprefix(BOM), ""
    except UnicodeDecodeError:
        yield number + 1, "", "not UTF-16 text, though it starts with UTF-16's byte-order mark"
        return
    finally:
        text.detach()
    if number == 0 or line.endswith("\n"):
        yield number + 1, "", ""


def _as_one_text(path: Path) -> str | None:
    """Why a JSONL file whose lines do not parse one by one is one JSON text instead (a
    JSON array, or objects spread over several lines), as one line; None when it is not."""
    text = "\n".join(line for _, line, _ in _lines(path))
    decoder = json.JSONDecoder()
    values: list[Any] = []
    spread = False
    position = 0
    try:
        while True:
            while position < len(text) and text[position] in " \t\r\n":
                position += 1
            if position == len(text):
                break
            value, end = decoder.raw_decode(text, position)
            spread = spread or "\n" in text[position:end]
            values.append(value)
            position = end
    except (json.JSONDecodeError, RecursionError):
        return None
    if values and all(isinstance(v, list) for v in values) and any(values):
        if not all(isinstance(o, dict) for v in values for o in v):
            return None
        # several arrays one after another: what `gh api --paginate` writes, a page each
        what = "a JSON array" if len(values) == 1 else f"{len(values)} JSON arrays in a row"
        return (
            f"{path}:1: {what}, not JSON Lines (one object per line);"
            f" convert it with: jq -c '.[]' {path} > NEW.jsonl"
        )
    if spread and all(isinstance(v, dict) for v in values):
        return (
            f"{path}:1: objects spread over several lines, not JSON Lines (one object per"
            f" line); convert it with: jq -c . {path} > NEW.jsonl"
        )
    return None


Records = Iterator[tuple[int, dict[str, Any]]]
"""(line number, record) of a file, read as a stream."""


def read_jsonl(path: Path) -> tuple[list[tuple[int, dict[str, Any]]], list[str]]:
    """Every record of a JSONL file, and a ``FILE:LINE`` line for each bad line."""
    errors: list[str] = []
    return list(iter_jsonl(path, errors)), errors


def iter_jsonl(path: Path, errors: list[str]) -> Records:
    """The records of a JSONL file, one line in memory at a time; each bad line appends
    a ``FILE:LINE`` line to ``errors`` (a file that is one JSON text instead, e.g. an
    array, becomes one line saying how to convert it, once the end is reached)."""
    shape_errors = 0
    found = False
    for number, text, problem in _lines(path):
        if problem:
            errors.append(f"{path}:{number}: {problem}")
            continue
        if not text.strip():
            continue
        try:
            value = parse_json(text)
        except JsonTextError as exc:
            errors.append(f"{path}:{number}: {exc}")
            shape_errors += 1
            continue
        if not isinstance(value, dict):
            errors.append(f"{path}:{number}: expected a JSON object, got {type(value).__name__}")
            shape_errors += 1
            continue
        if (nul := nul_char(text, value)) is not None:
            errors.append(f"{path}:{number}: {nul}")
            continue
        found = True
        yield number, value
    if shape_errors and len(errors) == shape_errors and not found:
        whole = _as_one_text(path)
        if whole is not None:
            errors[:] = [whole]


def csv_delimiter(path: Path, header: str = "") -> str:
    """A ``.tsv`` file's fields are separated by tabs; a ``.csv`` file's by commas, or by
    what its header line holds most of: ``;`` (Excel where the comma is the decimal
    mark) or tabs."""
    if data_suffix(path) == ".tsv":
        return "\t"
    counts = {mark: header.count(mark) for mark in (",", ";", "\t")}
    best = max(counts, key=lambda mark: counts[mark])
    return best if counts[best] > counts[","] else ","


class WholeFile(str):
    """An error that makes every record of the file void, even those already read."""


_SEP_LINE = re.compile(r'\s*"?sep=([,;\t|])"?[,;\t]*\s*')


def _sep_line(text: str) -> str | None:
    """The delimiter a ``sep=;`` line names: Excel's way to say it on a CSV file's first
    line, before the header."""
    found = _SEP_LINE.fullmatch(text)
    return found.group(1) if found else None


class CsvSource:
    """A file's lines as the csv module reads them (each ends in "\\n" but the last, as
    if the lines were joined), remembering the blank ones not yet passed and collecting
    the unreadable ones."""

    def __init__(self, path: Path) -> None:
        self.lines = _lines(path)
        self.header = next(self.lines, (1, "", ""))
        self.blank: set[int] = set()
        self.unreadable: dict[int, str] = {}
        self.sep = _sep_line(self.header[1]) if not self.header[2] else None
        if self.sep is not None:
            self.header = next(self.lines, (self.header[0] + 1, "", ""))
        self._see(*self.header)

    def _see(self, number: int, text: str, problem: str) -> None:
        if problem:
            self.unreadable[number] = problem
        if not text.strip():
            self.blank.add(number)

    def __iter__(self) -> Iterator[str]:
        text = self.header[1]
        for following in self.lines:
            yield text + "\n"
            self._see(*following)
            text = following[1]
        yield text

    def passed(self, line: int) -> None:
        """Forget the blank lines up to ``line`` (a row ended there)."""
        self.blank = {n for n in self.blank if n > line} if self.blank else self.blank


RAW_CELLS = frozenset({"diff", "patch", "code_before", "code_after"})
"""Cells kept as they are: the space of a diff's last context line (an empty line of the
file) is part of the hunk. Every other cell loses the spaces around it."""


def iter_csv(path: Path, required: tuple[str, ...], errors: list[str]) -> Records:
    """The rows of a CSV or TSV file (a header, then rows), one row in memory at a time;
    each bad row appends a ``FILE:LINE`` line to ``errors``."""
    source = CsvSource(path)
    first = source.header[0]
    if first in source.unreadable:  # no header to read the rest by
        errors.append(f"{path}:{first}: {source.unreadable[first]}")
        errors += [f"{path}:{n}: {p}" for n, p in _lines_problems(source)]
        return
    csv.field_size_limit(max(csv.field_size_limit(), CSV_FIELD_LIMIT))
    delimiter = source.sep or csv_delimiter(path, source.header[1])
    what = "TSV" if data_suffix(path) == ".tsv" else "CSV"
    reader = csv.DictReader(iter(source), delimiter=delimiter)
    skipped = first - 1  # a ``sep=`` line before the header: the reader does not count it
    try:
        header = [h.strip() for h in (reader.fieldnames or [])]
    except csv.Error as exc:
        errors.append(f"{path}:{reader.line_num + skipped}: not {what} ({exc})")
        return
    missing = [c for c in required if c not in header]
    if missing:
        errors.append(
            f"{path}:{first}: missing column {', '.join(repr(m) for m in missing)}"
            f" (the header has {', '.join(header) or 'nothing'})"
        )
        return
    twice = sorted({h for h in header if h and header.count(h) > 1})
    if twice:
        errors.append(f"{path}:{first}: the header names {', '.join(map(repr, twice))} twice")
        return
    ended = reader.line_num + skipped
    start_errors = len(errors)
    try:
        for row in reader:
            # a row is named by the line it starts on: the first line with text after the
            # last row's end (reader.line_num is where a quoted multi-line field ends)
            start = ended + 1
            while start < reader.line_num + skipped and start in source.blank:
                start += 1
            ended = reader.line_num + skipped
            source.passed(ended)
            # a row with a line that is no text is left out (the other rows are read)
            bad = [
                f"{path}:{n}: {source.unreadable.pop(n)}"
                for n in range(start, ended + 1)
                if n in source.unreadable
            ]
            if bad:
                errors += bad
                continue
            cells = {(k or "").strip(): v or "" for k, v in row.items() if k is not None}
            if not any(v.strip() for v in cells.values()):
                continue
            values = {k: v if k in RAW_CELLS else v.strip() for k, v in cells.items()}
            extra = row.get(None)  # type: ignore[call-overload]
            if extra and any(cell.strip() for cell in extra):
                errors.append(
                    f"{path}:{start}: {len(header) + len(extra)} fields, but the"
                    f" header has {len(header)} (a {delimiter!r} inside an unquoted value?)"
                )
                continue
            yield start, values
    except csv.Error as exc:
        # the rows read before it were read by guess: none of them counts
        del errors[start_errors:]
        errors.append(WholeFile(f"{path}:{reader.line_num + skipped}: not {what} ({exc})"))
        return
    errors += [f"{path}:{n}: {p}" for n, p in source.unreadable.items()]


def _lines_problems(source: CsvSource) -> Iterator[tuple[int, str]]:
    """The unreadable lines after a CSV file's header, read to the end."""
    for number, _, problem in source.lines:
        if problem:
            yield number, problem


JSON_SUFFIXES = (".jsonl", ".json", ".ndjson")


def read_records(
    path: Path, csv_columns: tuple[str, ...]
) -> tuple[list[tuple[int, dict[str, Any]]], list[str]]:
    """Every record of a JSONL, CSV or TSV file, and a ``FILE:LINE`` line per bad one."""
    errors: list[str] = []
    records = list(iter_records(path, csv_columns, errors))
    return ([] if any(isinstance(e, WholeFile) for e in errors) else records), errors


def iter_records(path: Path, csv_columns: tuple[str, ...], errors: list[str]) -> Records:
    """The records of a JSONL, CSV or TSV file as a stream; each bad line appends a
    ``FILE:LINE`` line to ``errors``."""
    if path.is_dir():
        errors.append(f"{path}: a folder, not a JSONL or CSV file")
        return
    if not path.is_file():
        errors.append(f"{path}: no such file")
        return
    if data_suffix(path) in (".csv", ".tsv"):
        yield from iter_csv(path, csv_columns, errors)
        return
    found = False
    for number, record in iter_jsonl(path, errors):
        table = pandas_table(record) if not found else None
        if table is not None:
            errors[:] = [WholeFile(f"{path}:{number}: {table}")]
            return
        found = True
        yield number, record
    if not found and errors and data_suffix(path) not in JSON_SUFFIXES:
        first = next(_lines(path), (1, "", ""))[1]
        if not first.lstrip().startswith(("{", "[")) and any(m in first for m in ",;\t"):
            errors[:] = [
                f"{path}:1: not JSON Lines, and read as such since its name ends in neither"
                " .csv nor .tsv; a table with a header? rename it to .csv (fields separated"
                " by commas or semicolons) or .tsv (tabs)"
            ]
