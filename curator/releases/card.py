"""``README.md``: the release's dataset card, so ``datasets.load_dataset(DIR)`` loads it.

The YAML header names one config per kind (the first, alphabetically, is the default),
each with its data files per split (``train`` when the release is not split), the
features derived from the kind's JSON Schema, the licence and a citation; the body is
the datasheet. ``manifest.json`` and ``schema/`` are not data files of any config, so
they do not get in the way, and kinds never share a split.
"""

from __future__ import annotations

import json
from typing import Any

from curator import __version__
from curator.releases.parquet import columns

CARD = "README.md"
UNSPLIT = "train"  # the split name Hugging Face gives a dataset that has one


def _quote(text: str) -> str:
    return json.dumps(text)  # a JSON string is a valid YAML scalar


# pyarrow's JSON reader turns ISO 8601 strings into timestamps, which ``datasets`` casts
# back to strings in another format; a ``json`` feature is read as the JSON text itself,
# so these fields come back exactly as written.
DATE_FIELDS = frozenset({"date"})


def features(kind: str, parquet: bool = False) -> list[tuple[str, str]]:
    """(name, feature) for every field of a kind's records, in name order: the Parquet
    column types (``json`` for objects), and ``json`` for dates read from JSONL."""
    return [
        (name, "json" if name in DATE_FIELDS and not parquet else dtype)
        for name, dtype in columns(kind)
    ]


def _split_name(part: str | None) -> str:
    return UNSPLIT if part is None else part


def card_header(version: str, files: dict[str, dict[str, Any]]) -> list[str]:
    """The YAML front matter: configs with their data files per split, dataset_info
    with features (split sizes are left to ``datasets``: it wants Arrow bytes), licence.
    ``files`` maps data file names to their manifest entries."""
    by_kind: dict[str, list[tuple[str, str]]] = {}
    parquet = any(name.endswith(".parquet") for name in files)
    for name, entry in sorted(files.items()):
        # an empty split file stays in the release but not in the card: the datasets
        # library refuses a split that matches no rows
        if "kind" in entry and entry.get("records") != 0:
            split = _split_name(entry.get("split"))
            by_kind.setdefault(entry["kind"], []).append((split, name))
    lines = [
        "---",
        "license: other",
        "license_name: per-source",
        f"pretty_name: {_quote(f'Curator release {version}')}",
        "tags:",
        "- code",
        "- performance",
        "- curator",
        "configs:",
    ]
    for n, kind in enumerate(sorted(by_kind)):
        lines += [f"- config_name: {kind}", *(["  default: true"] if n == 0 else [])]
        lines.append("  data_files:")
        for split, name in by_kind[kind]:
            lines += [f"  - split: {split}", f"    path: {_quote(name)}"]
    lines.append("dataset_info:")
    for kind in sorted(by_kind):
        lines += [f"- config_name: {kind}", "  features:"]
        for name, dtype in features(kind, parquet):
            if dtype.startswith("list:"):
                lines += [f"  - name: {name}", f"    list: {dtype.split(':', 1)[1]}"]
            else:
                lines += [f"  - name: {name}", f"    dtype: {dtype}"]
    return [*lines, "---", ""]


def render_card(version: str, files: dict[str, dict[str, Any]], datasheet: str) -> str:
    """The whole card: header, how to load, licence, citation, then the datasheet. It
    holds no creation time, so a re-export gives the same bytes (only the manifest
    differs)."""
    kinds = sorted({e["kind"] for e in files.values() if "kind" in e})
    # only the kinds the header gives a config: a kind without records has none
    loadable = sorted({e["kind"] for e in files.values() if "kind" in e and e.get("records")})
    loads = [f'load_dataset("path/to/{version}", "{kind}")' for kind in loadable]
    how = (
        [
            "Load it with Hugging Face `datasets` (one config per kind; the first is the default):",
            "",
            "```python",
            "from datasets import load_dataset",
            "",
            f'ds = load_dataset("path/to/{version}")',
            *loads,
            "```",
        ]
        if loadable
        else ["This release holds no records: there is nothing for `datasets` to load."]
    )
    body = [
        f"# Curator release {version}",
        "",
        *how,
        "",
        "`manifest.json` lists every file with its sha256 and `schema/` holds each kind's"
        " JSON Schema; `curator validate DIR` checks them.",
        "",
        "## Licence",
        "",
        "The labels, votes and figures are released with this dataset. The code in each"
        " record (diffs, kernels, IR) stays under the licence of the repository it comes"
        " from (`source`; IR records carry their project's `license`); check it before reuse.",
        "",
        "## Citation",
        "",
        "```bibtex",
        f"@misc{{curator_release_{_bib_key(version)},",
        f"  title = {{Curator release {version}: ground truth of {', '.join(kinds)} items}},",
        f"  note = {{Exported by Curator {__version__}; see manifest.json for the date}}",
        "}",
        "```",
        "",
    ]
    sheet = datasheet.replace("# Datasheet", "## Datasheet", 1)
    return "\n".join([*card_header(version, files), *body, sheet])


def _bib_key(version: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in version)
