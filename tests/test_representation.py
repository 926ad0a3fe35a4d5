"""The model's view of a commit: message, separator, hunks largest first, cut to a budget."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engines.commits.representation import (
    DEFAULT_TOKEN_BUDGET,
    SEPARATOR,
    Hunk,
    approximate_tokens,
    model_input,
    order_hunks,
    split_hunks,
    truncate_tokens,
)
from engines.labelers.diff_decision import has_diff, message_part
from engines.labelers.rule_floor import rule_fires


@dataclass(frozen=True)
class HunkSpec:
    file: str
    index: int
    added: int
    deleted: int

    @property
    def body(self) -> str:
        lines = [f"@@ -{self.index * 10 + 1},3 +{self.index * 10 + 1},3 @@ def f{self.index}():"]
        lines.append(f"     marker {self.file} {self.index}")  # context: makes each body unique
        lines += [f"-    old {n}" for n in range(self.deleted)]
        lines += [f"+    new {n}" for n in range(self.added)]
        lines.append("     return x")
        return "\n".join(lines) + "\n"


def header(name: str) -> str:
    """A file's header as ``git diff`` writes it (the model reads others in this layout:
    engines.commits.diff_layout)."""
    return (
        f"diff --git a/{name} b/{name}\nindex 1111111..2222222 100644\n--- a/{name}\n+++ b/{name}\n"
    )


def build_diff(files: dict[str, list[tuple[int, int]]]) -> tuple[str, list[HunkSpec]]:
    """A unified diff with the given (added, deleted) hunks per file, and its hunks in order."""
    parts: list[str] = []
    specs: list[HunkSpec] = []
    for name, hunks in files.items():
        parts.append(header(name))
        for i, (added, deleted) in enumerate(hunks):
            spec = HunkSpec(name, i, added, deleted)
            specs.append(spec)
            parts.append(spec.body)
    return "".join(parts), specs


def expected_order(specs: list[HunkSpec]) -> list[HunkSpec]:
    """Largest edit first; ties keep their position in the diff."""
    positions = {spec: n for n, spec in enumerate(specs)}
    return sorted(specs, key=lambda s: (-(s.added + s.deleted), positions[s]))


# --------------------------------------------------------------------------- split_hunks


def test_split_hunks_keeps_each_file_header_with_its_hunks() -> None:
    diff, specs = build_diff({"a.py": [(1, 1), (3, 0)], "b/c.py": [(0, 2)]})
    hunks = split_hunks(diff)
    assert [h.body for h in hunks] == [s.body for s in specs]
    assert [h.header for h in hunks] == [header(s.file) for s in specs]
    assert [h.edit_size for h in hunks] == [s.added + s.deleted for s in specs]
    rebuilt = "".join(
        (h.header if i == 0 or h.header != hunks[i - 1].header else "") + h.body
        for i, h in enumerate(hunks)
    )
    assert rebuilt == diff


def test_split_hunks_of_a_diff_without_hunks() -> None:
    binary = "diff --git a/x.bin b/x.bin\nBinary files a/x.bin and b/x.bin differ\n"
    assert split_hunks(binary) == [Hunk("", binary)]
    assert split_hunks("") == []
    assert split_hunks("\n\n") == []
    assert order_hunks(binary) == binary


def test_split_hunks_without_git_headers() -> None:
    # PyDriller-style per-file diffs start straight at the first "@@".
    first, second = HunkSpec("f", 0, 1, 0).body, HunkSpec("f", 1, 4, 4).body
    hunks = split_hunks(first + second)
    assert hunks == [Hunk("", first), Hunk("", second)]
    assert order_hunks(first + second) == second + first


def test_a_file_without_hunks_between_two_with_hunks() -> None:
    a_diff, _ = build_diff({"a.py": [(1, 0)]})
    c_diff, _ = build_diff({"c.py": [(5, 5)]})
    mode_only = "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"
    hunks = split_hunks(a_diff + mode_only + c_diff)
    assert len(hunks) == 3
    assert hunks[1] == Hunk("", mode_only)
    # the 10-line edit first, then the 1-line one, then the section with no edits at all
    assert order_hunks(a_diff + mode_only + c_diff) == c_diff + a_diff + mode_only


# --------------------------------------------------------------------------- order_hunks


def test_order_hunks_largest_first_with_ties_in_diff_order() -> None:
    sizes = {"a.py": [(1, 0), (2, 2), (1, 1)], "b.py": [(3, 1), (0, 1)]}
    diff, specs = build_diff(sizes)
    ordered = order_hunks(diff)
    want = expected_order(specs)
    assert [h.body for h in split_hunks(ordered)] == [s.body for s in want]
    # the two 4-line edits (a.py #1 and b.py #0) keep their diff order, as do the 1-line ones
    edit_sizes = [s.added + s.deleted for s in want]
    assert edit_sizes == sorted(edit_sizes, reverse=True)


def test_order_hunks_writes_the_header_before_each_files_first_hunk() -> None:
    diff, specs = build_diff({"a.py": [(5, 5), (1, 0)], "b.py": [(2, 2)]})
    ordered = order_hunks(diff)
    # a.py's big hunk, then b.py's, then a.py's small one: a.py's header appears again
    assert ordered == (
        header("a.py") + specs[0].body + header("b.py") + specs[2].body
        + header("a.py") + specs[1].body
    )  # fmt: skip


def test_order_hunks_does_not_repeat_a_header_for_consecutive_hunks_of_a_file() -> None:
    diff, specs = build_diff({"a.py": [(1, 1), (6, 0), (2, 2)]})
    ordered = order_hunks(diff)
    assert ordered.count("diff --git ") == 1
    assert ordered == header("a.py") + specs[1].body + specs[2].body + specs[0].body


def test_order_hunks_counts_only_added_and_deleted_lines() -> None:
    context_heavy = "@@ -1,9 +1,9 @@\n" + " ctx\n" * 8 + "-a\n+b\n"
    small_but_real = "@@ -20,3 +20,3 @@\n-a\n-b\n+c\n"
    assert Hunk("", context_heavy).edit_size == 2
    assert Hunk("", small_but_real).edit_size == 3
    assert order_hunks(context_heavy + small_but_real) == small_but_real + context_heavy


def test_edit_size_ignores_empty_lines() -> None:
    # ``line[:1] in "+-"`` is true for "" (an empty context line, as git writes with
    # diff.suppressBlankEmpty), so blank lines inflate a hunk's size.
    assert Hunk("", "@@ -1,4 +1,4 @@\n a\n\n\n-b\n+c\n").edit_size == 2


@given(
    st.lists(
        st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=1, max_size=4),
        min_size=1,
        max_size=4,
    )
)
def test_order_hunks_is_a_stable_sort_of_the_hunks(sizes: list[list[tuple[int, int]]]) -> None:
    diff, specs = build_diff({f"dir/file{i}.py": hunks for i, hunks in enumerate(sizes)})
    ordered = order_hunks(diff)
    hunks = split_hunks(ordered)
    want = expected_order(specs)
    assert [h.body for h in hunks] == [s.body for s in want]
    assert [h.header for h in hunks] == [header(s.file) for s in want]
    # a header is written exactly when the file differs from the hunk before
    switches = 1 + sum(a.file != b.file for a, b in itertools.pairwise(want))
    assert ordered.count("diff --git ") == switches


# --------------------------------------------------------------------------- model_input

MESSAGE = "  Avoid quadratic string building in the renderer\n\nUse a list and join once.\n\n"


def big_diff() -> str:
    diff, _ = build_diff({"render.py": [(2, 1), (40, 35), (6, 6)], "util.py": [(12, 3)]})
    return diff


def test_model_input_is_message_separator_then_ordered_diff() -> None:
    diff = big_diff()
    full = model_input(MESSAGE, diff, budget=0)
    assert full == MESSAGE.strip() + SEPARATOR + order_hunks(diff)


@pytest.mark.parametrize("budget", [15, 17, 64, 200, DEFAULT_TOKEN_BUDGET])
def test_model_input_respects_the_token_budget(budget: int) -> None:
    diff = big_diff()
    full = model_input(MESSAGE, diff, budget=0)
    assert approximate_tokens(MESSAGE) < budget < approximate_tokens(full)
    cut = model_input(MESSAGE, diff, budget=budget)
    assert approximate_tokens(cut) == budget  # cut exactly at the budget-th token
    assert full.startswith(cut)
    assert cut.startswith(MESSAGE.strip() + SEPARATOR)


@pytest.mark.parametrize("budget", [1, 5, 14])
def test_a_message_over_the_budget_is_kept_whole_without_its_diff(budget: int) -> None:
    assert approximate_tokens(MESSAGE) == 14
    text = model_input(MESSAGE, big_diff(), budget=budget)
    assert text == MESSAGE.strip() + SEPARATOR
    assert message_part(text) == MESSAGE.strip() + SEPARATOR
    assert not has_diff(text)


def test_the_rule_floor_reads_a_long_message_to_its_end() -> None:
    """A perf word past the budget still reaches the rules under a model."""
    message = "Tidy the parser. " + "Rename helpers and move code around. " * 120
    message += "This also makes loading twice as fast."
    assert approximate_tokens(message) > DEFAULT_TOKEN_BUDGET
    text = model_input(message, big_diff())
    assert rule_fires(text)
    assert text.startswith(message.strip())


def test_short_commit_is_kept_whole() -> None:
    diff, _ = build_diff({"a.py": [(1, 1)]})
    text = model_input("Tiny fix", diff)
    assert approximate_tokens(text) < DEFAULT_TOKEN_BUDGET
    assert text == "Tiny fix" + SEPARATOR + diff


def test_budget_zero_means_no_cut() -> None:
    diff = big_diff()
    assert model_input(MESSAGE, diff, budget=0) == MESSAGE.strip() + SEPARATOR + order_hunks(diff)
    assert truncate_tokens("a b c d", 0) == "a b c d"  # the same convention as model_input


def test_model_input_puts_the_largest_hunk_right_after_the_message() -> None:
    diff = big_diff()
    text = model_input(MESSAGE, diff, budget=80)
    after_message = text[len(MESSAGE.strip() + SEPARATOR) :]
    assert after_message.startswith(header("render.py") + "@@ -11,3 +11,3 @@")


def test_custom_token_counter_is_honoured() -> None:
    calls: list[str] = []

    def count_chars(text: str) -> int:
        calls.append(text)
        return len(text)

    diff = big_diff()
    full = model_input(MESSAGE, diff, budget=0)
    budget = 150
    text = model_input(MESSAGE, diff, budget=budget, count_tokens=count_chars)
    assert calls, "the custom counter was never called"
    assert full.startswith(text)
    assert 0 < len(text) <= budget
    # whole lines are kept while they fit: the next line would have gone over
    next_line = full[len(text) :].splitlines(keepends=True)[0]
    assert len(text) + len(next_line) > budget
    # the built-in counter would have kept far more than 150 characters
    assert len(model_input(MESSAGE, diff, budget=budget)) > len(text)


# --------------------------------------------------------------------------- truncate_tokens


@given(st.text(), st.integers(min_value=1, max_value=50))
def test_truncate_tokens_is_a_prefix_within_the_budget(text: str, budget: int) -> None:
    cut = truncate_tokens(text, budget)
    assert text.startswith(cut)
    assert approximate_tokens(cut) <= budget
    tokens = approximate_tokens(text)
    if tokens < budget or tokens == budget:
        assert cut == text
    else:
        assert approximate_tokens(cut) == budget


def test_truncate_tokens_keeps_text_of_exactly_budget_tokens() -> None:
    text = "fix loop\n"
    assert approximate_tokens(text) == 2
    assert truncate_tokens(text, 2) == text


@given(
    st.text(alphabet=st.sampled_from("ab_1 \n\t.,;()[]+-é日"), max_size=80),
    st.text(max_size=40),
    st.integers(min_value=1, max_value=60),
)
def test_model_input_never_exceeds_the_budget(message: str, filler: str, budget: int) -> None:
    diff = f"{header('x.py')}@@ -1 +1 @@\n-{filler}\n+{message}\n"
    text = model_input(message, diff, budget=budget)
    assert approximate_tokens(text) <= max(budget, approximate_tokens(message))
    assert text.startswith(message.strip())
    assert model_input(message, diff, budget=0).startswith(text)
