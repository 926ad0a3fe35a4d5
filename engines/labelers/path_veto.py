"""Commits that change a test, a benchmark or an example.

PerfMiner's definition counts testing as another quality, not performance, and so does
every team-labeled set in ``sample_data/cross_source*``: of the 365 commits there whose
one changed source file is a test, a benchmark or an example, 358 are ``non-perf``.
Their messages still say "speed up the tests" or "faster benchmark", so the keyword
rules and the models that learned from messages call them perf. A trained labeler's
rule layer (``engines.labelers.rule_floor``) therefore calls a commit non-perf when the
file it changes is one of these.

A path counts when a directory on it is named like a test, benchmark, fuzzing or
example tree (``tests/``, ``src/test/``, ``benchmarks/``, ``jmh/``, ``examples/``...) or
the file is named like a test or benchmark (``test_x.py``, ``x_test.cc``,
``FooTest.java``, ``bench_x.c``). A commit is vetoed only when every file it changes
counts (:func:`only_tests`): a change to a source file and its test is judged as usual.
"""

from __future__ import annotations

import re

_DIRS = r"tests?|testing|testdata|benchmarks?|bench|jmh|perf-?tests?|fuzz(ing|ers?)?|examples?"
_TEST_PATH = re.compile(
    rf"(^|/)({_DIRS})/"
    r"|(^|/)test_[^/]*\.py$"
    r"|_test\.(py|c|cc|cpp|cxx|go)$"
    r"|(^|/)bench(mark)?_[^/]*\.(c|cc|cpp|cxx|py)$",
    re.IGNORECASE,
)
# JUnit's naming is case-sensitive: FooTest.java, TestFoo.java, but not Latest.java.
_JAVA_TEST = re.compile(r"(^|/)(Tests?|Test[A-Z0-9_]\w*|\w+Tests?)\.java$")


def is_test_path(path: str) -> bool:
    """Whether ``path`` lies in a test, benchmark or example tree, or names a test."""
    return bool(_TEST_PATH.search(path) or _JAVA_TEST.search(path))


def only_tests(files: str) -> bool:
    """Whether ``files`` (one path per line) names at least one file and all are tests,
    benchmarks or examples."""
    paths = [line.strip() for line in files.splitlines() if line.strip()]
    return bool(paths) and all(is_test_path(p) for p in paths)
