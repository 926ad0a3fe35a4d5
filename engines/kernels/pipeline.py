"""``curator mine kernels`` and ``curator check kernels``: the drivers.

Mining: sources -> files -> scrape -> rejection filter -> rewrite -> dedup on the
normalised source's hash -> features -> store, in batches, each batch written with its
source's checkpoint (the last file done) in one transaction, so a killed run resumes
after the last file it saved. A run that goes through every file clears that resume
point: the next one reads every file again, and skips before compiling each kernel
whose source is stored already (a changed kernel is stored anew). Re-filtering
(``mine kernels --refilter``): the sources walked and scraped again, and each kernel
stored with the same source run through the filter and rewriter again and written in
place. Checking: stored kernels -> the dynamic checker in the worker child -> verdicts
stored in batches. None of them prints: progress goes to a reporter (the CLI draws it;
a TUI worker thread can pass its own).
"""

from __future__ import annotations

import hashlib
import math
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from engines.commits.gitlog import GitError, run_git
from engines.commits.sources import SourceError, is_url, resolve_source
from engines.kernels.checker import KernelWorker, check_kernel
from engines.kernels.compile import MIN_INSTRUCTIONS, ToolError, rejection_filter
from engines.kernels.features import combined, with_dynamic
from engines.kernels.hostflags import HostFlagIndex, HostFlags
from engines.kernels.payload import DEFAULT_POLICIES, parameter_names
from engines.kernels.rewrite import RewriteError, rewrite, source_hash
from engines.kernels.scrape import (
    Candidate,
    Resolver,
    candidate_keys,
    decode_source,
    is_candidate_file,
    scrape_text,
    tree_resolver,
)
from engines.kernels.shim import apply_shim, shim_for
from engines.kernels.tree import SourceTree, is_inside
from engines.kernels.typesearch import TypeDefinition, TypeIndex
from engines.pathtext import path_text
from engines.reporting import (
    FinishedSource,
    SilentReporter,
    SourceReporter,
    cumulative_counts,
    tally,
)
from store import Store
from store.commits import load_checkpoint, save_checkpoint
from store.kernel_records import KernelCheck, KernelRow, StoredKernel
from store.kernels import (
    RefilterResult,
    save_checks,
    save_kernel_batch,
    save_refiltered,
    stored_kernel_item,
    stored_kernel_state,
)
from store.records import Checkpoint, SaveResult

KIND = "kernel"
BATCH_ROWS = 50
BATCH_SECONDS = 2.0
MAX_FILE_BYTES = 2 * 1024 * 1024


@dataclass
class SourceSummary:
    """What one source contributed in this run."""

    source: str
    files: int = 0
    seen: int = 0
    stored: int = 0
    duplicates: int = 0
    known: int = 0
    filtered: Counter[str] = field(default_factory=Counter)
    unreadable: int = 0
    failed: str | None = None


@dataclass(frozen=True)
class SourceFile:
    rel: str
    path: Path  # where local includes are looked up
    read: Callable[[], bytes]


def _walk(
    spec: str, clone_dir: Path | None
) -> tuple[str, Path, list[SourceFile], SourceTree | None]:
    """The stored source name, the include root, the candidate files in order, and the
    whole tree (every file, for headers and the host's build options; None for one file)."""
    if is_url(spec):
        repo = resolve_source(spec, clone_dir)
        files, tree = _files_at_head(repo.path)
        return path_text(spec), repo.path, files, tree
    path = Path(spec).expanduser()
    if not path.exists():
        raise SourceError("no such file or directory")
    path = path.resolve()
    if path.is_dir() and _is_bare_repository(path):
        # a bare repository's folder holds git's objects, not the files: read HEAD's
        files, tree = _files_at_head(path)
        return path_text(str(path)), path, files, tree
    if path.is_file():
        single = SourceFile(path_text(path.name), path, path.read_bytes)
        return path_text(str(path)), path.parent, [single], None
    files = []
    readers: dict[str, Callable[[], bytes]] = {}
    outside: set[str] = set()
    for file in sorted(path.rglob("*")):
        rel = file.relative_to(path)
        if any(part.startswith(".") for part in rel.parts):
            continue
        if not file.is_file() and not file.is_symlink():  # a dangling link is reported
            continue
        key = path_text(rel.as_posix())
        if file.is_file():
            if is_inside(file, path):
                readers[key] = file.read_bytes
            else:  # a link out of the tree: no header is read through it
                outside.add(key)
        if is_candidate_file(file):
            files.append(SourceFile(path_text(str(rel)), file, file.read_bytes))
    return path_text(str(path)), path, files, SourceTree(readers, outside=frozenset(outside))


