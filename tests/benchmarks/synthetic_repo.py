"""A synthetic git history for benchmarks, written with ``git fast-import`` in seconds.

Files hold several small Python functions; each commit rewrites one function body in
each of the files it touches. ``multi_file_share`` of the commits touch 2-5 files (the
tangled changes the miner throws away), the rest touch one function in one file.
"""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

FUNCTIONS_PER_FILE = 6


def _render(bodies: list[str]) -> bytes:
    parts = [
        f"def step_{i}(items):\n    total = 0\n{body}    return total\n"
        for i, body in enumerate(bodies)
    ]
    return "\n\n".join(parts).encode()


def build_repository(
    dest: Path,
    commits: int,
    files: int = 24,
    multi_file_share: float = 0.8,
    seed: int = 1,
    salt: int = 0,
) -> Path:
    """Create ``dest`` holding ``commits`` commits on ``main`` (plus one initial commit).

    Histories built with different ``salt`` share no function change, so mining several
    of them finds no duplicates across repositories.
    """
    extra = f" + {salt}" if salt else ""
    rng = random.Random(seed)
    subprocess.run(["git", "init", "-q", "-b", "main", str(dest)], check=True)
    state = {
        f"pkg/mod_{f:02d}.py": [
            f"    for x in items:\n        total += x * {f}\n" for _ in range(FUNCTIONS_PER_FILE)
        ]
        for f in range(files)
    }
    stream: list[bytes] = []

    def commit(n: int, message: str, paths: list[str]) -> None:
        when = 1_700_000_000 + n * 60
        msg = message.encode()
        stream.append(b"commit refs/heads/main\n")
        stream.append(f"committer Bench <bench@example.org> {when} +0000\n".encode())
        stream.append(f"data {len(msg)}\n".encode() + msg + b"\n")
        for path in paths:
            data = _render(state[path])
            stream.append(f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n")

    commit(0, "initial import", sorted(state))
    for n in range(1, commits + 1):
        touched = (
            rng.sample(sorted(state), rng.randint(2, 5))
            if rng.random() < multi_file_share
            else [rng.choice(sorted(state))]
        )
        for path in touched:
            slot = rng.randrange(FUNCTIONS_PER_FILE)
            state[path][slot] = (
                f"    for x in items:\n        total += x * {n} + {slot}{extra}\n"
                if n % 2
                else f"    total = sum(items) * {n} + {slot}{extra}\n"
            )
        kind = "speed up" if n % 5 == 0 else "adjust"
        commit(n, f"{kind} {', '.join(touched)} (change {n})", touched)
    subprocess.run(
        ["git", "-C", str(dest), "fast-import", "--quiet"], input=b"".join(stream), check=True
    )
    subprocess.run(["git", "-C", str(dest), "reset", "-q", "--hard", "main"], check=True)
    return dest
