"""Parquet data files (``curator export --format parquet``): the same records as JSONL,
one typed column per field.

Columns follow the kind's JSON Schema: strings, ``int64``, ``float64``, ``bool``, lists
of strings, and Arrow's JSON type (``arrow.json``, Parquet's JSON logical type) for
objects and lists of objects (``provenance``, ``votes``...), so a record read back is
the record written. Reading yields each row as the canonical JSON line of the JSONL
format (:func:`curator.releases.files.encode_line`), so ``curator validate`` and
``curator import release`` check and load a Parquet release with the code they use for
JSONL. pyarrow is imported only here, when a Parquet file is written or read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from curator.releases.schema import record_schema

ROW_GROUP = 5_000


def column_type(schema: dict[str, Any]) -> str:
    """``string``, ``int64``, ``float64``, ``bool``, ``list:string`` or ``json``."""
    if "const" in schema:
        return "string"
    if "enum" in schema:
        kinds = {type(v) for v in schema["enum"] if v is not None}
        return "string" if kinds <= {str} else "json"
    types = schema.get("type")
    types = [types] if isinstance(types, str) else [t for t in (types or []) if t != "null"]
    if len(types) != 1:
        return "json"
    if types[0] == "array":
        return "list:string" if schema.get("items", {}).get("type") == "string" else "json"
    return {"string": "string", "integer": "int64", "number": "float64", "boolean": "bool"}.get(
        types[0], "json"
    )


def columns(kind: str) -> list[tuple[str, str]]:
    """(field, column type) of a kind's records, in field-name order."""
    properties = record_schema(kind)["properties"]
    return [(name, column_type(properties[name])) for name in sorted(properties)]


def _arrow_schema(kind: str) -> Any:
    import pyarrow as pa

    types = {
        "string": pa.string(),
        "int64": pa.int64(),
        "float64": pa.float64(),
        "bool": pa.bool_(),
        "list:string": pa.list_(pa.string()),
        "json": pa.json_(),
    }
    return pa.schema([pa.field(name, types[t]) for name, t in columns(kind)])


def _encode_json(value: Any) -> str | None:
    if value is None:
        return None
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


class ParquetRecordFile:
    """A Parquet file being written, with the interface of ``RecordFile``: ``write``
    takes the record's canonical JSON line; rows go out in row groups of ROW_GROUP."""

    def __init__(self, path: Path, kind: str) -> None:
        import pyarrow.parquet as pq

        self.path = path
        self.records = 0
        self._schema = _arrow_schema(kind)
        self._json = {f.name for f in self._schema if str(f.type) == "extension<arrow.json>"}
        self._rows: list[dict[str, Any]] = []
        self._writer = pq.ParquetWriter(path, self._schema, compression="zstd")

    def write(self, line: bytes) -> None:
        record = json.loads(line)
        for name in self._json:
            record[name] = _encode_json(record[name])
        self._rows.append(record)
        self.records += 1
        if len(self._rows) >= ROW_GROUP:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa

        if self._rows:
            self._writer.write_table(pa.Table.from_pylist(self._rows, schema=self._schema))
            self._rows = []

    def close(self) -> tuple[str, int]:
        """Finish the file (flushed to disk) and return its sha256 and size."""
        import os

        from curator.releases.files import file_sha256

        self._flush()
        self._writer.close()
        with self.path.open("rb") as fh:
            os.fsync(fh.fileno())
        return file_sha256(self.path), self.path.stat().st_size

    def abandon(self) -> None:
        self._writer.close()


def parquet_lines(path: Path) -> Iterator[bytes]:
    """Each row as its canonical JSON line; an unreadable file raises ``OSError``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from curator.releases.files import encode_line

    try:
        source = pq.ParquetFile(path)
        json_columns = {f.name for f in source.schema_arrow if isinstance(f.type, pa.JsonType)}
        for batch in source.iter_batches(batch_size=ROW_GROUP):
            for row in batch.to_pylist():
                for name in json_columns:
                    if row[name] is not None:
                        row[name] = json.loads(row[name])
                yield encode_line(row)
    except (pa.ArrowException, json.JSONDecodeError) as exc:
        raise OSError(f"not a readable Parquet file: {exc}") from exc
