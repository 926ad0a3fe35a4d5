"""``DATASHEET.md``: the release described from the store, in the order of the datasheet
questions the ComPile paper answers (composition, collection, preprocessing, dedup,
labeling, agreement, audit precision, licenses, splits, maintenance).

Everything printed is computed from the store and the export's own counts, in a fixed
order with fixed rounding and no timestamp, so the same store gives the same text.
"""

from __future__ import annotations

import re
import warnings
from collections import Counter
from typing import Any

from annotation.adjudication import decisions_for_set, summary
from annotation.audit import audit_report
from annotation.labels import SKIP
from annotation.set_reports import agreement_for_set
from curator import __version__
from curator.releases.tally import ReleaseFacts
from store import Store
from store.ir import ir_counts
from store.kernels import kernel_verdict_counts
from store.releases import duplicate_counts, item_counts, kernel_filter_counts
from store.sets import SetRow, all_sets, set_size

TOP_SOURCES = 20

COLLECTION = {
    "commit": (
        "Commits were mined from git repositories with PyDriller (`curator mine commits`):"
        " cheap git metadata first (files and functions touched), then diffs and the"
        " changed functions' code before and after for commits that pass the filters"
        " recorded in each record's `provenance.filters`."
    ),
    "kernel": (
        "OpenCL kernels were scraped from device-code files and from strings in host code"
        " (`curator mine kernels`), compiled on PoCL by a rejection filter, normalized by"
        " the rewriter, and (when checked) run by the dynamic checker on generated inputs."
    ),
    "ir": (
        "LLVM IR modules were read from `.ll`/`.bc` files or built from C/C++ projects"
        " with clang (`curator mine ir`), parsed and verified with llvmlite; project,"
        " license and compile command are kept in `provenance`."
    ),
}

PREPROCESSING = {
    "commit": (
        "`model_input` is the commit message joined to the diff within a token budget;"
        " messages, diffs and code are kept as mined (untrusted text, not sanitized)."
    ),
    "kernel": (
        "`normalized_source` is the rewritten kernel (macros resolved through a shim when"
        " needed); `features` are static counts plus, once checked, run-time figures."
    ),
    "ir": (
        "Modules are stored as printed text and as bitcode (`bitcode_base64`);"
        " `opcodes` is the instruction histogram and `tokens` a token count of the text."
    ),
}

DEDUP = {
    "commit": "by the changed functions' code (`function_md5`), else the diff (`diff_hash`)",
    "kernel": "by the hash of the normalized source (`normalized_hash`)",
    "ir": "by a structural hash of the module that ignores names and debug info",
}


