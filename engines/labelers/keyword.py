"""Keyword baseline labeler: flags a commit message as performance-related when it
mentions one of a curated list of performance terms.

The list is data, not code: ``perf_keywords.toml`` beside this module holds a
``version`` number, an array of ``[[term]]`` tables (``name``, ``pattern``, optional
``note``) and an optional array of ``[[exclude]]`` tables with the same keys. Users who
keep their own list pass its path to :func:`load_terms`. Earlier versions of the list
stay packaged as ``perf_keywords_v<N>.toml``, so ``keyword@1`` still makes exactly the
labels it made when it shipped (:func:`packaged_terms`).

All patterns are compiled into one alternation guarded by word boundaries (no letter,
digit or underscore may touch a match on either side), so a message is scanned once
however long the list is. Matching ignores case: the alternation runs on the lower-cased
message, which keeps character offsets intact, and a case-insensitive twin handles the
rare texts whose lower-cased form has a different length. Exclusions come first in the
alternation: text they match (``fast-forward``, for instance) is consumed and reported
as nothing, so no term can fire inside it.
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from engines.labelers.base import NON_PERF, PERF, Prediction

__all__ = [
    "DEFAULT_TERMS_FILE",
    "KeywordLabeler",
    "KeywordMatch",
    "Term",
    "TermList",
    "find_matches",
    "load_terms",
    "packaged_terms",
]

DEFAULT_TERMS_FILE = "perf_keywords.toml"
"""Name of the packaged term list (package data of ``engines.labelers``)."""
OLDER_TERMS_FILE = "perf_keywords_v{version}.toml"
"""Name of an earlier packaged version of the list."""

_ENTRY_KEYS = frozenset({"name", "pattern", "note"})
_TOP_LEVEL_KEYS = frozenset({"version", "term", "exclude"})
# An unbounded "match anything" run between words makes a scan quadratic on long texts.
_UNBOUNDED_WILDCARD = re.compile(r"(?<!\\)(?:\\\\)*\.[*+]")
# Back-references stop meaning what their author intended once the patterns are combined.
_BACKREFERENCE = re.compile(r"(?<!\\)(?:\\\\)*\\(?:[1-9]|g<)|\(\?P=")
_NAMED_GROUP = re.compile(r"\(\?P?<(?![=!])")


@dataclass(frozen=True)
class Term:
    """One keyword or phrase: a display name and the regex that finds it."""

    name: str
    pattern: str
    note: str = ""


@dataclass(frozen=True)
class TermList:
    """A versioned list of terms plus the exclusions that shadow them."""

    version: int
    terms: tuple[Term, ...]
    excludes: tuple[Term, ...] = ()
    source: str = "<memory>"


@dataclass(frozen=True)
class KeywordMatch:
    """A term found in a text; ``text[start:end]`` is exactly the matched ``text``."""

    term: str
    start: int
    end: int
    text: str

    def as_dict(self) -> dict[str, Any]:
        """The JSON-friendly form stored in a prediction's details."""
        return {"term": self.term, "start": self.start, "end": self.end}


def _fail(source: str, where: str, problem: str) -> ValueError:
    return ValueError(f"{source}: {where}: {problem}")


