"""Refit the heuristic label model on unlabeled commit messages and write it atomically.

Usage: ``python -m engines.labelers.heuristics.fit OUT.json FILE.jsonl...`` where each
line of a file holds a message under ``commit_message`` or ``message``; labels, if
present, are ignored. Bump ``--version`` whenever the functions or the data change, so
stored ``heuristics@N`` predictions stay traceable to the model that made them.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from engines.files import write_text_atomically
from engines.labelers.heuristics.label_model import fit_label_model


def read_messages(path: Path) -> list[str]:
    """Messages of a JSONL file; a line without one raises naming file and line."""
    messages = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not JSON ({exc.msg})") from None
            message = record.get("commit_message", record.get("message"))
            if not isinstance(message, str):
                raise ValueError(f"{path}:{number}: no 'commit_message' or 'message' string")
            messages.append(message)
    return messages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("files", type=Path, nargs="+")
    parser.add_argument("--version", type=int, default=1)
    parser.add_argument("--prior", type=float, default=0.5, help="P(perf), the class balance")
    args = parser.parse_args(argv)
    try:
        messages = [m for f in args.files for m in read_messages(f)]
    except (OSError, ValueError) as exc:
        parser.exit(1, f"error: {exc}\n")
    try:
        model = fit_label_model(messages, version=args.version, prior=args.prior)
    except ValueError as exc:
        parser.exit(1, f"error: {exc}\n")
    write_text_atomically(args.out, json.dumps(model.as_json(), indent=2) + "\n")
    print(f"fitted heuristics@{model.version} on {len(messages)} messages -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