def _num(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


class _Markdown(str):
    """A cell this module wrote as Markdown (e.g. a Wilson interval's brackets), kept as
    it is; every other text cell is data from the store (set names, sources, labels,
    labelers), shown as written."""


MARKDOWN_SPECIALS = "\\`*[]<>&|"
"""What a table cell escapes with a backslash, so that a name such as ``<b>x</b>``,
``a*b*`` or ``[x](http://...)`` reads as written instead of as HTML, emphasis or a link
(``_`` stays: CommonMark does not emphasise inside a word, and paths hold many)."""


def _md_text(text: str) -> str:
    return "".join("\\" + c if c in MARKDOWN_SPECIALS else c for c in text)


def _code(text: str) -> str:
    """``text`` as a Markdown code span, fenced by more backticks than it holds in a row
    (a set named ``a`b`` stays one span)."""
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    def cell(value: Any) -> str:
        text = str(value).replace("\n", " ")
        return text.replace("|", "\\|") if isinstance(value, _Markdown) else _md_text(text)

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return [*lines, ""]


def _counts_table(title: str, counter: Counter[str]) -> list[str]:
    total = sum(counter.values())
    rows = [
        [name, n, f"{100 * n / total:.1f}%" if total else "-"]
        for name, n in sorted(counter.items())
    ]
    return _table([title, "records", "share"], rows)


def _composition(facts: ReleaseFacts) -> list[str]:
    lines = [
        "## Composition",
        "",
        f"{facts.total} records. One record per line; each kind's fields are documented in"
        " `schema/KIND.schema.json` and in Curator's docs/releases.md.",
        "",
    ]
    for kind in sorted(facts.by_kind):
        lines += [f"### {kind}", "", f"{facts.by_kind[kind]} records.", ""]
        lines += _counts_table("language", facts.by_language[kind])
        lines += _counts_table("label", facts.by_label[kind])
    return lines


def _collection(store: Store, facts: ReleaseFacts) -> list[str]:
    lines = ["## Collection", ""]
    for kind in sorted(facts.by_kind):
        sources = facts.by_source[kind]
        stored = item_counts(store, kind)
        lines += [
            f"### {kind}",
            "",
            COLLECTION[kind],
            "",
            f"The store holds {stored['items']} {kind} items from {stored['sources']} sources;"
            f" this release takes {facts.by_kind[kind]} of them from {len(sources)} sources.",
            "",
        ]
        top = sorted(sources.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_SOURCES]
        if top:
            lines += _table(["source", "records"], [[s, n] for s, n in top])
        if len(sources) > TOP_SOURCES:
            lines += [f"... and {len(sources) - TOP_SOURCES} more sources.", ""]
    return lines


def _preprocessing(store: Store, facts: ReleaseFacts) -> list[str]:
    lines = ["## Preprocessing", ""]
    for kind in sorted(facts.by_kind):
        lines += [f"- **{kind}**: {PREPROCESSING[kind]}"]
        if kind == "kernel":
            filtered = kernel_filter_counts(store)
            verdicts = kernel_verdict_counts(store)
            lines += [
                "  Rejection filter in the store: "
                + ", ".join(f"{k} {v}" for k, v in filtered.items())
                + "; verdicts: "
                + ", ".join(f"{k} {v}" for k, v in verdicts.items())
                + "."
            ]
        if kind == "ir":
            counts = ir_counts(store)
            lines += [
                f"  Inputs: {counts['stored']} stored, {counts['duplicates']} duplicates,"
                f" {counts['rejected']} rejected (unreadable), {counts['filtered']} filtered"
                " (license)."
            ]
    return [*lines, ""]


def _dedup(store: Store, facts: ReleaseFacts) -> list[str]:
    lines = ["## Deduplication", ""]
    for kind in sorted(facts.by_kind):
        found = duplicate_counts(store, kind)
        detail = ", ".join(f"{n} on {m}" for m, n in found.items()) or "none"
        lines.append(
            f"- **{kind}**: deduplicated at mining time {DEDUP[kind]}; duplicates seen and"
            f" left out: {sum(found.values())} ({detail})."
        )
    return [*lines, ""]


def _sets_of(store: Store, facts: ReleaseFacts) -> list[SetRow]:
    named = facts.filters.get("sets")
    return [
        s for s in all_sets(store) if s.kind in facts.by_kind and (not named or s.name in named)
    ]


def _labeling(store: Store, facts: ReleaseFacts) -> list[str]:
    f = facts.filters
    if f.get("labels") == "predicted":
        how = (
            f"Labels are predictions of `{f['labeler']}` (its latest per item)"
            + (
                f" with confidence at least {f['min_confidence']}"
                if f.get("min_confidence") is not None
                else ""
            )
            + "; `confidence` is the labeler's score."
        )
    else:
        how = (
            "Labels are settled human labels: unanimous or majority votes of the annotators,"
            " or an adjudicator's decision on a conflict; `votes` lists the live votes"
            " with annotator ids and `confidence` is the share of annotators' votes that"
            " chose the label. An item in several sets carries the label that the sets"
            " settling it agree on (an export stops when they disagree)."
            + (" Only items with such a label are included." if f.get("labels") else "")
        )
    if f.get("audited_only"):
        how += " Only items drawn into an audit set are included."
    if f.get("sets"):
        named = ", ".join(_code(name) for name in f["sets"])
        which = "the set" if len(f["sets"]) == 1 else "the sets"
        how += f" Only items of {which} {named} are included, labeled as settled there."
    lines = ["## Labeling", "", how, ""]
    for kind in sorted(facts.by_kind):
        lines += _counts_table(f"{kind} label source", facts.by_label_source[kind])
    sets = _sets_of(store, facts)
    if sets:
        rows = []
        for s in sets:
            done = summary(decisions_for_set(store, s))
            rows.append(
                [
                    s.name,
                    s.kind,
                    s.purpose,
                    set_size(store, s.id),
                    s.votes_per_item,
                    done["unanimous"] + done["majority"] + done["adjudicated"],
                    done["conflict"],
                    done["pending"],
                ]
            )
        header = ["set", "kind", "purpose", "items", "votes/item", "settled", "conflicts"]
        lines += _table([*header, "pending"], rows)
    else:
        lines += ["No annotation sets of these kinds in the store.", ""]
    return lines


def _agreement(store: Store, facts: ReleaseFacts) -> list[str]:
    lines = ["## Agreement", ""]
    rows = []
    for s in _sets_of(store, facts):
        with warnings.catch_warnings():
            # alpha is undefined (nan, shown as n/a) when every vote has the same label
            warnings.simplefilter("ignore", RuntimeWarning)
            report = agreement_for_set(store, s)
        if report.items_multi_coded == 0:
            continue
        rows.append(
            [
                s.name,
                report.items_multi_coded,
                len(report.raters),
                _num(report.observed_agreement),
                _num(report.fleiss.kappa),
                _num(report.krippendorff_alpha),
            ]
        )
    if not rows:
        return [*lines, "No set has items labeled by two or more annotators.", ""]
    header = ["set", "items (2+ votes)", "annotators", "observed", "Fleiss kappa", "alpha"]
    return [*lines, f"Skips (`{SKIP}`) are left out.", "", *_table(header, rows)]


def _audits(store: Store, facts: ReleaseFacts) -> list[str]:
    lines = ["## Audit precision", ""]
    rows = []
    for s in _sets_of(store, facts):
        if s.purpose != "audit" or not s.params.get("audit"):
            continue
        report = audit_report(store, s.name)
        p = report.overall
        rows.append(
            [
                s.name,
                report.labeler,
                report.label,
                report.population,
                p.judged,
                _num(p.value),
                _Markdown(f"[{_num(p.low)}, {_num(p.high)}] at {100 * report.confidence:g}%"),
            ]
        )
    if not rows:
        return [*lines, "No precision audit has been drawn for these kinds.", ""]
    header = ["audit", "labeler", "label", "population", "judged", "precision"]
    return [
        *lines,
        "Precision of a labeler's positives, judged by people on a random sample, with its"
        " Wilson score interval.",
        "",
        *_table([*header, "Wilson interval"], rows),
    ]


def _licenses(facts: ReleaseFacts) -> list[str]:
    lines = ["## Licenses", ""]
    for kind in sorted(facts.by_kind):
        if facts.by_license.get(kind):
            lines += [f"{kind}: each record's `license` is its project's, as found on disk.", ""]
            lines += _counts_table("license", facts.by_license[kind])
        else:
            lines += [
                f"{kind}: no license is recorded per record; the code stays under the license"
                " of the repository it comes from (see `source`), which users must check.",
                "",
            ]
    return lines


def _splits(facts: ReleaseFacts) -> list[str]:
    lines = ["## Splits", ""]
    if facts.split is None:
        return [*lines, "No split: each kind is one file.", ""]
    shares = ", ".join(f"{name} {100 * share:.0f}%" for name, share in facts.split.parts)
    lines += [
        f"`{facts.split.text}` (seed {facts.filters.get('seed')}): target shares {shares}."
        " Whole repositories go to one part, so no repository appears in two parts;"
        " the shares are approached, not met exactly.",
        "",
    ]
    for kind in sorted(facts.by_split):
        parts = facts.source_parts.get(kind, {})
        repos = Counter(parts.values())
        rows = [[p, n, repos.get(p, 0)] for p, n in sorted(facts.by_split[kind].items())]
        lines += [f"### {kind}", "", *_table(["part", "records", "repositories"], rows)]
    return lines


def _maintenance(facts: ReleaseFacts) -> list[str]:
    return [
        "## Maintenance",
        "",
        f"Written by Curator {__version__}. A release is never changed in place: a new"
        " export gets a new version. `curator validate DIR` checks every file against"
        " `manifest.json` (schemas, counts, sha256); `curator import release DIR --db"
        " FILE` loads it into a store, and exporting that store with the same options"
        " gives the same data files. The exact export options are in `manifest.json`"
        " under `filters`.",
        "",
    ]


def render_datasheet(store: Store, facts: ReleaseFacts, charts: list[str] | None = None) -> str:
    """The datasheet; ``charts`` are the lines of its charts section, if any."""
    kinds = ", ".join(sorted(facts.by_kind))
    lines = [
        f"# Datasheet: release {facts.version}",
        "",
        f"Kinds: {kinds}. Generated from the Curator store it was exported from.",
        "",
        *_composition(facts),
        *_collection(store, facts),
        *_preprocessing(store, facts),
        *_dedup(store, facts),
        *_labeling(store, facts),
        *_agreement(store, facts),
        *_audits(store, facts),
        *_licenses(facts),
        *_splits(facts),
        *(charts or []),
        *_maintenance(facts),
    ]
    return "\n".join(lines).rstrip("\n") + "\n"