def _files_at_head(repo: Path) -> tuple[list[SourceFile], SourceTree]:
    """The candidate files and the whole tree of a git repository's ``HEAD`` commit."""
    try:
        run_git(repo, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    except GitError:
        raise SourceError("a repository without commits: HEAD names none") from None
    try:
        listing = run_git(repo, "ls-tree", "-r", "-z", "--name-only", "HEAD").decode(
            "utf-8", "surrogateescape"
        )
    except GitError as exc:
        raise SourceError(f"cannot list the files at HEAD: {exc}") from exc
    every = sorted(n for n in listing.split("\0") if n)

    def reader(name: str) -> Callable[[], bytes]:
        def read() -> bytes:
            return run_git(repo, "show", f"HEAD:{name}")

        return read

    # the tree's keys are stored text; each reader keeps git's own name for the file
    tree = SourceTree({path_text(n): reader(n) for n in every})
    names = [path_text(n) for n in every if is_candidate_file(Path(n))]
    return [SourceFile(n, repo / n, tree.readers[n]) for n in names], tree


def _is_bare_repository(path: Path) -> bool:
    """Whether ``path`` is the folder of a bare git repository (a mirror, a
    ``clone --bare``), whose files are only in git's objects."""
    try:
        bare, git_dir = (
            run_git(path, "rev-parse", "--is-bare-repository", "--absolute-git-dir")
            .decode("utf-8", "surrogateescape")
            .split("\n")[:2]
        )
    except (GitError, ValueError):
        return False
    return bare == "true" and Path(git_dir).resolve() == path


@dataclass
class SourceContext:
    """Per source: its tree's header search and the host's build options per folder."""

    tree: SourceTree | None
    flags: HostFlagIndex | None = None
    types: TypeIndex | None = None

    def __post_init__(self) -> None:
        if self.tree is not None:
            self.flags = HostFlagIndex(self.tree)
            self.types = TypeIndex(self.tree)

    def type_lookup(self, cand: Candidate) -> Callable[[str], TypeDefinition | None] | None:
        """Where a type ``cand`` names but never defines is looked for (None: nowhere)."""
        types = self.types
        if types is None:
            return None
        return lambda name: types.find(name, cand.file, cand.includes)

    def for_file(self, rel: str) -> tuple[Resolver | None, HostFlags]:
        if self.tree is None or self.flags is None:
            return None, HostFlags()
        flags = self.flags.flags_for(Path(rel).as_posix())
        return tree_resolver(self.tree, flags.include_dirs), flags


def _row(
    source: str,
    key: str,
    cand: Candidate,
    worker: KernelWorker,
    min_instructions: int,
    report: SourceReporter,
    flags: HostFlags | None = None,
    lookup: Callable[[str], TypeDefinition | None] | None = None,
) -> KernelRow:
    host = flags.defines if flags is not None else None
    result = rejection_filter(worker, cand.source, min_instructions, host, lookup)
    if result.missing_type:
        report.problem(f"{cand.file}::{cand.name}: {result.missing_type}")
    normalized: str | None = None
    features: dict[str, Any] = dict(result.features)
    if features:
        features.update(combined(features))
    provenance: dict[str, Any] = {
        "line": cand.line,
        "includes": list(cand.includes),
        "device": worker.device,
    }
    if flags is not None and flags.files:
        provenance["build_flags"] = flags.provenance()
    if result.assumptions:
        provenance["assumed"] = result.assumed()
    if result.refusal is not None:
        provenance["refusal"] = result.refusal
    if result.accepted:
        try:
            normalized = rewrite(result.source).source
        except (RewriteError, ToolError) as exc:
            report.problem(f"{cand.file}::{cand.name}: rewriter failed ({exc}); kept as written")
            provenance["rewrite_error"] = str(exc)
    return KernelRow(
        source=source,
        key=key,
        source_file=cand.file,
        kernel_name=cand.name,
        origin=cand.origin,
        original_source=cand.source,
        normalized_source=normalized,
        normalized_hash=source_hash(normalized or cand.source),
        shim_needed=bool(result.shim_names),
        shim_names=result.shim_names,
        accepted=result.accepted,
        instructions=result.instructions,
        message=result.message,
        verdict=result.verdict,
        features=features,
        provenance=provenance,
    )


_Summary = TypeVar("_Summary", bound=FinishedSource)


def mine_kernels(
    store: Store,
    specs: Sequence[str],
    min_instructions: int = MIN_INSTRUCTIONS,
    reporter: SourceReporter | None = None,
    clone_dir: Path | None = None,
    worker: KernelWorker | None = None,
    batch_rows: int = BATCH_ROWS,
) -> list[SourceSummary]:
    """Mine every source in turn; a failing source is reported and skipped."""
    report = reporter or SilentReporter()

    def mine_one(spec: str, worker: KernelWorker, summary: SourceSummary) -> None:
        _mine_source(store, spec, min_instructions, report, clone_dir, worker, summary, batch_rows)

    return _per_source(specs, report, worker, SourceSummary, mine_one)


def _per_source(
    specs: Sequence[str],
    report: SourceReporter,
    worker: KernelWorker | None,
    new_summary: Callable[[str], _Summary],
    run_one: Callable[[str, KernelWorker, _Summary], None],
) -> list[_Summary]:
    """Each source in turn on one compile worker (this call's own unless one is given,
    closed at the end): a source that fails (no clone, git, the tools, the disk) is
    recorded in its summary, reported, and the next one goes on."""
    own_worker = worker is None
    worker = worker or KernelWorker()
    summaries = []
    try:
        for spec in specs:
            summary = new_summary(spec)
            summaries.append(summary)
            try:
                run_one(spec, worker, summary)
            except (SourceError, GitError, ToolError, OSError) as exc:
                summary.failed = str(exc)
            report.source_finished(summary)
    finally:
        if own_worker:
            worker.close()
    return summaries


def _mine_source(
    store: Store,
    spec: str,
    min_instructions: int,
    report: SourceReporter,
    clone_dir: Path | None,
    worker: KernelWorker,
    summary: SourceSummary,
    batch_rows: int,
) -> None:
    source, root, files, tree = _walk(spec, clone_dir)
    if not files:
        report.problem(f"{source}: no OpenCL (.cl .ocl .clh .opencl) or C/C++ file to read")
    context = SourceContext(tree)
    summary.source = source
    scope = f"min_instructions={min_instructions}"
    checkpoint = load_checkpoint(store, KIND, source, scope)
    base: dict[str, Any] = checkpoint.counters if checkpoint else {}
    # only a run cut short resumes after its last file; after a whole pass (or one saved
    # by a version that did not say), every file is looked at again
    after = checkpoint.last_key if checkpoint and base.get("finished") is False else None
    todo = [f for f in files if after is None or f.rel > after]
    report.source_started(source, len(files), len(files) - len(todo))
    pending: list[KernelRow] = []
    unflushed = 0
    last_file = after
    flushed_at = time.monotonic()

    def checkpoint_for(results: list[SaveResult]) -> Checkpoint:
        tally(summary, results)
        counters = {**_cumulative(base, summary), "finished": last_file is None}
        return Checkpoint(KIND, source, scope, last_file, counters)

    def flush() -> None:
        nonlocal pending, unflushed, flushed_at
        if not unflushed:
            return
        save_kernel_batch(store, pending, checkpoint_for)
        report.advance(source, unflushed)
        pending, unflushed, flushed_at = [], 0, time.monotonic()

    for file in todo:
        summary.files += 1
        unflushed += 1
        last_file = file.rel
        rows = _file_rows(
            source, root, file, worker, min_instructions, report, summary, context, store
        )
        for row in rows:
            pending.append(row)
            if row.verdict:
                summary.filtered[row.provenance.get("refusal", row.verdict)] += 1
        if len(pending) >= batch_rows or time.monotonic() - flushed_at > BATCH_SECONDS:
            flush()
    # every file done: no resume point, so that the next run looks at every file again
    # (a kernel stored with the same source is skipped before it is compiled)
    last_file = None
    if unflushed:
        flush()
    else:
        save_checkpoint(store, checkpoint_for([]))


def _file_rows(
    source: str,
    root: Path,
    file: SourceFile,
    worker: KernelWorker,
    min_instructions: int,
    report: SourceReporter,
    summary: SourceSummary,
    context: SourceContext | None = None,
    store: Store | None = None,
) -> Iterator[KernelRow]:
    scraped = _scrape_file(root, file, report, summary, context)
    if scraped is None:
        return
    candidates, flags, context = scraped
    for cand, key in candidates:
        summary.seen += 1
        stored_key = _key_to_store(store, source, f"{source}::{key}", cand.source)
        if stored_key is None:
            summary.known += 1
            continue
        yield _row(
            source,
            stored_key,
            cand,
            worker,
            min_instructions,
            report,
            flags,
            context.type_lookup(cand),
        )


def _scrape_file(
    root: Path,
    file: SourceFile,
    report: SourceReporter,
    summary: SourceSummary | RefilterSummary,
    context: SourceContext | None,
) -> tuple[list[tuple[Candidate, str]], HostFlags, SourceContext] | None:
    """The kernels of one file with the key each is stored under (within its source),
    the host's build options for it, and the context used; None (after a line naming
    the file) when it cannot be read."""
    try:
        data = file.read()
    except (OSError, GitError) as exc:
        summary.unreadable += 1
        report.problem(f"{file.rel}: cannot read ({getattr(exc, 'strerror', None) or exc})")
        return None
    if len(data) > MAX_FILE_BYTES:
        summary.unreadable += 1
        report.problem(f"{file.rel}: skipped, larger than {MAX_FILE_BYTES // 1024} KiB")
        return None
    if b"\0" in data:
        summary.unreadable += 1
        report.problem(f"{file.rel}: skipped, binary content")
        return None
    text, warning = decode_source(data)
    if warning:
        report.problem(f"{file.rel}: {warning}")
    context = context or SourceContext(None)
    resolver, flags = context.for_file(file.rel)
    scraped = scrape_text(
        text, Path(file.rel).as_posix() if resolver else file.rel, file.path, root, resolver
    )
    for warning in scraped.warnings:
        report.problem(warning)
    return (
        list(zip(scraped.candidates, candidate_keys(scraped.candidates), strict=True)),
        flags,
        context,
    )


def _key_to_store(store: Store | None, source: str, key: str, text: str) -> str | None:
    """The key to store a kernel under, or None when this very source is stored already.
    A kernel whose file changed since it was stored keeps the old item and gets a key of
    its own, ``KEY@`` and the start of its source's SHA-256."""
    if store is None:
        return key
    state = stored_kernel_state(store, key, source, text)
    if state == "same":
        return None
    if state != "other":
        return key
    versioned = _versioned(key, text)
    return None if stored_kernel_state(store, versioned, source, text) else versioned


def _versioned(key: str, text: str) -> str:
    return f"{key}@{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"


_COUNTED = ("files", "seen", "stored", "duplicates", "known", "unreadable")


def _cumulative(base: dict[str, Any], summary: SourceSummary) -> dict[str, Any]:
    return cumulative_counts(base, summary, _COUNTED)


@dataclass
class RefilterSummary:
    """What re-filtering the stored kernels of one source found (and, unless a dry
    run, wrote): each count is of stored kernels the filter saw again."""

    source: str
    files: int = 0
    seen: int = 0  # kernels scraped from the files
    not_stored: int = 0  # scraped, but no kernel with this source is stored: mine them
    skipped: int = 0  # accepted before and left alone (without ``everything``)
    refiltered: int = 0
    now_accepted: int = 0  # refused before, accepted now
    still_accepted: int = 0
    still_refused: Counter[str] = field(default_factory=Counter)  # by reason
    now_refused: Counter[str] = field(default_factory=Counter)  # accepted before; by reason
    merged: int = 0  # now repeat another kernel: linked as its duplicate
    kept: list[str] = field(default_factory=list)  # would be merged but have votes etc.
    unchanged: int = 0  # the filter gave what is stored already
    gone: int = 0  # deleted or changed in the store meanwhile
    unreadable: int = 0
    failed: str | None = None


def refilter_kernels(
    store: Store,
    specs: Sequence[str],
    min_instructions: int = MIN_INSTRUCTIONS,
    reporter: SourceReporter | None = None,
    clone_dir: Path | None = None,
    worker: KernelWorker | None = None,
    everything: bool = False,
    dry_run: bool = False,
    batch_rows: int = BATCH_ROWS,
) -> list[RefilterSummary]:
    """Run the rejection filter and the rewriter again on the stored kernels found in
    each source (the tree is needed: a type a kernel uses is looked up in its headers,
    and the host's build options are read there), and write what they give now.

    Only kernels stored with this very source are seen again (a kernel whose file
    changed since is new: ``mine_kernels`` stores it), refused ones only unless
    ``everything``. Writes go in batches, each one transaction
    (:func:`store.kernels.save_refiltered`); ``dry_run`` works out every batch the same
    way and rolls it back."""
    report = reporter or SilentReporter()

    def refilter_one(spec: str, worker: KernelWorker, summary: RefilterSummary) -> None:
        _refilter_source(
            store,
            spec,
            min_instructions,
            report,
            clone_dir,
            worker,
            summary,
            everything,
            dry_run,
            batch_rows,
        )

    return _per_source(specs, report, worker, RefilterSummary, refilter_one)


def _refilter_source(
    store: Store,
    spec: str,
    min_instructions: int,
    report: SourceReporter,
    clone_dir: Path | None,
    worker: KernelWorker,
    summary: RefilterSummary,
    everything: bool,
    dry_run: bool,
    batch_rows: int,
) -> None:
    source, root, files, tree = _walk(spec, clone_dir)
    context = SourceContext(tree)
    summary.source = source
    report.source_started(source, len(files), 0)
    pending: list[tuple[int, bool, KernelRow]] = []
    unflushed = 0
    flushed_at = time.monotonic()

    def flush() -> None:
        nonlocal pending, unflushed, flushed_at
        if pending:
            results = save_refiltered(store, [(i, r) for i, _, r in pending], dry_run)
            for (_, was_accepted, row), result in zip(pending, results, strict=True):
                _count_refiltered(summary, was_accepted, row, result)
        report.advance(source, unflushed)
        pending, unflushed, flushed_at = [], 0, time.monotonic()

    for file in files:
        summary.files += 1
        unflushed += 1
        scraped = _scrape_file(root, file, report, summary, context)
        for cand, key in scraped[0] if scraped else []:
            summary.seen += 1
            full = f"{source}::{key}"
            stored_key, found = full, stored_kernel_item(store, full, cand.source)
            if found is None:
                stored_key = _versioned(full, cand.source)
                found = stored_kernel_item(store, stored_key, cand.source)
            if found is None:
                summary.not_stored += 1
                continue
            item_id, was_accepted = found
            if was_accepted and not everything:
                summary.skipped += 1
                continue
            row = _row(
                source,
                stored_key,
                cand,
                worker,
                min_instructions,
                report,
                scraped[1] if scraped else None,
                context.type_lookup(cand),
            )
            pending.append((item_id, was_accepted, row))
        if len(pending) >= batch_rows or time.monotonic() - flushed_at > BATCH_SECONDS:
            flush()
    flush()


def _count_refiltered(
    summary: RefilterSummary, was_accepted: bool, row: KernelRow, result: RefilterResult
) -> None:
    if result.status == "gone":
        summary.gone += 1
        return
    summary.refiltered += 1
    reason = str(row.provenance.get("refusal", row.verdict))
    if row.accepted:
        if was_accepted:
            summary.still_accepted += 1
        else:
            summary.now_accepted += 1
    elif was_accepted:
        summary.now_refused[reason] += 1
    else:
        summary.still_refused[reason] += 1
    if result.status == "unchanged":
        summary.unchanged += 1
    elif result.status == "merged":
        summary.merged += 1
    elif result.status == "kept":
        summary.kept.append(
            f"kernel item #{result.item_id} ({row.source_file}::{row.kernel_name}) now repeats"
            f" item #{result.into} but {result.why}: kept apart (merge it by hand)"
        )


@dataclass(frozen=True)
class CheckSettings:
    """How ``check kernels`` runs each kernel; a timeout must be a positive number of
    seconds (NaN once passed a range check and called saxpy a timeout)."""

    global_size: int = 1024
    local_size: int = 32
    timeout: float = 5.0
    policies: tuple[str, ...] = DEFAULT_POLICIES

    def __post_init__(self) -> None:
        if not (math.isfinite(self.timeout) and self.timeout > 0):
            raise ValueError(f"timeout must be a positive number of seconds, not {self.timeout}")


def check_one(
    worker: KernelWorker,
    kernel: StoredKernel,
    settings: CheckSettings,
    on_stage: Callable[[str, float], None] | None = None,
) -> KernelCheck:
    """Check one stored kernel: its normalised source when there is one (the shim is
    already inlined there), else the source that passed the filter."""
    if not kernel.accepted:
        details = {"skipped": "refused by the rejection filter"}
        return KernelCheck(
            kernel.item_id, kernel.verdict or "compile-error", details, kernel.features
        )
    role_names = None
    if kernel.normalized_source:
        source, name = kernel.normalized_source, None
        # roles come from the names as written, not the rewriter's a, b, c...
        role_names = parameter_names(kernel.original_source, kernel.kernel_name)
    else:
        source = kernel.original_source
        if kernel.prelude:
            source = kernel.prelude + source
        elif kernel.shim_needed:
            source = apply_shim(source, shim_for(source)[1])
        name = kernel.kernel_name
    outcome = check_kernel(
        worker,
        source,
        name,
        settings.global_size,
        settings.local_size,
        settings.timeout,
        on_stage=on_stage,
        policies=settings.policies,
        role_names=role_names,
    )
    features = dict(kernel.features)
    if "transfer_bytes" in outcome.details:
        features = with_dynamic(
            features, outcome.details["transfer_bytes"], outcome.details["local_size"]
        )
    return KernelCheck(kernel.item_id, outcome.verdict, outcome.details, features)


def check_kernels(
    store: Store,
    kernels: Sequence[StoredKernel],
    settings: CheckSettings,
    progress: Callable[[KernelCheck, StoredKernel], None] | None = None,
    worker: KernelWorker | None = None,
    batch_rows: int = 20,
    problem: Callable[[str], None] | None = None,
) -> list[KernelCheck]:
    """Check kernels one after another in the worker; results saved in batches. With
    ``problem``, a kernel whose check fails inside Curator (not inside the kernel: that
    is a verdict) is named there, left unchecked, and the run goes on."""
    own_worker = worker is None
    worker = worker or KernelWorker()
    results: list[KernelCheck] = []
    pending: list[KernelCheck] = []
    flushed_at = time.monotonic()
    try:
        for kernel in kernels:
            try:
                result = check_one(worker, kernel, settings)
            except Exception as exc:
                if problem is None:
                    raise
                problem(
                    f"item #{kernel.item_id} ({kernel.source_file}: {kernel.kernel_name}): not"
                    f" checked: {type(exc).__name__}: {exc}"
                )
                continue
            results.append(result)
            if kernel.accepted:
                pending.append(result)
            if progress is not None:
                progress(result, kernel)
            if len(pending) >= batch_rows or time.monotonic() - flushed_at > BATCH_SECONDS:
                save_checks(store, pending)
                pending, flushed_at = [], time.monotonic()
    finally:
        if pending:
            save_checks(store, pending)
        if own_worker:
            worker.close()
    return results
