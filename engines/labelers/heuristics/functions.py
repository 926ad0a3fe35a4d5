"""Heuristic labeling functions: each is a regex over a commit message that votes for one
class (``perf`` or ``non-perf``) when it matches and abstains otherwise. They are noisy and
overlap; :mod:`engines.labelers.heuristics.label_model` combines their votes."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from engines.labelers.base import NON_PERF, PERF


@dataclass(frozen=True)
class LabelingFunction:
    """A regex that votes ``vote`` when it matches (case-insensitive) and abstains otherwise."""

    name: str
    vote: str
    pattern: str

    @functools.cached_property
    def regex(self) -> re.Pattern[str]:
        return re.compile(self.pattern, re.IGNORECASE)

    def fires(self, text: str) -> bool:
        return self.regex.search(text) is not None


def _lf(name: str, vote: str, pattern: str) -> LabelingFunction:
    return LabelingFunction(name, vote, pattern)


P, N = PERF, NON_PERF
# Patterns only use bounded gaps ({0,40}), so each scan stays linear in the text length.
LABELING_FUNCTIONS: tuple[LabelingFunction, ...] = (
    # ------------------------------------------------------------------ perf: claims
    _lf("speedup-quantified", P, r"\b\d+(\.\d+)?\s*(x|×|%|times)\s*(faster|speed[- ]?up|quicker)"),
    _lf(
        "less-quantified", P, r"\b(reduc\w*|cut|sav\w*|lower\w*)\b.{0,30}\bby\s+\d+(\.\d+)?\s*(%|x)"
    ),
    _lf("faster", P, r"\b(faster|quicker|speed[- ]?ups?|speed(s|ed|ing)? up|sped up)\b"),
    _lf(
        "improve-performance",
        P,
        r"\b(improv|increas|boost|better|enhanc|optimi[sz])\w*\b.{0,40}\b(perf(ormance)?|speed|throughput|latency|efficiency)\b",
    ),
    _lf(
        "performance-improve",
        P,
        r"\bperf(ormance)?\s+(improvement|fix|boost|optimi[sz]ation|gain|enhancement|tweak|issue|problem|regression|bug|bottleneck|hit)s?\b",
    ),
    _lf("optimize", P, r"\b(optimi[sz](e|es|ed|ing|ation|ations)|de-?optimi[sz]\w*)\b"),
    _lf("efficient", P, r"\b(more\s+efficient(ly)?|efficiency|inefficien\w*)\b"),
    _lf(
        "slow",
        P,
        r"\b(too\s+slow|slowness|slow(ly)?\b.{0,20}\b(fix|path|query|start|load)|slow[- ]?down)\b",
    ),
    _lf(
        "latency-throughput",
        P,
        r"\b(latency|throughput|bottlenecks?|hot\s*(path|spot|loop)|hotspots?)\b",
    ),
    _lf("overhead", P, r"\b(overhead|expensive|costly|cheaper)\b"),
    _lf(
        "memory-footprint",
        P,
        r"\b(memory\s+(usage|footprint|consumption|use|pressure|allocations?)|(fewer|less|unnecessary|redundant|avoid\w*)\s+(memory\s+)?allocations?|allocat\w*\s+less|preallocat\w*|reserve\s+capacity)\b",
    ),
    _lf("cache", P, r"\b(cach(e|es|ed|ing)|memoi[sz]\w*)\b"),
    _lf(
        "avoid-redundant",
        P,
        r"\b(avoid|skip|eliminat\w*|remov\w*|reduc\w*|prevent)\w*\b.{0,30}\b(unnecessary|redundant|needless|extra|repeated|duplicate[d]?|superfluous)\b",
    ),
    _lf(
        "avoid-copy",
        P,
        r"\b(avoid\w*|unnecessary|redundant|extra|zero)[- ]cop(y|ies|ying)\b"
        r"|\bmove\s+instead\s+of\s+cop",
    ),
    _lf(
        "parallel",
        P,
        r"\b(paralleli[sz]\w*|in\s+parallel|vectori[sz]\w*|simd|multithread\w*|concurren\w*|thread\s+pool)\b",
    ),
    _lf(
        "lock-contention",
        P,
        r"\b(lock[- ]?free|contention|fine[- ]grained\s+lock\w*|lock\s+less|lockless)\b",
    ),
    _lf(
        "complexity",
        P,
        r"\bO\((n|log|1|n\^?2|n\s*log)\b|\b(quadratic|linear\s+time|constant\s+time)\b",
    ),
    _lf("lazy-batch", P, r"\b(lazy|lazily|on\s+demand|batch(ed|ing)|bulk)\b"),
    _lf("perf-word", P, r"\bperf(ormance|ormant)?\b"),
    _lf("fast-path", P, r"\b(fast[- ]?path|fast(er)?\s+(way|version|implementation|lookup))\b"),
    # -------------------------------------------------------------- non-perf: topics
    _lf(
        "docs",
        N,
        r"\b(docs?|documentation|readme|changelog|typos?|comments?|javadoc|docstrings?)\b",
    ),
    _lf(
        "tests",
        N,
        r"\b(unit\s+tests?|tests?\s+(for|case|cases)|add(ed|s)?\s+tests?|fix(ed|es)?\s+tests?|testing|test\s+suite)\b",
    ),
    _lf(
        "refactor-style",
        N,
        r"\b(refactor\w*|renam\w*|clean\s*up|cleanup|reformat\w*|format(ting)?|lint\w*|style|whitespace|indent\w*|code\s+quality)\b",
    ),
    _lf(
        "build-release",
        N,
        r"\b(bump(ed)?|version|release|changelog|dependenc(y|ies)|gradle|maven|cmake|makefile|ci|travis|jenkins|github\s+actions|upgrade\s+to)\b",
    ),
    _lf(
        "bugfix",
        N,
        r"\b(crash\w*|null\s*pointer|npe|segfault|exception|wrong|incorrect|broken|regression\s+in\s+behavio\w*|error\s+handling|fix(es|ed)?\s+(a\s+|the\s+)?(bug|issue|crash|error))\b",
    ),
    _lf(
        "feature",
        N,
        r"\b(add(s|ed)?\s+(support|option|feature|button|command|endpoint|ui)|new\s+feature|implement(s|ed)?\s+(support|feature))\b",
    ),
    _lf(
        "ui",
        N,
        r"\b(ui|gui|css|layout|icon|button|dialog|font|colou?r|styles?heet|translation|i18n|locali[sz]ation)\b",
    ),
    _lf("license", N, r"\b(license|licence|copyright|spdx)\b"),
    _lf("revert-merge", N, r"^\s*(revert|merge\s+branch|merge\s+remote)\b"),
    _lf("security", N, r"\b(security|cve-\d+|xss|sanitiz\w*|vulnerab\w*|injection)\b"),
    _lf(
        "perf-tooling",
        N,
        r"\b(perf(ormance)?[- ](tests?|counters?|monitor\w*|events?|stat|tool|pmu|metrics?"
        r"|report\w*)|pmu|uncore)\b",
    ),
    _lf("logging", N, r"\b(add(ed|s)?\s+(more\s+)?(debug\s+)?log(s|ging)?|log\s+messages?)\b"),
)
del P, N


def fired(text: str, functions: Sequence[LabelingFunction] = LABELING_FUNCTIONS) -> list[str]:
    """Names of the functions that vote on ``text`` (the rest abstain)."""
    return [f.name for f in functions if f.fires(text)]


def majority_vote(names: Iterable[str], functions: Sequence[LabelingFunction]) -> str | None:
    """The class most firing functions vote for; None on a tie or when all abstain."""
    votes = {f.name: f.vote for f in functions}
    perf = sum(1 for n in names if votes[n] == PERF)
    non = sum(1 for n in names if votes[n] == NON_PERF)
    return PERF if perf > non else NON_PERF if non > perf else None
