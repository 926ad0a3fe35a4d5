"""One annotator working a routed set in its own process, as a script or front end would.

``python -m tests.routing_worker DB SET ANNOTATOR [--crash N]`` claims and votes until
the set has nothing pending; the label is a function of the item, so items settle. With
``--crash N`` it claims N items, votes on none and exits (a process that died holding
leases). Prints the item ids it voted on.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from annotation.routing import serve_next, submit
from annotation.votes import VoteError
from store import open_store
from store.routing import set_counters
from store.sets import get_set

LEASE_MINUTES = 0.02  # 1.2 s, so a crashed worker's claims come free during the run


def label_for(item_id: int) -> str:
    return "perf" if item_id % 3 == 0 else "non-perf"


def work(db: Path, set_name: str, annotator: str, crash: int = 0) -> list[int]:
    voted: list[int] = []
    with open_store(db) as store:
        set_row = get_set(store, set_name)
        assert set_row is not None
        for _ in range(crash):
            serve_next(store, set_row, annotator, lease_minutes=LEASE_MINUTES, after_position=-1)
            # a crashed process keeps its claim; asking again must not renew the same one
            annotator = f"{annotator}+"
        if crash:
            return []
        while True:
            served = serve_next(store, set_row, annotator, lease_minutes=LEASE_MINUTES)
            if served is None:
                counters = set_counters(store, set_row.id)
                assert counters is not None
                if counters.pending == 0:
                    return voted
                time.sleep(0.05)  # what is left is claimed by others; wait for them
                continue
            try:
                item = served.entry.item_id
                submit(store, set_row, item, annotator, label_for(item))
            except VoteError:
                continue  # our lease ran out and the item filled up meanwhile
            voted.append(served.entry.item_id)


def main() -> None:
    args = sys.argv[1:]
    crash = int(args[args.index("--crash") + 1]) if "--crash" in args else 0
    voted = work(Path(args[0]), args[1], args[2], crash)
    print(" ".join(str(i) for i in voted))


if __name__ == "__main__":
    main()
