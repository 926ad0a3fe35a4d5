"""Run the app headless in its own process and vote on N items by key presses.

``python -m tests.tui_voter DB SET ANNOTATOR N`` prints the item ids it voted on;
the two-annotator test starts two of these at once against one database.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from curator.tui.app import CuratorApp
from curator.tui.screens.label import LabelScreen


async def vote(db: Path, set_name: str, annotator: str, n: int) -> list[int]:
    app = CuratorApp(db, annotator, open_set=set_name)
    voted: list[int] = []
    async with app.run_test() as pilot:

        def shown() -> int | None:
            screen = app.screen
            if isinstance(screen, LabelScreen) and screen.view and not screen.busy:
                return screen.view.item_id
            return None

        for _ in range(n):
            for _ in range(3000):
                await pilot.pause(0.01)
                current = shown()
                if current is not None and current not in voted:
                    break
            else:
                raise SystemExit(f"{annotator}: the next item never showed")
            voted.append(current)
            await pilot.press("1")
        for _ in range(3000):
            await pilot.pause(0.01)
            if shown() not in voted[-1:]:
                break
    return voted


def main() -> None:
    db, set_name, annotator, n = sys.argv[1:5]
    ids = asyncio.run(vote(Path(db), set_name, annotator, int(n)))
    print(" ".join(str(i) for i in ids))


if __name__ == "__main__":
    main()
