"""Save an SVG screenshot of every screen of the app into docs/images/.

Builds the tests' sample store in a temporary directory, opens each screen the way the
snapshot tests do, and saves what Textual draws:

    .venv/bin/python scripts/tui_screenshots.py [--size 100x30]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from curator.tui.app import CuratorApp  # noqa: E402
from tests.test_tui_snapshots import SCREENS  # noqa: E402
from tests.tui_store import build  # noqa: E402


async def shoot(db: Path, name: str, size: tuple[int, int], out: Path) -> None:
    app = CuratorApp(db, "dave")
    async with app.run_test(size=size) as pilot:
        await SCREENS[name](db)(pilot)
        app.save_screenshot(filename=f"tui-{name}.svg", path=str(out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="100x30")
    args = parser.parse_args()
    width, height = (int(x) for x in args.size.split("x"))
    out = ROOT / "docs" / "images"
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        db = build(Path(tmp) / "screens.db")
        for name in SCREENS:
            asyncio.run(shoot(db, name, (width, height), out))
            print(f"docs/images/tui-{name}.svg")


if __name__ == "__main__":
    main()
