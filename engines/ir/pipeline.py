"""``curator mine ir``: IR files or a source tree in, deduplicated modules stored.

For every input: find its project and license (``--permissive-only`` drops the
project's files before anything is read or compiled), skip it if the same bytes under
the same command were stored before, compile it (``--build``, several at once), parse
and verify it with llvmlite, hash it, count it, and hand it to the store in batches,
one transaction each. A file LLVM or clang cannot handle is recorded as rejected with
its reason and the run goes on. The reporter receives progress and problems; nothing
here prints, so a TUI can run this from a worker thread.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from engines.ir.build import (
    COMPILE_TIMEOUT_S,
    DEFAULT_FLAGS,
    CompileError,
    command_text,
    compile_command,
    compile_unit,
    find_translation_units,
    language_of_unit,
    resolve_compiler,
    tree_includes,
)
from engines.ir.ingest import (
    DEFAULT_MAX_BYTES,
    IRReadError,
    expand_paths,
    input_format_of,
    language_of_source,
    load_module,
    read_input,
)
from engines.ir.lexer import entities
from engines.ir.licenses import is_permissive
from engines.ir.provenance import Project, ProjectFinder, relative_to_project
from engines.ir.stats import module_stats
from engines.ir.structural_hash import structural_hash
from engines.pathtext import path_text
from store import Store
from store.ir import IRInputRow, IRModuleRow, is_done, save_ir_batch

BATCH_ROWS = 100
BATCH_SECONDS = 2.0


@dataclass(frozen=True)
class IROptions:
    """How a run reads, builds and filters its inputs."""

    permissive_only: bool = False
    cc: str = "clang"
    flags: tuple[str, ...] = DEFAULT_FLAGS
    jobs: int = max(1, os.cpu_count() or 1)
    max_bytes: int = DEFAULT_MAX_BYTES
    compile_timeout_s: float = COMPILE_TIMEOUT_S


@dataclass(frozen=True)
class Rejection:
    """One input that produced no module, and why."""

    path: str
    reason: str
    message: str


@dataclass
class IRRunSummary:
    """What one run did; ``rejected`` and ``filtered`` count by reason."""

    seen: int = 0
    stored: int = 0
    duplicates: int = 0
    known: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    filtered: Counter[str] = field(default_factory=Counter)
    missing: list[str] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        """Some input could not be turned into a module (or did not exist)."""
        return bool(self.missing or self.rejected)


class IRReporter(Protocol):
    """Where the pipeline reports progress; the CLI draws it with rich."""

    def started(self, total: int) -> None: ...

    def advance(self, count: int) -> None: ...

    def problem(self, text: str) -> None: ...


class SilentReporter:
    """Collects problems and draws nothing."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def started(self, total: int) -> None:
        pass

    def advance(self, count: int) -> None:
        pass

    def problem(self, text: str) -> None:
        self.problems.append(text)


@dataclass(frozen=True)
class _Input:
    """One file to turn into a module: an IR file, or a translation unit to compile."""

    file: Path
    project: Project
    path: str  # inside the project
    sha256: str
    language: str | None
    command: tuple[str, ...] | None = None
    cwd: Path | None = None

    @property
    def command_line(self) -> str | None:
        """The command as stored (a file name that is not UTF-8 as ``\\xNN``)."""
        return None if self.command is None else path_text(command_text(self.command))


def _sha256(path: Path) -> str:
    """The file's SHA-256; OSError for anything but a regular file (reading a FIFO
    named ``x.ll`` or ``x.c`` would wait forever for a writer)."""
    if not stat.S_ISREG(path.stat().st_mode):
        raise OSError(errno.EINVAL, "not a regular file")
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


