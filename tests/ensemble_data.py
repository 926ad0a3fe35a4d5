"""A small synthetic commit corpus for the ensemble and weak-supervision tests: labeled
commits in several repositories (split into train, dev and eval sets by repository) and
unvoted commits from other repositories."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

PERF = [
    ("Speed up {x} parsing with a cache", "+cache = {{}}\n+if key in cache: return cache[key]"),
    ("Reduce allocations in the {x} hot loop", "+buf.reserve(n)\n-buf = []"),
    ("Use a bitwise and instead of modulus in {x} hashing", "-h % size\n+h & (size - 1)"),
    ("Avoid copying {x} buffers on every call", "-data = list(buf)\n+data = memoryview(buf)"),
    ("Make {x} lookup faster", "-for k in items:\n+index = dict(items)"),
    ("Hoist the {x} regex compile out of the loop", "+PATTERN = re.compile(r)\n-re.match(r, s)"),
]
NON_PERF = [
    ("Fix typo in {x} docs", "-teh\n+the"),
    ("Add a {x} option to the CLI", "+parser.add_argument('--{x}')"),
    ("Rename the {x} helper", "-def old_{x}():\n+def new_{x}():"),
    ("Refactor {x} tests", "-def test_a():\n+def test_b():"),
    ("Update {x} changelog", "+## 1.2.0\n+- notes"),
    ("Fix crash when {x} is empty", "+if not {x}: return None"),
]
THINGS = ["json", "config", "router", "cache", "index", "token", "parser", "graph"]


def _item(repo: str, n: int, message: str, diff: str) -> dict:
    key = f"{repo}-{n}"
    return {
        "id": key,
        "repo": f"https://example.org/ens/{repo}",
        "sha": hashlib.sha1(key.encode()).hexdigest(),
        "language": "python",
        "file": "m.py",
        "message": message,
        "diff": diff,
        "stars": 10,
    }


def write_corpus(folder: Path, repos: int = 6, pool_repos: int = 2) -> tuple[Path, Path, Path]:
    """``labeled.jsonl`` with ``votes.csv`` (two agreeing votes each), and ``pool.jsonl``
    (unvoted commits from other repositories, half perf-like, half not)."""
    labeled, votes, pool = [], ["item,annotator,label,category,note"], []
    for r in range(repos):
        for n in range(12):
            perf = n % 2 == 0
            message, diff = (PERF if perf else NON_PERF)[(n // 2 + r) % 6]
            thing = THINGS[(n + r) % len(THINGS)]
            item = _item(f"r{r}", n, message.format(x=thing), diff.format(x=thing))
            labeled.append(item)
            label = "perf" if perf else "non-perf"
            votes += [f"{item['id']},alice,{label},,", f"{item['id']},bob,{label},,"]
    for r in range(pool_repos):
        for n in range(12):
            message, diff = (PERF if n % 2 == 0 else NON_PERF)[(n // 2) % 6]
            thing = THINGS[(n + 3 * r) % len(THINGS)]
            pool.append(_item(f"p{r}", n, message.format(x=thing), diff.format(x=thing)))
    folder.mkdir(parents=True, exist_ok=True)
    paths = (folder / "labeled.jsonl", folder / "votes.csv", folder / "pool.jsonl")
    paths[0].write_text("".join(json.dumps(x) + "\n" for x in labeled), encoding="utf-8")
    paths[1].write_text("\n".join(votes) + "\n", encoding="utf-8")
    paths[2].write_text("".join(json.dumps(x) + "\n" for x in pool), encoding="utf-8")
    return paths


def load_corpus(cli, folder: Path) -> None:  # type: ignore[no-untyped-def]
    """Import the corpus and split the labeled set by repository into tr, dev and ev."""
    labeled, votes, pool = write_corpus(folder)
    assert cli("import", "items", str(labeled), "--set", "all").exit_code == 0
    assert cli("import", "votes", str(votes)).exit_code == 0
    assert cli("import", "items", str(pool)).exit_code == 0
    made = cli("set", "split", "--from-set", "all", "--into", "tr:50,dev:25,ev:25")
    assert made.exit_code == 0, made.output
