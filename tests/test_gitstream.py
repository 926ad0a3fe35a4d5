"""The long-lived ``cat-file`` and ``diff-tree`` processes, on a real repository: each
answer ends where it should, whatever came before it."""

from __future__ import annotations

from engines.commits.gitstream import NULL_OID, GitStreams
from tests.gitrepo import GitRepo


def test_answers_stay_in_step_across_empty_root_and_large_commits(repo: GitRepo) -> None:
    root = repo.commit("root", {"a.py": "x = 1\n"})
    empty = repo.commit("nothing", {})
    big_text = "".join(f"line {i}\n" for i in range(5_000))
    big = repo.commit("big", {"a.py": big_text, "b.c": "int b;\n"})
    head_line = repo.commit("a line that is an object name", {"a.py": f"{big}\n" + big_text})
    git = GitStreams(repo.path)
    try:
        assert git.commit(root).parents == ()
        [added] = git.patch(root, root=True)
        assert (added.status, added.old_oid, added.new_path) == ("A", NULL_OID, "a.py")
        assert git.patch(empty) == []
        files = git.patch(big)
        assert sorted(f.new_path for f in files) == ["a.py", "b.c"]
        a = next(f for f in files if f.new_path == "a.py")
        assert a.line_counts() == (5_000, 1)
        # the next answer is read from the start of its own header, not from leftovers
        [changed] = git.patch(head_line)
        assert changed.line_counts() == (1, 0)
        assert changed.body.splitlines()[1] == b"+" + big.encode()
        assert git.blob(changed.new_oid) == (f"{big}\n" + big_text).encode()
        assert git.patch(empty) == []  # and once more, after all that
    finally:
        git.close()