class _Run:
    def __init__(
        self, store: Store, options: IROptions, reporter: IRReporter, batch_rows: int
    ) -> None:
        self.store = store
        self.options = options
        self.report = reporter
        self.batch_rows = batch_rows
        self.summary = IRRunSummary()
        self.finder = ProjectFinder()
        self.pending: list[IRModuleRow | IRInputRow] = []
        self.unflushed = 0
        self.flushed_at = time.monotonic()

    # -- bookkeeping -------------------------------------------------------------

    def flush(self) -> None:
        if not self.unflushed:
            return
        results = save_ir_batch(self.store, self.pending)
        done = self.unflushed
        self.pending, self.unflushed = [], 0  # saved: never written twice
        self.flushed_at = time.monotonic()
        for result in results:
            if result.status == "stored":
                self.summary.stored += 1
            elif result.status == "duplicate":
                self.summary.duplicates += 1
            elif result.status == "known":  # saved meanwhile by another run
                self.summary.known += 1
        self.report.advance(done)

    def done_one(self, row: IRModuleRow | IRInputRow | None) -> None:
        if row is not None:
            self.pending.append(row)
        self.unflushed += 1
        if (
            len(self.pending) >= self.batch_rows
            or time.monotonic() - self.flushed_at > BATCH_SECONDS
        ):
            self.flush()

    def reject(self, item: _Input, reason: str, message: str) -> None:
        self.summary.rejected[reason] += 1
        shown = path_text(str(item.file))
        self.summary.rejections.append(Rejection(shown, reason, message))
        self.report.problem(f"{shown}: {reason}: {message}")
        self.done_one(
            IRInputRow(
                source=item.project.source,
                path=item.path,
                input_sha256=item.sha256,
                compile_command=item.command_line,
                status="rejected",
                reason=reason,
                message=message,
                language=item.language,
                license=item.project.license,
            )
        )

    # -- stages ------------------------------------------------------------------

    def admit(self, item: _Input) -> bool:
        """License filter and resume check; True when the input must be processed."""
        self.summary.seen += 1
        project = item.project
        if self.options.permissive_only and not is_permissive(project.license):
            reason = f"license:{project.license}"
            self.summary.filtered[reason] += 1
            self.done_one(
                IRInputRow(
                    source=project.source,
                    path=item.path,
                    input_sha256=item.sha256,
                    compile_command=item.command_line,
                    status="filtered",
                    reason=reason,
                    message=f"{project.name} is licensed {project.license}",
                    language=item.language,
                    license=project.license,
                )
            )
            return False
        if is_done(self.store, project.source, item.path, item.command_line, item.sha256):
            self.summary.known += 1
            self.done_one(None)
            return False
        return True

    def module_row(self, item: _Input, data: bytes, input_format: str | None) -> None:
        try:
            loaded = load_module(data, input_format)
        except IRReadError as exc:
            self.reject(item, exc.reason, exc.message)
            return
        if loaded.latin1_lines:
            numbers = loaded.latin1_lines
            where = ", ".join(map(str, numbers[:5])) + (", …" if len(numbers) > 5 else "")
            self.report.problem(
                f"{path_text(str(item.file))}: line{'s' if len(numbers) > 1 else ''} {where}:"
                " comment bytes that are not UTF-8 were read as Latin-1"
            )
        ents = list(entities(loaded.printed))
        stats = module_stats(loaded.printed, loaded.text, loaded.bitcode, ents)
        language = item.language or language_of_source(loaded.source_file)
        project = item.project
        provenance = {
            "project": project.name,
            "root": path_text(str(project.root)),
            "url": project.url,
            "git_commit": project.git_commit,
            "path": item.path,
            "input": "build" if item.command else loaded.input_format,
            "source_file": loaded.source_file,
            "license": project.license,
            "license_files": list(project.license_files),
        }
        if item.command:
            provenance["compile_command"] = item.command_line
            provenance["directory"] = path_text(str(item.cwd))
        self.done_one(
            IRModuleRow(
                source=project.source,
                path=item.path,
                language=language,
                structural_hash=structural_hash(loaded.printed, ents),
                input_sha256=item.sha256,
                input_format="build" if item.command else loaded.input_format,
                compile_command=item.command_line,
                project=project.name,
                license=project.license,
                text=loaded.text,
                bitcode=loaded.bitcode,
                text_bytes=stats.text_bytes,
                bitcode_bytes=stats.bitcode_bytes,
                tokens=stats.tokens,
                functions=stats.functions,
                declarations=stats.declarations,
                globals=stats.globals,
                basic_blocks=stats.basic_blocks,
                instructions=stats.instructions,
                opcodes=stats.opcodes,
                provenance=provenance,
            )
        )

    # -- sources -----------------------------------------------------------------

    def _make_input(
        self,
        file: Path,
        fallback: Path,
        language: str | None,
        command: tuple[str, ...] | None = None,
        cwd: Path | None = None,
    ) -> _Input | None:
        project = self.finder.project_of(file, fallback)
        try:
            sha = _sha256(file)
        except OSError as exc:
            self.summary.seen += 1
            reason, message = "unreadable", exc.strerror or str(exc)
            self.summary.rejected[reason] += 1
            shown = path_text(str(file))
            self.summary.rejections.append(Rejection(shown, reason, message))
            self.report.problem(f"{shown}: {reason}: {message}")
            self.done_one(None)
            return None
        return _Input(
            file=file,
            project=project,
            path=path_text(relative_to_project(file, project)),
            sha256=sha,
            language=language,
            command=command,
            cwd=cwd,
        )

    def ingest(self, files: Sequence[tuple[Path, Path]]) -> None:
        for file, base in files:
            item = self._make_input(file, base, language=None)
            if item is None or not self.admit(item):
                continue
            try:
                data = read_input(file, self.options.max_bytes)
            except IRReadError as exc:
                self.reject(item, exc.reason, exc.message)
                continue
            self.module_row(item, data, input_format_of(file))

    def build(self, src_dir: Path, units: Sequence[Path]) -> None:
        includes = tree_includes(src_dir)

        def admitted() -> Iterator[_Input]:
            for unit in units:
                relative = unit.relative_to(src_dir).as_posix()
                argv = compile_command(self.options.cc, self.options.flags, relative, includes)
                item = self._make_input(
                    unit,
                    src_dir,
                    language=language_of_unit(unit),
                    command=tuple(argv),
                    cwd=src_dir,
                )
                if item is not None and self.admit(item):
                    yield item

        def compiled(item: _Input) -> tuple[_Input, bytes | CompileError]:
            assert item.command is not None and item.cwd is not None
            try:
                return item, compile_unit(item.command, item.cwd, self.options.compile_timeout_s)
            except CompileError as exc:
                return item, exc

        pool = ThreadPoolExecutor(max_workers=self.options.jobs)
        try:
            for item, result in _ordered_map(pool, compiled, admitted(), self.options.jobs * 2):
                if isinstance(result, CompileError):
                    self.reject(item, result.reason, result.message)
                else:
                    self.module_row(item, result, "bc")
        finally:
            # on Ctrl-C, compiles not yet started are dropped; running ones finish
            pool.shutdown(wait=True, cancel_futures=True)