def _parse_entries(raw: object, kind: str, source: str) -> tuple[Term, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise _fail(source, kind, f"expected an array of [[{kind}]] tables")
    entries: list[Term] = []
    seen: set[str] = set()
    for position, item in enumerate(raw, start=1):
        label = f"[[{kind}]] #{position}"
        if not isinstance(item, dict):
            raise _fail(source, label, "expected a table with 'name' and 'pattern'")
        name = item.get("name")
        if isinstance(name, str) and name.strip():
            label = f"[[{kind}]] #{position} ({name!r})"
        unknown = sorted(set(item) - _ENTRY_KEYS)
        if unknown:
            raise _fail(source, label, f"unknown key(s) {', '.join(unknown)}")
        pattern = item.get("pattern")
        note = item.get("note", "")
        if not isinstance(name, str) or not name.strip():
            raise _fail(source, label, "'name' must be a non-empty string")
        if not isinstance(pattern, str) or not pattern.strip():
            raise _fail(source, label, "'pattern' must be a non-empty string")
        if not isinstance(note, str):
            raise _fail(source, label, "'note' must be a string")
        if name in seen:
            raise _fail(source, label, "duplicate name")
        seen.add(name)
        _check_pattern(pattern, source, label)
        entries.append(Term(name=name.strip(), pattern=pattern, note=note))
    return tuple(entries)


def _check_pattern(pattern: str, source: str, label: str) -> None:
    problem = _pattern_problem(pattern)
    if problem is not None:
        raise _fail(source, label, problem)


@functools.lru_cache(maxsize=1024)
def _pattern_problem(pattern: str) -> str | None:
    """What is wrong with a term's pattern, if anything (checked once per pattern: a
    list is checked as it is read and again as it is compiled)."""
    if _UNBOUNDED_WILDCARD.search(pattern):
        return "unbounded '.*' or '.+'; bound it, e.g. '.{0,40}'"
    if _BACKREFERENCE.search(pattern):
        return "back-references are not supported"
    if _NAMED_GROUP.search(pattern):
        return "named groups are not supported; use (...) or (?:...)"
    try:
        compiled = re.compile(f"(?:{pattern})", re.IGNORECASE)
        lowered = re.compile(f"(?:{_lower_pattern(pattern)})")
    except re.error as exc:
        return f"pattern does not compile: {exc}"
    if compiled.fullmatch("") is not None or lowered.fullmatch("") is not None:
        return "pattern matches the empty string"
    return None


def _parse_document(document: dict[str, Any], source: str) -> TermList:
    unknown = sorted(set(document) - _TOP_LEVEL_KEYS)
    if unknown:
        raise _fail(source, "top level", f"unknown key(s) {', '.join(unknown)}")
    version = document.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise _fail(source, "version", "must be a positive integer")
    terms = _parse_entries(document.get("term"), "term", source)
    if not terms:
        raise _fail(source, "term", "the list holds no [[term]] entries")
    excludes = _parse_entries(document.get("exclude"), "exclude", source)
    return TermList(version=version, terms=terms, excludes=excludes, source=source)


def load_terms(path: str | Path | None = None) -> TermList:
    """Read a term list from ``path``, or the packaged list when ``path`` is None.

    Raises ``ValueError`` naming the file (and the entry, where one is at fault) when the
    file is not valid TOML or does not follow the format; ``OSError`` when it cannot be
    read.
    """
    if path is None:
        resource = resources.files(__package__ or "engines.labelers") / DEFAULT_TERMS_FILE
        source = str(resource)
        data = resource.read_bytes()
    else:
        source = str(path)
        data = Path(path).read_bytes()
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise _fail(source, "file", f"not valid TOML: {exc}") from exc
    return _parse_document(document, source)


def _lower_pattern(pattern: str) -> str:
    """Lower-case a pattern's literals, leaving escapes (``\\D``, ``\\W``...) alone."""
    out: list[str] = []
    escaped = False
    for char in pattern:
        if escaped:
            out.append(char)
            escaped = False
        elif char == "\\":
            out.append(char)
            escaped = True
        else:
            out.append(char.lower())
    return "".join(out)


def _without_captures(pattern: str) -> str:
    """``pattern`` with every capturing group made non-capturing.

    A term's groups only structure it (back-references and named groups are refused),
    and the regex engine enters a capturing group more slowly than a plain one: on a
    list of 70 terms this makes the combined scan about five times faster.
    """
    out: list[str] = []
    escaped = False
    class_start = -1  # where the open character class began; -1 outside one
    for position, char in enumerate(pattern):
        out.append(char)
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif class_start >= 0:
            # a "]" first in the class (after "[" or "[^") is a literal, not its end
            first = class_start + (2 if pattern.startswith("^", class_start + 1) else 1)
            if char == "]" and position > first:
                class_start = -1
        elif char == "[":
            class_start = position
        elif char == "(" and not pattern.startswith("?", position + 1):
            out.append("?:")
    return "".join(out)


def _combine(patterns: Sequence[str], flags: int) -> tuple[re.Pattern[str], list[int]]:
    """One alternation; each branch ends in an empty marker group.

    The marker is the last group a branch closes, so ``match.lastindex`` says which
    branch matched. Markers go at the end rather than named groups at the start because
    the regex engine skips a branch cheaply only when it opens with a plain literal or
    character set.
    """
    branches: list[str] = []
    markers: list[int] = []
    group = 0
    for pattern in map(_without_captures, patterns):
        # counted rather than assumed 0: a group the rewrite missed must not shift markers
        group += re.compile(f"(?:{pattern})", flags).groups + 1
        markers.append(group)
        branches.append(f"(?:{pattern})()")
    combined = r"(?<!\w)(?:" + "|".join(branches) + r")(?!\w)"
    return re.compile(combined, flags), markers


@dataclass(frozen=True)
class _Compiled:
    """The combined regex in two forms, and which marker group means which term.

    ``lower`` runs on ``text.lower()`` without IGNORECASE (several times faster);
    ``folded`` runs on the original text with IGNORECASE and serves the rare texts
    whose lower-casing changes their length (offsets would no longer line up).
    """

    lower: re.Pattern[str]
    folded: re.Pattern[str]
    terms: dict[int, str | None]  # marker group -> term name; None for an exclusion


@functools.lru_cache(maxsize=16)
def _compile(terms: TermList) -> _Compiled:
    entries = [*terms.excludes, *terms.terms]
    for kind, group in (("exclude", terms.excludes), ("term", terms.terms)):
        for position, entry in enumerate(group, start=1):
            # Lists built in code skip load_terms, so they are checked here as well.
            _check_pattern(entry.pattern, terms.source, f"[[{kind}]] #{position} ({entry.name!r})")
    names: list[str | None] = [None] * len(terms.excludes) + [t.name for t in terms.terms]
    try:
        lower, markers = _combine([_lower_pattern(e.pattern) for e in entries], 0)
        folded, folded_markers = _combine([e.pattern for e in entries], re.IGNORECASE)
    except re.error as exc:
        raise ValueError(f"{terms.source}: the combined pattern does not compile: {exc}") from exc
    if markers != folded_markers:  # pragma: no cover - lower-casing never adds groups
        raise ValueError(f"{terms.source}: lower-casing changed a pattern's groups")
    return _Compiled(lower=lower, folded=folded, terms=dict(zip(markers, names, strict=True)))


def _as_text(value: object) -> str:
    """Turn whatever arrived into a string without raising."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", errors="replace")
    try:
        return str(value)
    except Exception:
        return ""


def _scan(compiled: _Compiled, text: str) -> list[KeywordMatch]:
    lowered = text.lower()
    if len(lowered) == len(text):
        # Every character lower-cased to exactly one character: offsets carry over.
        matches = compiled.lower.finditer(lowered)
    else:
        matches = compiled.folded.finditer(text)
    found: list[KeywordMatch] = []
    terms = compiled.terms
    for match in matches:
        term = terms.get(match.lastindex or 0)
        if term is None:
            continue  # an exclusion consumed this stretch of text
        start, end = match.span()
        found.append(KeywordMatch(term=term, start=start, end=end, text=text[start:end]))
    return found


@functools.lru_cache(maxsize=1)
def _default_terms() -> TermList:
    return load_terms()


@functools.lru_cache(maxsize=8)
def packaged_terms(version: int | None = None) -> TermList:
    """The packaged list of ``version`` (the current one when None).

    Raises ``LookupError`` naming the versions that are packaged when there is no such
    version.
    """
    current = _default_terms()
    if version is None or version == current.version:
        return current
    name = OLDER_TERMS_FILE.format(version=version)
    resource = resources.files(__package__ or "engines.labelers") / name
    if version < 1 or not resource.is_file():
        raise LookupError(
            f"keyword@{version}: no such version of the term list;"
            f" packaged: {', '.join(packaged_versions())}"
        )
    terms = load_terms(Path(str(resource)))
    if terms.version != version:
        raise LookupError(f"{name} says version {terms.version}, expected {version}")
    return terms


def packaged_versions() -> list[str]:
    """The versions of the packaged lists, oldest first, as ``keyword@N`` names."""
    current = _default_terms().version
    folder = resources.files(__package__ or "engines.labelers")
    older = [
        v for v in range(1, current) if (folder / OLDER_TERMS_FILE.format(version=v)).is_file()
    ]
    return [f"keyword@{v}" for v in [*older, current]]


def find_matches(text: str, terms: TermList | None = None) -> list[KeywordMatch]:
    """All non-overlapping term matches in ``text``, left to right.

    Matching ignores case and respects word boundaries; offsets index the original
    string. ``terms`` defaults to the packaged list.
    """
    compiled = _compile(terms if terms is not None else _default_terms())
    return _scan(compiled, _as_text(text))


class KeywordLabeler:
    """Rule baseline: ``perf`` when any term matches, else ``non-perf``; score 1.0.

    It reads commit messages only, as the papers' keyword baselines do.
    """

    input_field = "message"

    def __init__(self, terms: TermList | None = None) -> None:
        self.terms: TermList = terms if terms is not None else _default_terms()
        self.name: str = f"keyword@{self.terms.version}"
        self._compiled = _compile(self.terms)

    def find_matches(self, text: str) -> list[KeywordMatch]:
        """The matches this labeler's list finds in ``text``."""
        return _scan(self._compiled, _as_text(text))

    def predict(self, texts: Sequence[str]) -> list[Prediction]:
        """Label each text; never raises on odd content (empty, huge, binary-ish)."""
        if isinstance(texts, str):
            raise TypeError("predict() takes a sequence of texts, not a single string")
        predictions: list[Prediction] = []
        for text in texts:
            matches = self.find_matches(text)
            predictions.append(
                Prediction(
                    label=PERF if matches else NON_PERF,
                    score=1.0,
                    details={"matches": [m.as_dict() for m in matches]},
                )
            )
        return predictions
