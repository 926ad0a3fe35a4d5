"""Dedup keys for commits: MD5 of the changed functions and a content hash of the diff."""

from __future__ import annotations

import hashlib


def function_md5(before: str, after: str) -> str:
    """PerfCurator's key: MD5 over the modified function(s) before and after."""
    digest = hashlib.md5(usedforsecurity=False)
    digest.update(before.encode("utf-8", "surrogatepass"))
    digest.update(b"\0")
    digest.update(after.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def diff_hash(diff: str) -> str:
    """PerfMiner's key: SHA-256 of the diff's hunk bodies (context and changed lines),
    ignoring file headers and line numbers, so the same edit in another file or at
    another position hashes alike."""
    digest = hashlib.sha256()
    header_lines = 0
    for line in diff.splitlines():
        if line.startswith("diff --git "):
            header_lines = 2  # the "--- a/..." and "+++ b/..." lines that follow
            continue
        if header_lines:
            header_lines -= 1
            continue
        if line.startswith("@@"):
            continue
        digest.update(line.encode("utf-8", "surrogatepass"))
        digest.update(b"\n")
    return digest.hexdigest()