def _ordered_map(
    pool: ThreadPoolExecutor,
    fn: Callable[[_Input], tuple[_Input, bytes | CompileError]],
    items: Iterator[_Input],
    window: int,
) -> Iterator[tuple[_Input, bytes | CompileError]]:
    """``pool.map`` that keeps at most ``window`` calls in flight (inputs stay lazy)."""
    pending = []
    for item in items:
        pending.append(pool.submit(fn, item))
        if len(pending) >= window:
            yield pending.pop(0).result()
    while pending:
        yield pending.pop(0).result()


def _bare(folder: Path) -> str:
    """A hint when ``folder`` looks like a bare git repository (a mirror), whose files
    are only in git's objects."""
    if (folder / "HEAD").is_file() and (folder / "objects").is_dir():
        return " (a bare git repository holds no files: clone it and name the clone)"
    return ""


def mine_ir(
    store: Store,
    paths: Sequence[Path] = (),
    build: Path | Sequence[Path] | None = None,
    options: IROptions | None = None,
    reporter: IRReporter | None = None,
    batch_rows: int = BATCH_ROWS,
) -> IRRunSummary:
    """Ingest IR files and folders, and/or build source trees (one folder or several);
    returns the run's summary.

    Raises :class:`engines.ir.build.CompilerNotFound` before doing anything when
    ``build`` is given and the compiler is missing.
    """
    opts = options or IROptions()
    report = reporter or SilentReporter()
    run = _Run(store, opts, report, batch_rows)
    builds = [build] if isinstance(build, Path) else list(build or ())
    if builds:
        resolve_compiler(opts.cc)
    files, missing = expand_paths(paths)
    for path in missing:
        run.summary.missing.append(path_text(str(path)))
        report.problem(f"{path_text(str(path))}: no such file or folder")
    for path in paths:
        folder = path.absolute()
        if folder.is_dir() and not any(f.is_relative_to(folder) for f, _ in files):
            report.problem(
                f"{path_text(str(path))}: no .ll or .bc file in this folder{_bare(folder)}"
            )
    trees: list[tuple[Path, list[Path]]] = []
    for folder in builds:
        src_dir = folder.absolute()
        if not src_dir.is_dir():
            run.summary.missing.append(path_text(str(folder)))
            report.problem(f"{path_text(str(folder))}: not a folder")
            continue
        units = list(find_translation_units(src_dir))
        if units:
            trees.append((src_dir, units))
        else:
            report.problem(
                f"{path_text(str(folder))}: no C or C++ source file to build"
                f" in this folder{_bare(src_dir)}"
            )
    report.started(len(files) + sum(len(units) for _, units in trees))
    try:
        run.ingest(files)
        for src_dir, units in trees:
            run.build(src_dir, units)
    finally:
        run.flush()
    return run.summary
