"""Compare what the demo stored with what the sample recipe says should be stored."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

from curator.settings import resolve_db_path
from store import open_store
from store.items import count_items

ROOT = Path(__file__).resolve().parents[1]


def main(repo: str, db: str | None = None) -> int:
    recipe = yaml.safe_load((ROOT / "sample_data/commits/recipe.yaml").read_text())
    expected = sum(1 for c in recipe["commits"] if c.get("expect") == "stored")
    source = str(Path(repo).resolve())
    # found as every curator command finds it: --db, $CURATOR_DB, the config files
    with open_store(resolve_db_path(db), create=False) as store:
        stored = count_items(store, "commit", source)
    if stored != expected:
        print(f"demo: MISMATCH: {stored} commits stored, the recipe expects {expected}")
        return 1
    print(
        f"demo: OK: {stored} commits from the sample repository are in {store.path}, exactly "
        f"the recipe's {expected} single-file, single-function commits"
    )
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("repo", nargs="?", default="build/sample-repo")
    parser.add_argument("--db", help="the database (default: as every curator command)")
    args = parser.parse_args()
    sys.exit(main(args.repo, args.db))
